/**
 * Two operator replicas on the dev API server, each with its leader election: only the lease holder reconciles the
 * platform CR; when it shuts down cleanly it releases the lease and the standby carries the same CR on at once.
 */
import { expect, it } from "@effect/vitest"
import { DevKube } from "@kubemend/devkit/kube/index"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { LeaderElection } from "@kubemend/core/LeaderElection"
import { Metrics } from "@kubemend/core/Metrics"
import { Clock, Context, Duration, Effect, Exit, Layer, Logger, LogLevel, Schedule, Scope } from "effect"
import { layerInProcess } from "../src/Service.ts"
import { apiGroup, namespace, platform, platformApiVersion, references } from "./PlatformHarness.ts"

const eventually = (check: () => boolean | Effect.Effect<boolean>, timeout: Duration.DurationInput = "10 seconds") =>
  Effect.suspend(() => {
    const ok = check()
    return typeof ok === "boolean" ? Effect.succeed(ok) : ok
  }).pipe(
    Effect.filterOrFail((ok) => ok, () => "not yet"),
    Effect.retry(Schedule.spaced("20 millis")),
    Effect.timeoutFail({ duration: timeout, onTimeout: () => "condition not reached in time" }),
    Effect.orDie
  )

const leaseNamespace = "kubemend-operator"
const leaseDuration = Duration.seconds(3)

it.live("two operator replicas: the lease holder reconciles, the standby takes over on a clean shutdown", () =>
  Effect.scoped(Effect.gen(function* () {
    const kube = yield* DevKube.scoped({ apiGroup })
    kube.seed(references)
    const kubeconfig = kube.kubeConfig()
    const replica = (identity: string) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const election = LeaderElection.layer({
          leaseName: "kubemend-operator",
          identity,
          leaseDuration,
          renewDeadline: Duration.seconds(2),
          retryPeriod: Duration.millis(200)
        }).pipe(Layer.provide(Layer.merge(K8sLive.layer({ namespace: leaseNamespace, apiGroup, kubeconfig }), Metrics.Default)))
        const context = yield* Layer.buildWithScope(
          Layer.merge(layerInProcess({ kubeconfig, apiGroup, progressRequeue: Duration.millis(100), backoffBase: Duration.millis(50) }), election)
            .pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Error))),
          scope
        )
        return { scope, election: Context.get(context, LeaderElection) }
      })
    const holder = () => (kube.get("coordination.k8s.io/v1", "Lease", "kubemend-operator", leaseNamespace)?.spec as any)?.holderIdentity
    const phase = () => (kube.get(platformApiVersion, "Kubemend", "kubemend", namespace)?.status as any)?.phase as string | undefined

    const a = yield* replica("operator-a")
    yield* eventually(() => a.election.isLeader)
    const b = yield* replica("operator-b")
    kube.put(platform())
    yield* eventually(() => phase() === "Migrating")
    expect([yield* a.election.isLeader, yield* b.election.isLeader]).toEqual([true, false])

    // operator-a stops: the lease is released and operator-b leads well within the lease duration.
    const stopped = yield* Clock.currentTimeMillis
    yield* Scope.close(a.scope, Exit.void)
    yield* eventually(() => b.election.isLeader, leaseDuration)
    const failover = (yield* Clock.currentTimeMillis) - stopped
    expect(failover).toBeLessThan(Duration.toMillis(leaseDuration))
    expect(holder()).toBe("operator-b")

    // The new leader carries the platform on from where it was.
    for (const job of kube.list("batch/v1", "Job", namespace)) kube.put({ ...job, status: { succeeded: 1 } })
    yield* eventually(() => phase() === "Deploying")
    yield* Scope.close(b.scope, Exit.void)
    expect(holder()).toBeUndefined()
  })))
