/**
 * Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics: a candidate tries to acquire every
 * `retryPeriod` (jittered) and wins once the lease is free or expired (`renewTime + leaseDurationSeconds` passed);
 * the leader renews every `retryPeriod` and steps down when no renew has succeeded within `renewDeadline`, which is
 * shorter than the lease, so it stops before anyone else may take over. Every write is optimistic (resourceVersion;
 * see K8s/Leases.ts). On a clean shutdown the leader stops its work and then releases the lease, so a successor
 * acquires at once instead of waiting out the lease.
 *
 * Work registered with `whenLeading` (a setup that forks its loops into its scope and returns) runs only while this
 * process leads, each term in a fresh scope that is closed
 * (every fiber interrupted and awaited) when leadership is lost. A follower is ready but idle. `<prefix>leader{lease,
 * identity}` is 1 while this process leads, and each change of leader is logged.
 */
import { Context, Duration, Effect, Exit, Layer, Option, Ref, Schedule, Scope } from "effect"
import { hostname } from "node:os"
import { K8s } from "./K8s.ts"
import { DefaultMetricsPrefix, Metrics } from "./Metrics.ts"

export interface LeaderElectionSettings {
  /** Name of the Lease in the K8s service's namespace. */
  readonly leaseName: string
  /** holderIdentity: the pod name in a cluster. */
  readonly identity: string
  /** How long a lease lives without a renew before a candidate may take it (client-go default 15 s). */
  readonly leaseDuration: Duration.Duration
  /** How long the leader keeps retrying a renew before it steps down (default 10 s; below `leaseDuration`). */
  readonly renewDeadline: Duration.Duration
  /** Wait between acquire attempts and between renews (default 2 s; below `renewDeadline`). */
  readonly retryPeriod: Duration.Duration
}

export const defaults = {
  leaseDuration: Duration.seconds(15),
  renewDeadline: Duration.seconds(10),
  retryPeriod: Duration.seconds(2)
} as const

/** Pod name in a cluster (the Downward API sets it as the hostname); host and pid for processes on one machine. */
export const defaultIdentity = (podName: Option.Option<string>): string => Option.getOrElse(podName, () => `${hostname()}_${process.pid}`)

/** client-go's checks: a leader must step down before its lease can expire, and retry at least once before that. */
export const validate = (s: LeaderElectionSettings): Option.Option<string> =>
  Duration.lessThanOrEqualTo(s.leaseDuration, s.renewDeadline)
    ? Option.some("leaseDuration must be greater than renewDeadline")
    : Duration.lessThanOrEqualTo(s.renewDeadline, Duration.times(s.retryPeriod, 1.2))
    ? Option.some("renewDeadline must be greater than 1.2 × retryPeriod")
    : Option.none()

export interface LeaderElectionService {
  readonly identity: string
  readonly leaseName: string
  readonly isLeader: Effect.Effect<boolean>
  /** Runs `work` in a fresh scope each time this process becomes leader; closes it on losing the lease or when the caller's scope closes. */
  readonly whenLeading: <R>(work: Effect.Effect<void, never, R | Scope.Scope>) => Effect.Effect<void, never, Exclude<R, Scope.Scope> | Scope.Scope>
}

export class LeaderElection extends Context.Tag("@kubemend/core/LeaderElection")<LeaderElection, LeaderElectionService>() {
  /** The election loop runs for the layer's scope; closing it stops the work and releases the lease. */
  static readonly layer = (settings: LeaderElectionSettings) => Layer.scoped(LeaderElection, make(settings))
}

/** `work` under the process's election when there is one, else at once (single-process tests and tools). */
export const whenLeading = <R>(work: Effect.Effect<void, never, R | Scope.Scope>) =>
  Effect.flatMap(Effect.serviceOption(LeaderElection), (election) => Option.isSome(election) ? election.value.whenLeading(work) : work)

const shuttingDown = "shutting down"

interface Entry {
  readonly run: Effect.Effect<void, never, Scope.Scope>
  scope: Option.Option<Scope.CloseableScope>
}

