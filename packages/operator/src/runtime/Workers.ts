/**
 * The worker side of a controller (sample-controller's `runWorker`): N fibers take keys from the work queue, run
 * `reconcile(key)`, and decide what happens to the key next: an error requeues it with its backoff, a
 * `requeueAfter` schedules it again, success forgets its failures. Every run is logged with the controller name and
 * counted in the controller-runtime metrics.
 */
import { Cause, Clock, type Duration, Effect, Option, type Scope } from "effect"
import { ControllerMetrics } from "./ControllerMetrics.ts"
import type { WorkQueue } from "./WorkQueue.ts"

export interface Reconciled {
  /** Reconcile this key again after this long, even without events. */
  readonly requeueAfter?: Duration.Duration
}

export interface ControllerOptions<E, R> {
  /** `controller` label of logs and metrics. */
  readonly name: string
  readonly workers: number
  readonly queue: WorkQueue
  readonly reconcile: (key: string) => Effect.Effect<Reconciled, E, R>
}

/** `namespace/name` <-> parts. */
export const splitKey = (key: string): { readonly namespace: string; readonly name: string } => {
  const i = key.indexOf("/")
  return i < 0 ? { namespace: "", name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) }
}
export const keyOf = (namespace: string | undefined, name: string): string => `${namespace ?? ""}/${name}`

/** Runs one key through reconcile and requeues it as the outcome says. Exposed for tests. */
export const processKey = <E, R>(options: ControllerOptions<E, R>, key: string) =>
  Effect.gen(function* () {
    const metrics = yield* ControllerMetrics
    const { namespace, name } = splitKey(key)
    const started = yield* Clock.currentTimeMillis
    yield* metrics.active(options.name, 1)
    const exit = yield* options.reconcile(key).pipe(
      Effect.annotateLogs({ controller: options.name, namespace, name }),
      Effect.withSpan(`${options.name}.reconcile`, { attributes: { namespace, name } }),
      Effect.exit
    )
    yield* metrics.active(options.name, -1)
    const seconds = ((yield* Clock.currentTimeMillis) - started) / 1000
    const log = Effect.annotateLogs({ controller: options.name, namespace, name })
    if (exit._tag === "Failure") {
      if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
      yield* metrics.reconciled(options.name, "error", seconds)
      yield* Effect.logError("reconcile failed; requeued with backoff", exit.cause).pipe(log)
      yield* options.queue.addRateLimited(key)
    } else {
      yield* options.queue.forget(key)
      const after = Option.fromNullable(exit.value.requeueAfter)
      yield* metrics.reconciled(options.name, Option.isSome(after) ? "requeue_after" : "success", seconds)
      if (Option.isSome(after)) yield* options.queue.addAfter(key, after.value)
    }
  }).pipe(Effect.ensuring(options.queue.done(key)))

/** Forks the workers into the current scope; they run until it closes. */
export const runWorkers = <E, R>(options: ControllerOptions<E, R>): Effect.Effect<void, never, R | ControllerMetrics | Scope.Scope> =>
  Effect.gen(function* () {
    const metrics = yield* ControllerMetrics
    yield* metrics.workers(options.name, options.workers)
    const worker = options.queue.take.pipe(
      Effect.flatMap((key) => processKey(options, key)),
      Effect.forever
    )
    for (let i = 0; i < options.workers; i++) yield* Effect.forkScoped(worker)
  })
