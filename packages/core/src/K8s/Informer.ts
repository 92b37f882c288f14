/**
 * The informer as level-triggered controllers use it: the core informer's changes reduced to keys
 * (`namespace/name`) handed to a handler, which reads the object itself when it reconciles. Every (re)list hands on
 * every object (client-go's Replace), so nothing missed during a gap stays missed; a watched change is handed on when
 * `relevant` says so. It never gives up: failures relist after the capped backoff, for as long as it runs.
 *
 *   runInformer({ source, onKey: queue.add, relevant: specOrDeletionChanged, backoffMax: Duration.seconds(5) })
 */
import { Deferred, Duration, Effect, Stream } from "effect"
import type { KubeObject } from "../K8s.ts"
import { resolveSettings } from "./Config.ts"
import { changes, objectKey, type WatchSource } from "./Watch.ts"

export interface InformerOptions<R> {
  /** The collection's list and one watch request from a resourceVersion (with its server-side timeout). */
  readonly source: WatchSource
  readonly onKey: (key: string) => Effect.Effect<void, never, R>
  /** Whether a watched change is worth a reconcile; default every change. `previous` is the last version seen. */
  readonly relevant?: (previous: KubeObject | undefined, current: KubeObject) => boolean
  readonly backoffBase?: Duration.DurationInput
  readonly backoffMax: Duration.Duration
  /** Completed after the first successful list has been handed on (readiness). */
  readonly synced?: Deferred.Deferred<void>
}

/** Skips changes that leave `generation` and `deletionTimestamp` alone (our own status writes, for one). */
export const specOrDeletionChanged = (previous: KubeObject | undefined, current: KubeObject): boolean =>
  previous === undefined ||
  previous.metadata.generation !== current.metadata.generation ||
  previous.metadata.deletionTimestamp !== current.metadata.deletionTimestamp

/** Runs until interrupted. */
export const runInformer = <R>(options: InformerOptions<R>): Effect.Effect<never, never, R> => {
  const relevant = options.relevant ?? (() => true)
  const settings = resolveSettings({
    watchBackoffBase: options.backoffBase ?? "100 millis",
    watchBackoffMax: options.backoffMax,
    watchMaxFailures: Number.POSITIVE_INFINITY
  })
  const synced = options.synced
  return changes(options.source, settings, {
    resync: true,
    ...(synced === undefined ? {} : { onListed: Effect.asVoid(Deferred.succeed(synced, undefined)) })
  }).pipe(
    Stream.runForEach((c) => c.listed || c.type === "DELETED" || relevant(c.previous, c.object) ? options.onKey(objectKey(c.object)) : Effect.void),
    // With no limit on failures the stream neither fails nor ends.
    Effect.orDie,
    Effect.zipRight(Effect.never)
  )
}
