/**
 * The catalog controller end to end: `kubectl apply -f` of a multi-document file (runner ServiceAccount, ClusterRole,
 * binding, ActionType, RemediationWorkflow) against the dev API server with the generated CRDs, the controller as the
 * operator's ServiceAccount, and the real storage service (embedded PostgreSQL) holding the catalog.
 */
import { describe, expect, it } from "@effect/vitest"
import { DevKube } from "@kubemend/devkit/kube/index"
import type { KubeObject } from "@kubemend/core/K8s"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Storage } from "@kubemend/core/Storage"
import { Redacted } from "effect"
import { Duration, Effect, Layer, Logger, LogLevel, Schedule } from "effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { grantStorageClient, startStorage } from "../../gateway/test/support/StorageProcess.ts"
import { CatalogControllerLive } from "../src/catalog/CatalogController.ts"
import * as ClusterLive from "../src/runtime/Cluster/Live.ts"
import { ControllerMetrics } from "../src/runtime/ControllerMetrics.ts"
import { renderCrds } from "../src/Crds.ts"
import { LifecycleConfig } from "../src/remediation/LifecycleConfig.ts"

const apiGroup = "kubemend.io"
const namespace = "kubemend-system"

const workflowFile = (options: { version: string; what: string }) => `
apiVersion: v1
kind: ServiceAccount
metadata:
  name: rollback-runner
  namespace: kubemend-workflows
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: rollback-runner
rules:
  - apiGroups: ["apps"]
    resources: ["deployments"]
    verbs: ["get", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: rollback-runner
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rollback-runner }
subjects:
  - { kind: ServiceAccount, name: rollback-runner, namespace: kubemend-workflows }
---
apiVersion: ${apiGroup}/v1alpha1
kind: ActionType
metadata:
  name: rollback-deployment
  namespace: ${namespace}
spec:
  name: RollbackDeployment
  description:
    what: Rolls a Deployment back to its previous revision
    whenToUse: A rollout broke the workload
---
apiVersion: ${apiGroup}/v1alpha1
kind: RemediationWorkflow
metadata:
  name: rollback-deployment
  namespace: ${namespace}
spec:
  version: "${options.version}"
  actionType: RollbackDeployment
  description:
    what: ${options.what}
    whenToUse: CrashLoopBackOff right after a rollout
  labels:
    severity: [critical]
    component: [deployment]
    environment: ["*"]
    priority: "*"
  customLabels:
    team: payments
  execution:
    engine: job
    bundle: ghcr.io/kubemend/rollback:1.0
    serviceAccountName: rollback-runner
  parameters:
    - { name: TARGET_DEPLOYMENT, type: string, required: true, description: the Deployment to roll back }
`

const kubectl = (kubeconfig: string, ...args: ReadonlyArray<string>) =>
  Effect.async<string, Error>((resume) => {
    execFile("kubectl", ["--kubeconfig", kubeconfig, ...args], (error, stdout, stderr) =>
      resume(error === null ? Effect.succeed(stdout) : Effect.fail(new Error(`kubectl ${args.join(" ")}: ${stderr || error.message}`))))
  })

