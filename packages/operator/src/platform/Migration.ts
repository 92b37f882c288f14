/**
 * The storage schema migration: a Job running the storage service's `migrate` command with the storage config and
 * database Secret. Its hash covers what decides whether the schema can differ (the storage image, which carries
 * the migrations, and the database target), so an unchanged hash skips the Job.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { createHash } from "node:crypto"
import { configKey, ownerLabels, ownerReference, paths, workloadName } from "./Names.ts"
import { serviceCommand } from "./ServiceCommand.ts"

export const migrateCommand = serviceCommand("storage", "migrate")

export const migrationHash = (spec: PlatformSpec, image: string): string =>
  createHash("sha256")
    .update(JSON.stringify({
      image: spec.image.overrides?.["storage"] ?? image,
      command: migrateCommand,
      host: spec.postgresql.host,
      port: spec.postgresql.port,
      secret: spec.postgresql.secretName,
      sslMode: spec.postgresql.sslMode ?? null
    }))
    .digest("hex")
    .slice(0, 16)

/** Job names carry the hash: a Job's pod template is immutable, a new target gets a new Job. */
export const migrationJobName = (hash: string) => `kubemend-migrate-${hash.slice(0, 10)}`

export type JobState = "Running" | "Succeeded" | "Failed"

export const jobState = (job: KubeObject): JobState => {
  const status = (job.status ?? {}) as { succeeded?: number; conditions?: ReadonlyArray<{ type?: string; status?: string }> }
  const condition = (t: string) => (status.conditions ?? []).some((c) => c.type === t && c.status === "True")
  if ((status.succeeded ?? 0) > 0 || condition("Complete")) return "Succeeded"
  if (condition("Failed")) return "Failed"
  return "Running"
}

export const renderMigrationJob = (
  spec: PlatformSpec,
  ctx: { readonly cr: KubeObject; readonly apiGroup: string; readonly image: string; readonly hash: string }
): KubeObject => {
  const ns = ctx.cr.metadata.namespace ?? ""
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: migrationJobName(ctx.hash),
      namespace: ns,
      labels: { ...ownerLabels(ctx.apiGroup, ns, ctx.cr.metadata.name), "app.kubernetes.io/component": "migration" },
      ownerReferences: [ownerReference(ctx.cr)]
    },
    spec: {
      backoffLimit: 3,
      ttlSecondsAfterFinished: 86400,
      template: {
        metadata: { labels: { "app.kubernetes.io/component": "migration", "app.kubernetes.io/instance": ctx.cr.metadata.name } },
        spec: {
          restartPolicy: "Never",
          serviceAccountName: workloadName("storage"),
          securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } },
          ...(spec.image.pullSecrets === undefined ? {} : { imagePullSecrets: spec.image.pullSecrets.map((s) => ({ name: s.name })) }),
          containers: [{
            name: "migrate",
            image: spec.image.overrides?.["storage"] ?? ctx.image,
            imagePullPolicy: spec.image.pullPolicy,
            command: [...migrateCommand],
            env: [{ name: "CONFIG_FILE", value: `${paths.configDir}/${configKey}` }],
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
            volumeMounts: [
              { name: "config", mountPath: paths.configDir, readOnly: true },
              { name: "postgresql", mountPath: paths.postgresDir, readOnly: true },
              { name: "tmp", mountPath: "/tmp" },
              { name: "data", mountPath: paths.dataDir }
            ]
          }],
          volumes: [
            { name: "config", configMap: { name: workloadName("storage") } },
            { name: "postgresql", secret: { secretName: spec.postgresql.secretName } },
            { name: "tmp", emptyDir: {} },
            { name: "data", emptyDir: {} }
          ]
        }
      }
    }
  }
}
