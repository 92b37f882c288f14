/**
 * The dev cluster the local platform runs against: CRDs from `deploy/crds`, the persona RBAC from core's table,
 * the platform CR with what it references, demo workloads and remediation objects, and one ServiceAccount token
 * per service (TokenReview accepts them; each service gets a kubeconfig carrying its own).
 */
import type { DevKube } from "@kubemend/devkit/kube/index"
import { devkitRbacSpec, renderRbac } from "@kubemend/core/Personas"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { analyses, approvals, remediations, workloads } from "./Demo.ts"
import { apiGroup, namespace, toolPrefix } from "./Platform.ts"

export const seedCluster = (kube: DevKube, root: string, platform: ReadonlyArray<unknown>) =>
  Effect.promise(async () => {
    const crdDir = Path.join(root, "deploy", "crds")
    for (const file of Fs.readdirSync(crdDir).filter((f) => f.endsWith(".yaml")).sort()) {
      await kube.seedYaml(Fs.readFileSync(Path.join(crdDir, file), "utf8"))
    }
    const rbac = renderRbac(devkitRbacSpec({ apiGroup, toolPrefix }))
    const now = new Date()
    await kube.seed([
      ...rbac.clusterRoles.map((r) => ({ ...r })),
      ...rbac.clusterRoleBindings.map((b) => ({ ...b })),
      ...(platform as Array<Record<string, unknown>>),
      ...workloads(apiGroup),
      ...[...remediations(apiGroup, now), ...analyses(apiGroup, now), ...approvals(apiGroup, now)].map((o) => ({
        ...o,
        metadata: { ...o.metadata, namespace }
      }))
    ] as never)
  })

export interface ServiceIdentity {
  readonly token: string
  readonly tokenFile: string
  readonly kubeconfigFile: string
}

/** Registers `kubemend-<svc>` in the controller namespace and writes its token and kubeconfig under `.local/`. */
export const serviceIdentity = (kube: DevKube, dir: string, service: string) =>
  Effect.sync((): ServiceIdentity => {
    const token = kube.registerServiceAccountToken(namespace, `kubemend-${service}`)
    const tokenFile = Path.join(dir, `${service}.token`)
    const kubeconfigFile = Path.join(dir, `${service}.kubeconfig`)
    Fs.writeFileSync(tokenFile, token, { mode: 0o600 })
    Fs.writeFileSync(kubeconfigFile, kube.kubeConfig({ token, namespace }), { mode: 0o600 })
    return { token, tokenFile, kubeconfigFile }
  })