describe("catalog controller", () => {
  it.live(
    "kubectl apply registers the workflow; changed content under the same version is refused; delete disables",
    () =>
      Effect.scoped(Effect.gen(function* () {
        const kube = yield* DevKube.scoped({ apiGroup })
        kube.seed([
          { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
          { apiVersion: "v1", kind: "Namespace", metadata: { name: "kubemend-workflows" } },
          ...renderCrds(apiGroup)
        ])
        // Storage reuses an access answer, the refusal below too, for rbac.sarCacheTTL: short here.
        const storage = yield* startStorage(kube, namespace, { rbac: { sarCacheTTL: "1s" } })
        const token = kube.registerServiceAccountToken("kubemend-operator", "kubemend-operator")
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-catalog-"))),
          (d) => Effect.sync(() => Fs.rmSync(d, { recursive: true, force: true }))
        )
        const adminConfig = Path.join(dir, "admin.kubeconfig")
        Fs.writeFileSync(adminConfig, kube.kubeConfig())
        const file = Path.join(dir, "workflow.yaml")

        yield* Logger.withMinimumLogLevel(
          Layer.build(CatalogControllerLive.pipe(
            Layer.provide(
              Layer.mergeAll(
                K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig({ token }) }),
                ClusterLive.layer({ apiGroup, kubeconfig: kube.kubeConfig({ token }) }),
                LifecycleConfig.layer({ backoffBase: Duration.millis(50), backoffMax: Duration.seconds(1) }),
                ControllerMetrics.Default,
                Storage.layer({ baseUrl: storage.url, token: Redacted.make(token) })
              ).pipe(Layer.orDie)
            )
          )),
          LogLevel.Warning
        )
        const catalog = yield* Effect.provide(Storage, Storage.layer({ baseUrl: storage.url, token: Redacted.make(token) }))

        const rw = () => kube.get(`${apiGroup}/v1alpha1`, "RemediationWorkflow", "rollback-deployment", namespace) as KubeObject | undefined
        const statusOf = () => (rw()?.status ?? {}) as Record<string, any>
        const registered = (c: any) => (c.conditions ?? []).find((x: any) => x.type === "Registered")
        const until = (what: string, done: () => boolean, within: Duration.DurationInput = "20 seconds") =>
          Effect.sync(done).pipe(
            Effect.filterOrFail((ok) => ok, () => new Error(`timed out waiting for ${what}: ${JSON.stringify(rw()?.status)}`)),
            Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(within)))
          )

        // 1. One file, applied as a platform user would.
        Fs.writeFileSync(file, workflowFile({ version: "1.0.0", what: "Rolls back the Deployment" }))
        yield* kubectl(adminConfig, "apply", "-f", file)
        // Before the operator's storage-client grant, storage refuses it, and the resource says so.
        yield* until("the refusal by storage", () => registered(statusOf())?.reason === "CatalogRefused")
        expect(registered(statusOf())).toMatchObject({ status: "False", message: expect.stringContaining("may not POST /api/v1/") })
        grantStorageClient(kube, "kubemend-operator", "kubemend-operator")
        yield* until("registration", () => registered(statusOf())?.status === "True")
        const first = statusOf()
        expect(first).toMatchObject({
          catalogStatus: "Active",
          workflowId: expect.stringMatching(/^[0-9a-f-]{36}$/),
          contentHash: expect.stringMatching(/^[0-9a-f]{64}$/)
        })
        expect(rw()!.metadata.finalizers).toContain(`${apiGroup}/catalog`)
        const entry = yield* catalog.getWorkflow(first["workflowId"])
        expect(entry).toMatchObject({
          workflowName: "rollback-deployment",
          version: "1.0.0",
          status: "Active",
          contentHash: first["contentHash"],
          customLabels: { team: ["payments"] },
          serviceAccountName: "rollback-runner"
        })
        const at = kube.get(`${apiGroup}/v1alpha1`, "ActionType", "rollback-deployment", namespace)!
        expect(at.status).toMatchObject({ registered: true, catalogStatus: "Active" })
        expect(kube.get("v1", "ServiceAccount", "rollback-runner", "kubemend-workflows")).toBeDefined()

        // 2. Changed content, same version: refused in status, the registered entry stays.
        Fs.writeFileSync(file, workflowFile({ version: "1.0.0", what: "Rolls back the Deployment twice" }))
        yield* kubectl(adminConfig, "apply", "-f", file)
        yield* until("the refusal", () => registered(statusOf())?.reason === "ContentChangedWithoutVersionBump")
        expect(registered(statusOf())).toMatchObject({ status: "False", message: expect.stringContaining("set a new spec.version") })
        expect(statusOf()["workflowId"]).toBe(first["workflowId"])
        expect((yield* catalog.getWorkflow(first["workflowId"])).description.what).toBe("Rolls back the Deployment")

        // 3. The version bumped: registered as the latest version.
        Fs.writeFileSync(file, workflowFile({ version: "1.1.0", what: "Rolls back the Deployment twice" }))
        yield* kubectl(adminConfig, "apply", "-f", file)
        yield* until("the new version", () => registered(statusOf())?.status === "True" && statusOf()["workflowId"] !== first["workflowId"])
        const second = statusOf()["workflowId"] as string
        expect(yield* catalog.getWorkflow(second)).toMatchObject({ version: "1.1.0", isLatestVersion: true, previousVersion: "1.0.0" })

        // 4. Deleted: the catalog entry is disabled, then the resource goes.
        yield* kubectl(adminConfig, "delete", "remediationworkflow", "rollback-deployment", "-n", namespace, "--wait=false")
        yield* until("the resource to go", () => rw() === undefined)
        expect(yield* catalog.getWorkflow(second)).toMatchObject({ status: "Disabled", disabledReason: expect.stringContaining("deleted") })
      })),
    { timeout: 120_000 }
  )
})
