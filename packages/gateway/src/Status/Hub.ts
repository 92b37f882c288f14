/**
 * Fan-out of RemediationRequest phase transitions to status-stream subscribers. One watch per RR, shared by all of
 * its subscribers and stopped with the last of them; each transition is encoded once and the same bytes are pushed
 * to every subscriber's response body without waiting, so a reader that falls behind is dropped once its unsent
 * bytes pass `subscriberBufferBytes` instead of slowing the others.
 *
 * A subscriber is only its `Sink` (the HTTP response) plus a few fields: thousands are held per process, so there
 * is no fiber, queue or Effect Stream per subscriber (those cost several times the connection itself). Keepalives
 * come from one hub-wide ticker and the closing notices from one hub-wide sweep, both on Effect's Clock.
 * Investigation events of a watched RR that this gateway sees (AgentEvents.ts) go out as `status/investigation`.
 */
import { Clock, Deferred, Duration, Effect, Fiber, Option, Runtime, Stream } from "effect"
import { AgentEvents } from "../AgentEvents.ts"
import { K8s, type KubeObject, type WatchEvent } from "@kubemend/core/K8s"
import { StatusConfig } from "./Config.ts"
import { closingFrame, investigationFrame, keepaliveFrame, phaseOf, updateFrame } from "./Frames.ts"

/** Where a subscriber's frames go: the HTTP response, or a recording in tests. */
export interface Sink {
  readonly write: (bytes: Uint8Array) => void
  /**
   * Ends the stream once what was written has been sent; with `closeConnection` the connection closes too (the
   * gateway is shutting down, and an idle keep-alive connection would hold its listener open).
   */
  readonly end: (closeConnection?: boolean) => void
  /** Bytes written but not yet taken by the reader. */
  readonly pending: () => number
  /** Cuts the connection at once (a slow reader). */
  readonly destroy: () => void
  /** `f` runs once when the sink closes for any reason (ended, cut, or the client went away). */
  readonly onClose: (f: () => void) => void
}

interface Sub {
  readonly sink: Sink
  lastPhase: string
  /** Transitions at or before this resourceVersion are older than what the subscriber already got. */
  readonly minRv: string | undefined
  /** Epoch millis at which `status/closing` goes out. */
  readonly closeAt: number
  closed: boolean
}

interface Group {
  readonly rrId: string
  readonly subs: Set<Sub>
  latest: KubeObject
  lastPhase: string | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
  unlisten: (() => void) | undefined
}

/** resourceVersions are opaque, but every real server hands out increasing integers: compare those, else trust order. */
const isNewer = (rv: string | undefined, than: string | undefined): boolean =>
  rv === undefined || than === undefined || !/^\d+$/.test(rv) || !/^\d+$/.test(than) || BigInt(rv) > BigInt(than)

/** How often closing deadlines are checked; token expiry has second precision. */
const sweepInterval = Duration.seconds(1)

export interface SubscribeOptions {
  /** The RR as read when the request was accepted (its absence was already answered with -32001). */
  readonly current: KubeObject
  /** When the caller's token expires; `status/closing` goes out `closingLead` before. */
  readonly expiresAt: Date
  /** The subscriber's end of the stream. */
  readonly sink: Sink
  /** Completed when the gateway starts draining (`Drain.started`): every stream gets `status/closing`. */
  readonly draining: Deferred.Deferred<void>
}

