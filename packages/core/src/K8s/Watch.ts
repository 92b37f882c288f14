/**
 * The one informer of the platform (both K8s layers, the operator's controllers): list, emit ADDED for each object,
 * watch from the list's resourceVersion; when the server closes the watch, watch again from the last resourceVersion
 * seen. A failed list or watch (410 Gone, an ERROR event, a 5xx, a lost connection) relists after a capped
 * exponential backoff and emits only the difference (ADDED / MODIFIED / DELETED) against what the consumer has
 * already seen; only a throttled watch (429) resumes from the last version. It keeps the last object per
 * namespace/name, so a reconnect can neither lose nor repeat an event.
 */
import { Duration, Effect, Option, Stream } from "effect"
import type { K8sUnavailable, KubeList, KubeObject, WatchEvent } from "../K8s.ts"
import type { K8sSettings } from "./Config.ts"
import { HttpFailure, unavailable } from "./Retry.ts"

/** One line of a watch response, as the server sent it. */
export interface RawWatchEvent {
  readonly type: string
  readonly object: KubeObject
}

/** Checks the shape of one decoded watch line; anything else is a protocol error. */
export const toRawEvent = (u: unknown): Effect.Effect<RawWatchEvent, HttpFailure> => {
  const e = u as { type?: unknown; object?: { metadata?: unknown } } | null
  const ok = typeof e?.type === "string" && typeof e.object === "object" && e.object !== null &&
    (e.type === "ERROR" || (typeof e.object.metadata === "object" && e.object.metadata !== null))
  return ok
    ? Effect.succeed(u as RawWatchEvent)
    : Effect.fail(new HttpFailure({ status: undefined, message: "watch: malformed event" }))
}

export interface WatchSource {
  readonly list: Effect.Effect<KubeList, HttpFailure>
  /** One watch request from `resourceVersion`; the stream ends when the server closes it. */
  readonly watch: (resourceVersion: string) => Stream.Stream<RawWatchEvent, HttpFailure>
}

/** One change handed on: the object's version before it (when known) and whether a (re)list produced it. */
export interface Change extends WatchEvent {
  readonly previous: KubeObject | undefined
  readonly listed: boolean
}

export interface ChangeOptions {
  /**
   * On every (re)list hand on each listed object, changed or not (client-go's Replace): level-triggered controllers
   * reconcile everything again after a gap in which they may have missed something.
   */
  readonly resync?: boolean
  /** Runs after each successful list has been handed on (readiness). */
  readonly onListed?: Effect.Effect<void>
}

interface State {
  readonly known: Map<string, KubeObject>
  resourceVersion: string
  mustList: boolean
  /** Consecutive failed requests; the stream gives up at `watchMaxFailures`. */
  failures: number
  /** Consecutive 410s and consecutive watches that closed with nothing in them: both only slow us down. */
  gone: number
  idle: number
  delay: Duration.Duration
}

const backoff = (settings: K8sSettings, n: number): Duration.Duration =>
  Duration.min(Duration.times(settings.watchBackoffBase, 2 ** Math.min(n, 30)), settings.watchBackoffMax)

