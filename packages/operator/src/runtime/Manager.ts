/**
 * The manager, after controller-runtime's: it starts a list of runnables (the controllers from `Builder`, and
 * per-process loops such as the policy sync), the ones that need leader election only while this process holds the
 * operator's Lease (`LeaderElection` when present; each term in a fresh scope, closed when the Lease is lost), the
 * others at once on every replica. Readiness checks are registered on every replica: a standby is ready, the leader
 * once its controller listed its primary resource.
 */
import { whenLeading, LeaderElection } from "@kubemend/core/LeaderElection"
import { Readiness } from "@kubemend/core/Servers"
import { Deferred, Effect, Layer, Option, type Scope } from "effect"

export interface Runnable<R> {
  /** For logs. */
  readonly name: string
  /** True: runs only while this process leads. False: runs on every replica. */
  readonly needLeaderElection: boolean
  /** A readiness check that waits for the first list of the primary resource (the leader only). */
  readonly readiness: Option.Option<{ readonly check: string; readonly message: string }>
  /** Forks its work into the current scope and returns; completes `synced` after its primary resource's first list. */
  readonly start: (synced: Deferred.Deferred<void>) => Effect.Effect<void, never, R | Scope.Scope>
}

/** A runnable that is only a loop (no queue, no leader election): it runs on every replica. */
export const loop = <R>(name: string, run: Effect.Effect<void, never, R>): Runnable<R> => ({
  name,
  needLeaderElection: false,
  readiness: Option.none(),
  start: () => Effect.asVoid(Effect.forkScoped(run))
})

/** `runnables` when `enabled`, else none and a log line saying why (the one place a flag switches controllers off). */
export const when = <A extends Runnable<unknown>, R2>(
  enabled: boolean,
  disabled: string,
  runnables: Effect.Effect<ReadonlyArray<A>, never, R2>
): Effect.Effect<ReadonlyArray<A>, never, R2> => enabled ? runnables : Effect.as(Effect.logInfo(disabled), [])

/** What a runnable (or a union of them) needs to start. */
export type Requirements<A> = A extends Runnable<infer R> ? R : never

/** Starts `runnables` in the current scope: the leader's under the Lease (one `whenLeading` for all of them). */
export const start = <R>(runnables: ReadonlyArray<Runnable<R>>) =>
  Effect.gen(function* () {
    const readiness = yield* Effect.serviceOption(Readiness)
    const election = yield* Effect.serviceOption(LeaderElection)
    const leading = Option.match(election, { onNone: () => Effect.succeed(true), onSome: (e) => e.isLeader })
    const led: Array<Effect.Effect<void, never, R | Scope.Scope>> = []
    for (const runnable of runnables) {
      // Outlives the terms of leadership: the first list of any term makes the process ready.
      const synced = yield* Deferred.make<void>()
      if (Option.isSome(readiness) && Option.isSome(runnable.readiness)) {
        const { check, message } = runnable.readiness.value
        yield* readiness.value.register(
          check,
          Effect.zipWith(leading, Deferred.isDone(synced), (lead, done) => !lead || done).pipe(Effect.filterOrFail((ready) => ready, () => message))
        )
      }
      if (runnable.needLeaderElection) led.push(runnable.start(synced))
      else yield* runnable.start(synced)
    }
    if (led.length > 0) yield* whenLeading(Effect.all(led, { discard: true }))
  })

/** The manager for the layer's scope, starting the runnables `list` gives. */
export const layer = <A extends Runnable<unknown>, R2>(list: Effect.Effect<ReadonlyArray<A>, never, R2>) =>
  Layer.scopedDiscard(Effect.flatMap(list, (runnables) => start<Requirements<A>>(runnables as ReadonlyArray<Runnable<Requirements<A>>>)))

/** A runnable whose declaration needs the world (e.g. the platform CR's settings): declared when its term starts. */
export const defer = <R, R2>(name: string, declare: Effect.Effect<Runnable<R>, never, R2>): Runnable<R | R2> => ({
  name,
  needLeaderElection: true,
  readiness: Option.none(),
  start: (synced) => Effect.flatMap(declare, (runnable) => runnable.start(synced))
})