export class StatusHub extends Effect.Service<StatusHub>()("@kubemend/gateway/StatusHub", {
  scoped: Effect.gen(function* () {
    const k8s = yield* K8s
    const config = yield* StatusConfig
    const scope = yield* Effect.scope
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    // Optional so the hub runs alone (its tests, the benchmark); the gateway always provides it.
    const investigations = yield* Effect.serviceOption(AgentEvents)
    const groups = new Map<string, Group>()
    const drains = new Set<Deferred.Deferred<void>>()
    let subscribers = 0
    let dropped = 0

    /** Ends the stream after `bytes`; the response finishes once the reader has taken what is buffered. */
    const end = (sub: Sub, bytes?: Uint8Array, closeConnection = false) => {
      if (sub.closed) return
      sub.closed = true
      if (bytes !== undefined) sub.sink.write(bytes)
      sub.sink.end(closeConnection)
    }

    /**
     * Sends without waiting; a reader whose unsent bytes pass the bound is dropped. `last` ends the stream after
     * `bytes` (`"close"`: and its connection).
     */
    const send = (sub: Sub, bytes: Uint8Array, last?: "end" | "close") => {
      if (sub.closed) return
      if (sub.sink.pending() + bytes.length > config.subscriberBufferBytes) {
        sub.closed = true
        dropped++
        sub.sink.destroy()
        return
      }
      if (last !== undefined) end(sub, bytes, last === "close")
      else sub.sink.write(bytes)
    }

    const everySub = (f: (sub: Sub) => void) =>
      Effect.sync(() => {
        for (const g of groups.values()) for (const sub of g.subs) f(sub)
      })

    const onEvent = (group: Group, event: WatchEvent) =>
      Effect.gen(function* () {
        if (event.type === "DELETED") {
          for (const sub of group.subs) end(sub)
          return
        }
        const rr = event.object
        group.latest = rr
        const phase = phaseOf(rr)
        if (phase === group.lastPhase) return
        group.lastPhase = phase
        const frame = updateFrame(rr, yield* Clock.currentTimeMillis)
        const rv = rr.metadata.resourceVersion
        for (const sub of group.subs) {
          if (sub.lastPhase === phase || !isNewer(rv, sub.minRv)) continue
          sub.lastPhase = phase
          send(sub, frame.bytes, frame.final ? "end" : undefined)
        }
      })

    // The informer reconnects and relists by itself; it only fails after many failures in a row, and then the
    // subscribers' streams end so their clients reconnect.
    const watch = (group: Group) =>
      k8s.watchCr("remediationrequests", { name: group.rrId }).pipe(
        Stream.runForEach((event) => onEvent(group, event)),
        Effect.catchAll((e) =>
          Effect.logWarning("status stream: watch gave up", e.message).pipe(
            Effect.zipRight(Effect.sync(() => group.subs.forEach((sub) => end(sub))))
          )
        )
      )

    const leave = (group: Group, sub: Sub) => {
      sub.closed = true
      if (!group.subs.delete(sub)) return
      subscribers--
      if (group.subs.size > 0 || groups.get(group.rrId) !== group) return
      groups.delete(group.rrId)
      group.unlisten?.()
      // Called from the connection's `close` event, outside any fiber.
      if (group.fiber !== undefined) runFork(Fiber.interrupt(group.fiber))
    }

    const shutdown = () => {
      const bytes = closingFrame("shutdown")
      return everySub((sub) => send(sub, bytes, "close"))
    }

    yield* Effect.sleep(config.keepaliveInterval).pipe(
      Effect.zipRight(everySub((sub) => send(sub, keepaliveFrame))),
      Effect.forever,
      Effect.forkScoped
    )
    const expiry = closingFrame("token_expiry")
    yield* Effect.sleep(sweepInterval).pipe(
      Effect.zipRight(Clock.currentTimeMillis),
      Effect.flatMap((now) => everySub((sub) => (sub.closeAt <= now ? send(sub, expiry, "end") : undefined))),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() => everySub((sub) => end(sub)))

    // The drain lives with the listener, built after this hub: its signal arrives with the first subscriber.
    const watchDrain = (draining: Deferred.Deferred<void>) =>
      Effect.suspend(() => {
        if (drains.has(draining)) return Effect.void
        drains.add(draining)
        return Effect.forkIn(Deferred.await(draining).pipe(Effect.zipRight(shutdown())), scope)
      })

    /**
     * Streams to `sink`: the current state first, then one `status/update` per phase transition, keepalives, and
     * the closing notice; it ends after a terminal phase, the closing notice, a drain, the RR's deletion, or a
     * drop. The subscription lasts until the sink closes.
     */
    const subscribe = (rrId: string, options: SubscribeOptions) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const existing = groups.get(rrId)
        const current = existing !== undefined && isNewer(existing.latest.metadata.resourceVersion, options.current.metadata.resourceVersion)
          ? existing.latest
          : options.current
        const first = updateFrame(current, now)
        const { sink } = options
        if (first.final || (yield* Deferred.isDone(options.draining))) {
          sink.write(first.bytes)
          return sink.end()
        }
        yield* watchDrain(options.draining)
        const closeAt = options.expiresAt.getTime() - Duration.toMillis(config.closingLead)
        const sub: Sub = { sink, lastPhase: first.phase, minRv: current.metadata.resourceVersion, closeAt, closed: false }
        const group: Group = existing ?? { rrId, subs: new Set(), latest: current, lastPhase: undefined, fiber: undefined, unlisten: undefined }
        group.subs.add(sub)
        subscribers++
        sink.onClose(() => leave(group, sub))
        sink.write(first.bytes)
        if (closeAt <= now) send(sub, expiry, "end")
        if (existing === undefined) {
          groups.set(rrId, group)
          group.fiber = yield* Effect.forkIn(watch(group), scope)
          if (Option.isSome(investigations)) {
            group.unlisten = investigations.value.listen(rrId, (e) => {
              const bytes = investigationFrame(e)
              for (const s of group.subs) send(s, bytes)
            })
          }
        }
      })

    return {
      subscribe,
      /** Open subscriptions (for the limit and the benchmark). */
      size: Effect.sync(() => subscribers),
      /** RRs currently watched. */
      watched: Effect.sync(() => groups.size),
      /** Subscribers dropped for being too slow, since start. */
      dropped: Effect.sync(() => dropped)
    } as const
  })
}) {}