export const make = (settings: LeaderElectionSettings) =>
  Effect.gen(function* () {
    const k8s = yield* K8s
    const metrics = yield* Metrics
    const prefix = yield* DefaultMetricsPrefix
    const { leaseName, identity } = settings
    const gauge = metrics.gauge({
      name: `${prefix}leader`,
      help: "1 while this process holds the leader-election lease",
      labelNames: ["lease", "identity"]
    }).labels(leaseName, identity)
    gauge.set(0)
    const log = Effect.annotateLogs({ lease: leaseName, identity })

    // Term transitions and registrations take turns, so a work item is never started twice or left running.
    const lock = yield* Effect.makeSemaphore(1)
    const leading = yield* Ref.make(false)
    const entries = new Set<Entry>()
    const start = (e: Entry) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        e.scope = Option.some(scope)
        // The work sets itself up (forking its loops into the scope) and returns, as a scopedDiscard layer's body does.
        yield* Scope.extend(e.run, scope)
      })
    const stop = (e: Entry) =>
      Effect.suspend(() => {
        const scope = e.scope
        e.scope = Option.none()
        return Option.isSome(scope) ? Scope.close(scope.value, Exit.void) : Effect.void
      })

    const becomeLeader = lock.withPermits(1)(Effect.gen(function* () {
      yield* Ref.set(leading, true)
      gauge.set(1)
      yield* Effect.logInfo(`leader election: ${identity} is the leader of ${leaseName}`).pipe(log)
      for (const e of entries) yield* start(e)
    }))
    const stepDown = (why: string) =>
      lock.withPermits(1)(Effect.gen(function* () {
        if (!(yield* Ref.getAndSet(leading, false))) return
        gauge.set(0)
        yield* Effect.forEach(entries, stop, { discard: true })
        const line = `leader election: ${identity} stopped leading ${leaseName}: ${why}`
        yield* (why === shuttingDown ? Effect.logInfo(line) : Effect.logWarning(line)).pipe(log)
      }))

    const retry = Schedule.spaced(settings.retryPeriod).pipe(Schedule.jittered)
    const lastSeen = yield* Ref.make("")
    const acquire = k8s.acquireLease(leaseName, identity, settings.leaseDuration).pipe(
      Effect.tapError((e) =>
        e._tag === "K8sLeaseHeld"
          ? Effect.flatMap(
            Ref.getAndSet(lastSeen, e.holder),
            (before) =>
              before === e.holder ? Effect.void : Effect.logInfo(`leader election: ${e.holder} leads ${leaseName}; ${identity} is standing by`).pipe(log)
          )
          : Effect.logWarning("leader election: acquire failed; retrying", e).pipe(log)
      ),
      Effect.retry(retry)
    )
    // One renew: retried every retryPeriod until it succeeds or renewDeadline has passed; another holder ends it at once.
    const renew = k8s.renewLease(leaseName, identity).pipe(
      Effect.retry(Schedule.spaced(settings.retryPeriod).pipe(Schedule.whileInput((e: { _tag: string }) => e._tag === "K8sUnavailable"))),
      Effect.timeoutFail({ duration: settings.renewDeadline, onTimeout: () => ({ _tag: "RenewDeadline" as const }) })
    )
    const term = Effect.gen(function* () {
      yield* acquire
      yield* Ref.set(lastSeen, identity)
      yield* becomeLeader
      const lost = yield* renew.pipe(Effect.delay(settings.retryPeriod), Effect.forever, Effect.flip)
      yield* stepDown(lost._tag === "RenewDeadline" ? `no renew within ${Duration.format(settings.renewDeadline)}` : lost._tag)
    })

    // Added before the loop is forked, so on close the loop is interrupted first, then the work stops, then the lease goes.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        const was = yield* Ref.get(leading)
        yield* stepDown(shuttingDown)
        if (!was) return
        yield* k8s.releaseLease(leaseName, identity).pipe(
          Effect.timeout(settings.renewDeadline),
          Effect.tap(() => Effect.logInfo(`leader election: ${identity} released ${leaseName}`).pipe(log)),
          Effect.catchAll((e) => Effect.logWarning("leader election: release failed; the lease expires by itself", e).pipe(log))
        )
      })
    )
    yield* Effect.forkScoped(Effect.forever(term))

    const whenLeadingImpl = <R>(work: Effect.Effect<void, never, R | Scope.Scope>) =>
      Effect.gen(function* () {
        // The caller's services, without its scope: each term gives the work a scope of its own.
        const context = Context.omit(Scope.Scope)(yield* Effect.context<Exclude<R, Scope.Scope> | Scope.Scope>())
        // What remains after providing is the Scope, which TypeScript cannot see through `Exclude` on a generic R.
        const run = Effect.provide(work, context as Context.Context<Exclude<R, Scope.Scope>>) as Effect.Effect<void, never, Scope.Scope>
        const entry: Entry = { run, scope: Option.none() }
        yield* lock.withPermits(1)(Effect.gen(function* () {
          entries.add(entry)
          if (yield* Ref.get(leading)) yield* start(entry)
        }))
        yield* Effect.addFinalizer(() => lock.withPermits(1)(Effect.suspend(() => (entries.delete(entry), stop(entry)))))
      })

    return { identity, leaseName, isLeader: Ref.get(leading), whenLeading: whenLeadingImpl } satisfies LeaderElectionService
  })
