/**
 * The one way a controller is declared, after controller-runtime's builder: the resource it reconciles (`for`),
 * the children it owns (an owned object's change enqueues its owner, named by `spec.remediationRequestRef.name`),
 * what else it watches with a map function, its workers and queue, and an optional periodic resync of its primary
 * resource. `complete(reconcile)` gives a `Runnable` the manager starts while this process holds the Lease; the
 * controller itself never looks at leadership.
 *
 * Sources: `Source.cr` is a CR of the platform in the controller namespace through core's K8s watch (list, watch
 * from the list's resourceVersion, reconnect, relist); `Source.collection` is any collection through the
 * operator's Cluster client and core's informer (restarts on 410 Gone, optional relevance filter, `synced` after
 * its first list); `Source.keys` is a stream of keys from the process (controller-runtime's channel source).
 */
import { K8s, type CrPlural, type KubeObject } from "@kubemend/core/K8s"
import { runInformer } from "@kubemend/core/K8s/Informer"
import { type Deferred, type Duration, Effect, Option, Schedule, Stream } from "effect"
import { Cluster, collectionSource, type CollectionRef } from "./Cluster.ts"
import { ControllerMetrics } from "./ControllerMetrics.ts"
import type { Runnable } from "./Manager.ts"
import { keyOf, type Reconciled, runWorkers } from "./Workers.ts"
import * as WorkQueue from "./WorkQueue.ts"

export interface Source<R> {
  /** Feeds `add` for as long as it runs; completes `synced` (when given) after its first full list. */
  readonly run: (controller: string, add: (key: string) => Effect.Effect<void>, synced?: Deferred.Deferred<void>) => Effect.Effect<void, never, R>
  /** The keys of every object now, for a resync; absent when the source cannot list. */
  readonly list?: Effect.Effect<ReadonlyArray<string>, unknown, R>
}

const reconnect = Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("30 seconds")))

/** The object's own `namespace/name` key (the controller namespace when it has none). */
export const ownKey = (o: KubeObject, namespace: string): Option.Option<string> => Option.some(keyOf(o.metadata.namespace ?? namespace, o.metadata.name))

/** The RR a child belongs to (`spec.remediationRequestRef.name`). */
export const ownerKey = (o: KubeObject, namespace: string): Option.Option<string> =>
  Option.map(
    Option.fromNullable((o.spec as { remediationRequestRef?: { name?: unknown } } | undefined)?.remediationRequestRef?.name),
    (name) => keyOf(o.metadata.namespace ?? namespace, String(name))
  )

export const Source = {
  /** A platform CR in the controller namespace (core K8s), each change mapped to a key (default: its own). */
  cr: (plural: CrPlural, map: (o: KubeObject, namespace: string) => Option.Option<string> = ownKey): Source<K8s> => ({
    // The stream ends only by failing (too many failed reconnects): log it and watch again after a backoff.
    run: (controller, add) =>
      Effect.flatMap(K8s, (k8s) =>
        k8s.watchCr(plural).pipe(
          Stream.runForEach((event) => Option.match(map(event.object, k8s.namespace), { onNone: () => Effect.void, onSome: add })),
          Effect.tapError((e) => Effect.logWarning(`${controller}: watch of ${plural} failed; watching again`, e)),
          Effect.retry(reconnect),
          Effect.ignore
        )),
    list: Effect.flatMap(
      K8s,
      (k8s) => Effect.map(k8s.listCr(plural), (list) => list.items.map((o) => keyOf(o.metadata.namespace ?? k8s.namespace, o.metadata.name)))
    )
  }),

  /** Any collection through the Cluster client and core's informer; `map` turns an object's key into the key to queue. */
  collection: (collection: CollectionRef, options: {
    readonly watchTimeout: Duration.Duration
    readonly backoffMax: Duration.Duration
    readonly relevant?: (previous: KubeObject | undefined, current: KubeObject) => boolean
    readonly map?: (key: string) => Option.Option<string>
    /** `controller` annotation of the informer's logs, when not the controller's name. */
    readonly logAs?: string
  }): Source<Cluster> => ({
    run: (controller, add, synced) =>
      Effect.flatMap(Cluster, (cluster) =>
        runInformer({
          source: collectionSource(cluster, collection, options.watchTimeout),
          onKey: (key) => Option.match(options.map === undefined ? Option.some(key) : options.map(key), { onNone: () => Effect.void, onSome: add }),
          ...(options.relevant === undefined ? {} : { relevant: options.relevant }),
          backoffMax: options.backoffMax,
          ...(synced === undefined ? {} : { synced })
        }).pipe(Effect.annotateLogs("controller", options.logAs ?? controller))),
    list: Effect.flatMap(
      Cluster,
      (cluster) => Effect.map(cluster.list(collection), (list) => list.items.map((o) => keyOf(o.metadata.namespace, o.metadata.name)))
    )
  }),

  /** Keys from elsewhere in the process. */
  keys: <R>(keys: Stream.Stream<string, never, R>): Source<R> => ({ run: (_, add) => Stream.runForEach(keys, add) })
} as const

