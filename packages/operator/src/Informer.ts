/**
 * List + watch of one collection, feeding keys (`namespace/name`) to a handler. The list enqueues every object; the
 * watch continues from the list's resourceVersion and, when the server closes it, from the last version seen. A
 * 410 Gone (the version was compacted; an ERROR event or the watch answer itself) relists at once; other failures
 * relist after a capped exponential backoff. Level-triggered: the handler only learns a key, reconcile reads the
 * object itself.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { HttpFailure } from "@kubemend/core/K8s/Retry"
import { Deferred, Duration, Effect, Stream } from "effect"
import type { ClusterService, CollectionRef } from "./Cluster.ts"
import { keyOf } from "./Controller.ts"
import { backoffDelay } from "./WorkQueue.ts"

export interface InformerOptions<R> {
  readonly cluster: ClusterService
  readonly collection: CollectionRef
  readonly onKey: (key: string) => Effect.Effect<void, never, R>
  /** Whether a change is worth a reconcile; default every change. `previous` is the last version seen. */
  readonly relevant?: (previous: KubeObject | undefined, current: KubeObject) => boolean
  readonly watchTimeout: Duration.Duration
  readonly backoffBase?: Duration.DurationInput
  readonly backoffMax: Duration.Duration
  /** Completed after the first successful list (readiness). */
  readonly synced?: Deferred.Deferred<void>
}

/** Skips changes that leave `generation` and `deletionTimestamp` alone (our own status writes, for one). */
export const specOrDeletionChanged = (previous: KubeObject | undefined, current: KubeObject): boolean =>
  previous === undefined ||
  previous.metadata.generation !== current.metadata.generation ||
  previous.metadata.deletionTimestamp !== current.metadata.deletionTimestamp

class Relist {
  readonly _tag = "Relist"
  constructor(readonly code: number | undefined) {}
}

const statusCode = (object: unknown): number | undefined => {
  const code = (object as { code?: unknown } | null)?.code
  return typeof code === "number" ? code : undefined
}

/** Runs until interrupted. */
export const runInformer = <R>(options: InformerOptions<R>): Effect.Effect<never, never, R> =>
  Effect.gen(function* () {
    const known = new Map<string, KubeObject>()
    const relevant = options.relevant ?? (() => true)
    let resourceVersion = ""
    let mustList = true
    let failures = 0
    const keyFor = (o: KubeObject) => keyOf(o.metadata.namespace, o.metadata.name)

    const seen = (o: KubeObject, deleted: boolean, always = false) =>
      Effect.suspend(() => {
        const key = keyFor(o)
        const previous = known.get(key)
        if (deleted) known.delete(key)
        else known.set(key, o)
        return always || deleted || relevant(previous, o) ? options.onKey(key) : Effect.void
      })

    const failed = (e: HttpFailure | Relist) =>
      Effect.gen(function* () {
        mustList = true
        if ((e._tag === "Relist" ? e.code : e.status) === 410) {
          yield* Effect.logDebug("informer: resourceVersion expired, relisting")
          return
        }
        if (e._tag === "Relist") {
          yield* Effect.logWarning("informer: watch error event, relisting", e.code)
          return
        }
        failures++
        yield* Effect.logWarning("informer: list/watch failed, relisting after backoff", e.message)
        yield* Effect.sleep(yield* backoffDelay(options.backoffBase ?? "100 millis", options.backoffMax, failures))
      })

    const list = Effect.gen(function* () {
      const listed = yield* options.cluster.listRaw(options.collection)
      resourceVersion = listed.resourceVersion
      mustList = false
      failures = 0
      const current = new Set(listed.items.map(keyFor))
      for (const [key, o] of known) if (!current.has(key)) yield* seen(o, true)
      // Like client-go's Replace: every listed object is handed on, so nothing missed during the gap stays missed.
      for (const item of listed.items) yield* seen(item, false, true)
      if (options.synced !== undefined) yield* Deferred.succeed(options.synced, undefined)
    })

    const watch = () =>
      options.cluster
        .watch(options.collection, {
          resourceVersion,
          timeoutSeconds: Math.max(1, Math.round(Duration.toSeconds(options.watchTimeout)))
        })
        .pipe(
          Stream.mapError((e): HttpFailure | Relist => e),
          Stream.runForEach((event) => {
            // 410 is the usual ERROR; any other error event also means this watch cannot go on: relist.
            if (event.type === "ERROR") return Effect.fail(new Relist(statusCode(event.object)))
            const rv = event.object.metadata?.resourceVersion
            if (rv !== undefined) resourceVersion = rv
            if (event.type === "BOOKMARK") return Effect.void
            failures = 0
            return seen(event.object, event.type === "DELETED")
          })
        )

    return yield* Effect.suspend(() => (mustList ? list : watch())).pipe(
      Effect.catchAll(failed),
      Effect.forever
    )
  })