/** `namespace/name` (`/name` when cluster-scoped): the informer's key and the operator's work-queue key. */
export const objectKey = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name}`
const versionOf = (o: KubeObject): string | undefined => o.metadata.resourceVersion

const diff = (state: State, items: ReadonlyArray<KubeObject>, resync: boolean): Array<Change> => {
  const changes: Array<Change> = []
  const seen = new Set<string>()
  for (const item of items) {
    const key = objectKey(item)
    seen.add(key)
    const previous = state.known.get(key)
    if (previous === undefined) changes.push({ type: "ADDED", object: item, previous, listed: true })
    else if (resync || versionOf(previous) !== versionOf(item)) changes.push({ type: "MODIFIED", object: item, previous, listed: true })
    state.known.set(key, item)
  }
  for (const [key, previous] of state.known) {
    if (!seen.has(key)) {
      changes.push({ type: "DELETED", object: previous, previous, listed: true })
      state.known.delete(key)
    }
  }
  return changes
}

const statusFailure = (object: KubeObject): HttpFailure => {
  const status = object as { code?: unknown; message?: unknown }
  return new HttpFailure({
    status: typeof status.code === "number" ? status.code : undefined,
    message: typeof status.message === "string" ? status.message : "watch error event"
  })
}

/** Applies one server event to the state; None when it carries nothing new for the consumer. */
const apply = (state: State, event: RawWatchEvent): Effect.Effect<Option.Option<Change>, HttpFailure> => {
  if (event.type === "ERROR") return Effect.fail(statusFailure(event.object))
  const rv = versionOf(event.object)
  if (rv !== undefined) state.resourceVersion = rv
  state.idle = 0
  state.gone = 0
  if (event.type === "BOOKMARK") return Effect.succeed(Option.none())
  const key = objectKey(event.object)
  const previous = state.known.get(key)
  if (event.type === "DELETED") {
    if (previous === undefined) return Effect.succeed(Option.none())
    state.known.delete(key)
    return Effect.succeed(Option.some({ type: "DELETED", object: event.object, previous, listed: false }))
  }
  if (event.type !== "ADDED" && event.type !== "MODIFIED") return Effect.succeed(Option.none())
  if (previous !== undefined && versionOf(previous) === rv) return Effect.succeed(Option.none())
  state.known.set(key, event.object)
  const type = previous === undefined ? "ADDED" : "MODIFIED"
  return Effect.succeed(Option.some({ type, object: event.object, previous, listed: false }))
}

/** Records a failed request and schedules the next round, or gives up after too many in a row. */
const failed = (settings: K8sSettings, state: State, e: HttpFailure): Effect.Effect<void, K8sUnavailable> =>
  Effect.suspend(() => {
    if (e.status === 410) {
      state.mustList = true
      state.delay = backoff(settings, state.gone++)
      return Effect.logDebug("watch: resourceVersion too old, relisting", state.resourceVersion)
    }
    state.failures++
    if (state.failures >= settings.watchMaxFailures) return Effect.fail(unavailable(e))
    // A throttled server has not lost our place; after any other failure we may have missed something: relist.
    if (e.status !== 429) state.mustList = true
    // A throttled watch waits at least what the server asked for (bounded like every Retry-After).
    const asked = e.retryAfter === undefined ? Duration.zero : Duration.min(e.retryAfter, settings.maxRetryAfter)
    state.delay = Duration.max(backoff(settings, state.failures - 1), asked)
    return Effect.logWarning("watch: request failed, retrying", e.message)
  })

const round = (
  source: WatchSource,
  settings: K8sSettings,
  options: ChangeOptions,
  state: State
): Stream.Stream<Change, K8sUnavailable> =>
  Stream.unwrap(
    Effect.gen(function* () {
      if (Duration.greaterThan(state.delay, Duration.zero)) yield* Effect.sleep(state.delay)
      state.delay = Duration.zero
      if (state.mustList) {
        const listed = yield* Effect.either(source.list)
        if (listed._tag === "Left") {
          yield* failed(settings, state, listed.left)
          return Stream.empty
        }
        state.failures = 0
        state.mustList = false
        state.resourceVersion = listed.right.resourceVersion
        const changes = Stream.fromIterable(diff(state, listed.right.items, options.resync === true))
        return options.onListed === undefined ? changes : Stream.concat(changes, Stream.drain(Stream.fromEffect(options.onListed)))
      }
      let received = false
      const closed = Effect.sync(() => {
        // A clean close right after connecting (nothing sent) would otherwise reconnect in a tight loop.
        if (!received) state.delay = backoff(settings, state.idle++)
      })
      return source.watch(state.resourceVersion).pipe(
        Stream.tap(() => Effect.sync(() => void (received = true))),
        Stream.mapEffect((event) => apply(state, event)),
        Stream.filterMap((o) => o),
        Stream.tap(() => Effect.sync(() => void (state.failures = 0))),
        Stream.concat(Stream.fromEffect(closed).pipe(Stream.drain)),
        Stream.catchAll((e) => Stream.fromEffect(failed(settings, state, e)).pipe(Stream.drain))
      )
    })
  )

/** List-then-watch that never ends by itself; fails with K8sUnavailable after `watchMaxFailures` failures in a row. */
export const changes = (
  source: WatchSource,
  settings: K8sSettings,
  options: ChangeOptions = {}
): Stream.Stream<Change, K8sUnavailable> =>
  Stream.suspend(() => {
    const state: State = {
      known: new Map(),
      resourceVersion: "",
      mustList: true,
      failures: 0,
      gone: 0,
      idle: 0,
      delay: Duration.zero
    }
    return Stream.forever(round(source, settings, options, state))
  })

/** `changes` as plain watch events: what the K8s service's `watchCr` / `watchEvents` stream. */
export const informer = (source: WatchSource, settings: K8sSettings): Stream.Stream<WatchEvent, K8sUnavailable> =>
  Stream.map(changes(source, settings), ({ object, type }) => ({ type, object }))