export interface ControllerOptions {
  readonly workers: number
  readonly queueCapacity: number
  readonly backoffBase: Duration.DurationInput
  readonly backoffMax: Duration.DurationInput
}

interface Spec<R> {
  readonly name: string
  readonly options: ControllerOptions
  readonly primary: Option.Option<Source<R>>
  readonly watches: ReadonlyArray<Source<R>>
  readonly resync: Option.Option<Duration.Duration>
  readonly readiness: Option.Option<{ readonly check: string; readonly message: string }>
  readonly started: { readonly message: string; readonly annotations: Record<string, unknown> }
}

/** A controller being declared; every step returns a new builder. `R` collects what its sources need. */
export class Builder<R> {
  constructor(private readonly spec: Spec<R>) {}

  /** The resource it reconciles. */
  for<R2>(source: Source<R2>): Builder<R | R2> {
    return new Builder<R | R2>({ ...this.spec, primary: Option.some<Source<R | R2>>(source), watches: [source, ...this.spec.watches] })
  }

  /** Children in the controller namespace that name their owner in `spec.remediationRequestRef`. */
  owns(plural: CrPlural): Builder<R | K8s> {
    return this.watches(Source.cr(plural, ownerKey))
  }

  /** Anything else whose changes map to keys of this controller. */
  watches<R2>(source: Source<R2>): Builder<R | R2> {
    return new Builder<R | R2>({ ...this.spec, watches: [...this.spec.watches, source] })
  }

  /** Queue every object of the primary resource again each `period`, even without events. */
  resyncEvery(period: Duration.Duration): Builder<R> {
    return new Builder({ ...this.spec, resync: Option.some(period) })
  }

  /**
   * Register readiness check `check`: ready once the leader's primary source listed; a standby is ready. Only a
   * `Source.collection` primary reports its first list.
   */
  readyWhenListed(check: string, message: string): Builder<R> {
    return new Builder({ ...this.spec, readiness: Option.some({ check, message }) })
  }

  /** The log line when it starts, and its annotations. */
  announce(message: string, annotations: Record<string, unknown> = {}): Builder<R> {
    return new Builder({ ...this.spec, started: { message, annotations } })
  }

  /** The controller, ready for the manager. */
  complete<E, R2>(reconcile: (key: string) => Effect.Effect<Reconciled, E, R2>): Runnable<R | R2 | ControllerMetrics> {
    const spec = this.spec
    return {
      name: spec.name,
      needLeaderElection: true,
      readiness: spec.readiness,
      start: (synced) =>
        Effect.gen(function* () {
          const metrics = yield* ControllerMetrics
          const queue = yield* WorkQueue.make({
            name: spec.name,
            capacity: spec.options.queueCapacity,
            backoffBase: spec.options.backoffBase,
            backoffMax: spec.options.backoffMax,
            observer: metrics.observer
          })
          yield* runWorkers({ name: spec.name, workers: spec.options.workers, queue, reconcile })
          for (const source of spec.watches) {
            const first = Option.exists(spec.primary, (p) => p === source)
            yield* Effect.forkScoped(source.run(spec.name, queue.add, first ? synced : undefined))
          }
          const list = Option.flatMap(spec.primary, (p) => Option.fromNullable(p.list))
          if (Option.isSome(spec.resync) && Option.isSome(list)) {
            yield* list.value.pipe(
              Effect.flatMap((keys) => Effect.forEach(keys, queue.add, { discard: true })),
              Effect.catchAll((e) => Effect.logWarning(`${spec.name}: resync failed`, e)),
              Effect.delay(spec.resync.value),
              Effect.forever,
              Effect.forkScoped
            )
          }
          yield* Effect.logInfo(spec.started.message).pipe(Effect.annotateLogs(spec.started.annotations))
        })
    }
  }
}

/** Starts declaring controller `name` (the `controller` label of its logs and metrics, and its queue's name). */
export const controller = (name: string, options: ControllerOptions): Builder<never> =>
  new Builder<never>({
    name,
    options,
    primary: Option.none(),
    watches: [],
    resync: Option.none(),
    readiness: Option.none(),
    started: { message: `controller ${name} started`, annotations: {} }
  })
