/**
 * The local kubelet against the dev API server and the dev alerts backend: the demo's checkout Deployment crash
 * loops (its 1.4.2 image needs more than the 128Mi limit) and fires KubePodCrashLooping; a workflow Job naming
 * RollbackDeployment really rolls it back to 1.4.1, its pods become ready and the alert resolves; raising the memory
 * limit heals it too; an action type the kubelet cannot run, or a rollback without history, fails the Job with
 * the reason in its pod's log.
 */
import { describe, expect, it } from "@effect/vitest"
import { make as makeAlerts } from "@kubemend/devkit/Alerts"
import { DevKube } from "@kubemend/devkit/kube/index"
import { Duration, Effect, Schedule } from "effect"
import { demoNamespace, imageWorkingSets, workflowNamespace, workloads } from "../src/Demo.ts"
import { runLocalKubelet } from "@kubemend/devkit/kubelet/Kubelet"

const apiGroup = "kubemend.io"
type Obj = Record<string, any>

const job = (name: string, action: string, params: Record<string, string>) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: workflowNamespace, labels: { [`${apiGroup}/workflow-execution`]: name } },
  spec: {
    backoffLimit: 0,
    activeDeadlineSeconds: 600,
    template: {
      spec: {
        restartPolicy: "Never",
        containers: [{
          name: "workflow",
          image: "x",
          env: [...Object.entries(params).map(([n, value]) => ({ name: n, value })), { name: "ACTION_TYPE", value: action }]
        }]
      }
    }
  }
})

const start = Effect.gen(function* () {
  const kube = yield* DevKube.scoped({ apiGroup })
  kube.seed(workloads(apiGroup))
  const alerts = yield* makeAlerts({ alerts: [] })
  yield* runLocalKubelet(kube, {
    platformNamespace: "kubemend-system",
    readyz: {},
    apiGroup,
    workflowNamespace,
    executionTime: Duration.zero,
    demoNamespace,
    imageWorkingSets,
    alerts
  })
  const until = <A>(what: string, read: () => A, done: (a: A) => boolean) =>
    Effect.sync(read).pipe(
      Effect.filterOrFail(done, () => new Error(`timed out waiting for ${what}`)),
      Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("15 seconds")))
    )
  const checkout = () => kube.get("apps/v1", "Deployment", "checkout", demoNamespace) as Obj
  const firing = () => Effect.promise(async () => ((await (await fetch(`${alerts.url}/api/v1/alerts`)).json()) as { data: { alerts: Array<Obj> } }).data.alerts)
  const finished = (name: string) =>
    until(`job ${name}`, () => kube.get("batch/v1", "Job", name, workflowNamespace) as Obj, (j) => (j["status"]?.["conditions"] ?? []).length > 0)
  return { kube, until, checkout, firing, finished }
})

describe("local kubelet", () => {
  it.scopedLive(
    "runs a RollbackDeployment Job for real: checkout goes back to 1.4.1, its pods become ready, the alert resolves",
    () =>
      Effect.gen(function* () {
        const w = yield* start
        yield* w.until("checkout crash looping", w.checkout, (d) => d["status"]?.["replicas"] === 2 && d["status"]?.["readyReplicas"] === 0)
        expect((yield* w.firing()).filter((a) => a.labels.alertname === "KubePodCrashLooping" && a.labels.pod.startsWith("checkout-")).length).toBe(2)

        w.kube.seed([job("we-rollback", "RollbackDeployment", { TARGET_NAME: "checkout", TARGET_NAMESPACE: demoNamespace })])
        const done = yield* w.finished("we-rollback")
        expect(done["status"]["conditions"][0]).toMatchObject({ type: "Complete", status: "True" })
        expect(w.checkout()["spec"]["template"]["spec"]["containers"][0]["image"]).toBe("shop/checkout:1.4.1")
        const ready = yield* w.until("checkout ready", w.checkout, (d) => d["status"]?.["readyReplicas"] === 2)
        expect(ready["status"]).toMatchObject({ replicas: 2, unavailableReplicas: 0 })
        const pods = w.kube.list("v1", "Pod", demoNamespace).filter((p) => p.metadata.name.startsWith("checkout-"))
        expect(pods.map((p) => (p.metadata.ownerReferences as ReadonlyArray<Obj>)[0]!["name"])).toEqual(["checkout-6c4f9d7b8", "checkout-6c4f9d7b8"])
        expect(
          (w.kube.get("apps/v1", "ReplicaSet", "checkout-6c4f9d7b8", demoNamespace) as Obj)["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        ).toBe("3")
        const after = yield* w.firing().pipe(
          Effect.filterOrFail((a) => !a.some((x) => x.labels.alertname === "KubePodCrashLooping" && x.labels.pod.startsWith("checkout-")), () =>
            new Error("still firing")),
          Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("10 seconds")))
        )
        expect(after.filter((a) =>
          a.labels.deployment === "checkout"
        )).toEqual([])
        const pod = w.kube.get("v1", "Pod", "we-rollback-run", workflowNamespace) as Obj
        expect(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"]).toBe(0)

        w.kube.seed([job("we-unknown", "RebootCluster", { TARGET_NAME: "checkout", TARGET_NAMESPACE: demoNamespace })])
        const failed = yield* w.finished("we-unknown")
        expect(failed["status"]["conditions"][0]).toMatchObject({ type: "Failed", reason: "BackoffLimitExceeded" })
        const failedPod = w.kube.get("v1", "Pod", "we-unknown-run", workflowNamespace) as Obj
        expect(failedPod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"]).toBe(1)
      }),
    { timeout: 60_000 }
  )

  it.scopedLive("IncreaseMemoryLimit heals checkout with a new revision; a rollback without history fails with the reason", () =>
    Effect.gen(function* () {
      const w = yield* start
      w.kube.seed([job("we-memory", "IncreaseMemoryLimit", { TARGET_NAME: "checkout", TARGET_NAMESPACE: demoNamespace })])
      expect((yield* w.finished("we-memory"))["status"]["conditions"][0]["type"]).toBe("Complete")
      expect(w.checkout()["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]).toBe("256Mi")
      yield* w.until("checkout ready", w.checkout, (d) => d["status"]?.["readyReplicas"] === 2)

      w.kube.delete("apps/v1", "ReplicaSet", "cart-5b7c9d4f2", demoNamespace)
      w.kube.seed([job("we-cart", "RollbackDeployment", { TARGET_NAME: "cart", TARGET_NAMESPACE: demoNamespace })])
      expect((yield* w.finished("we-cart"))["status"]["conditions"][0]).toMatchObject({ type: "Failed" })
    }), { timeout: 60_000 })
})
