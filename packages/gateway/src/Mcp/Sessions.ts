/**
 * MCP sessions (`Mcp-Session-Id`), each a web-standard transport of the official SDK plus its own `Server`, bound
 * to the user who opened it: another user's id answers as unknown, and a session id never authenticates (every
 * request runs the edge chain first). Each session, from its initialization on, holds a slot of the gateway-wide
 * pool (`SessionSlots`, shared with A2A conversations); with none free the `initialize` is refused. `DELETE /mcp`,
 * idling past `sessionIdleTimeout` and shutdown close a session and free its slot.
 * `mcp.session_init` is audited once per session id, when the SDK assigns it, with the protocol version the SDK's
 * server answers the initialize with (the client's when supported, else the latest).
 *
 * With Valkey (`SharedState`), a session is also a record there, written before its id reaches the client: a
 * replica that gets a request for a session it does not hold re-creates it from the record (SessionRecord.ts), so
 * sessions survive the replica that started them. A replica's idle sweep or shutdown then only drops its own copy;
 * the session ends (slot freed, record deleted) on `DELETE /mcp` or once no replica used it for the idle timeout.
 * Ending it is announced (`ended`) to every replica, which drops its copy at once, so a session deleted on one
 * replica answers 404 on all without a Valkey read per request; a replica that may have missed announcements
 * (its connection to Valkey was lost) checks the records of the copies it holds. What the agent sends a session
 * reaches its standalone GET stream on whichever replica holds it, once (Notifications.ts).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Clock, Deferred, Duration, Effect, ExecutionStrategy, Exit, Option, Queue, Runtime, Schedule, Scope, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { SessionNotFound } from "@kubemend/core/Errors"
import { AgentSessionsClient, type AgentLink } from "../AgentSessionsClient.ts"
import type { Caller } from "../Caller.ts"
import { SessionSlots } from "../Limits/SessionSlots.ts"
import { GatewayAudit } from "../GatewayAudit.ts"
import { GatewayConfig } from "../GatewayConfig.ts"
import { GatewayMetrics } from "../GatewayMetrics.ts"
import { SharedState } from "../SharedState.ts"
import { sessionNotifications } from "./Notifications.ts"
import { makeServerFactory } from "./Server.ts"
import { initializeParams, recordKey, replayHandshake, type SessionRecord } from "./SessionRecord.ts"

/** Where replicas announce the sessions that ended (their ids). */
const endedTopic = "mcp:ended"
/** Ended session ids remembered for re-creations in progress (a re-creation takes milliseconds). */
const maxEndedKept = 1000
/** Agent notifications of a session not yet sent on; past it the oldest are dropped (a stalled store). */
const outboxCapacity = 1024

export interface McpSession {
  readonly owner: string
  readonly transport: WebStandardStreamableHTTPServerTransport
  readonly server: Server
  /** Stops this copy's follow of an RR's investigation (another replica follows it now). */
  readonly unfollow: (rrId: string) => Effect.Effect<void>
  /** Requests being handled right now; an idle sweep never closes a busy session. */
  busy: number
  lastUsed: number
}

interface Open extends McpSession {
  readonly scope: Scope.CloseableScope
  readonly record: SessionRecord
  /** When the shared record last got `lastUsed`. */
  savedAt: number
}

export class McpSessions extends Effect.Service<McpSessions>()("@kubemend/gateway/McpSessions", {
  scoped: Effect.gen(function* () {
    const config = yield* GatewayConfig
    const audit = yield* GatewayAudit
    const metrics = yield* GatewayMetrics
    const agents = yield* AgentSessionsClient
    const slots = yield* SessionSlots
    const shared = yield* SharedState
    const makeServer = yield* makeServerFactory
    const open = new Map<string, Open>()
    const notifications = yield* sessionNotifications(shared, (id) => open.get(id))
    const scope = yield* Effect.scope
    const runtime = yield* Effect.runtime<never>()
    const runPromise = Runtime.runPromise(runtime)
    const idle = config.sessionIdleTimeout
    const idleMs = Duration.toMillis(idle)
    // One replica alone never needs a record: nobody else could serve the session.
    const sharing = shared.backend === "valkey"
    /** Sessions announced ended lately: one being re-created here meanwhile is dropped once it is. */
    const ended = new Set<string>()
    const adopting = new Map<string, Deferred.Deferred<McpSession, SessionNotFound>>()

    const publish = Effect.suspend(() => metrics.sessionsOpen(open.size))
    const save = (id: string, record: SessionRecord) => sharing ? shared.put(recordKey(id), JSON.stringify(record), idle) : Effect.void

    /** Closes this replica's copy; `end` also ends the session everywhere (slot freed, record deleted). */
    const closeSession = (id: string, end: boolean) =>
      Effect.suspend(() => {
        const s = open.get(id)
        if (s === undefined) return Effect.void
        open.delete(id)
        return Effect.promise(() => s.transport.close().catch(() => undefined)).pipe(
          Effect.zipRight(Scope.close(s.scope, Exit.void)),
          Effect.zipRight(
            end
              ? Effect.all([slots.release(s.record.slot, s.owner), ...(sharing ? [shared.remove(recordKey(id)), shared.announce(endedTopic, id)] : [])], {
                discard: true
              })
              : slots.forget(s.record.slot)
          ),
          Effect.zipRight(publish)
        )
      })

    /**
     * A transport + Server for `owner` whose session id comes from `sessionId`; `onInitialized` runs (and is
     * awaited by the SDK) when the handshake assigned it.
     */
    const build = (
      owner: string,
      sessionScope: Scope.CloseableScope,
      sessionId: () => string,
      onInitialized: (sid: string, session: McpSession) => Effect.Effect<void>
    ) =>
      Effect.gen(function* () {
        let id: string | undefined
        // The link calls back outside any fiber: its notifications go out in order from a queue of the session.
        const outbox = yield* Queue.sliding<unknown>(outboxCapacity)
        const link = yield* agents.link((params) => void Queue.unsafeOffer(outbox, params)).pipe(Scope.extend(sessionScope))
        // Whichever replica follows the session's investigation from now on, only one does.
        const agent: AgentLink = {
          call: link.call,
          follow: (rrId, agentSession, after, user) => Effect.zipRight(link.follow(rrId, agentSession, after, user), notifications.claim(id, rrId))
        }
        const now = yield* Clock.currentTimeMillis
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: sessionId,
          onsessioninitialized: (sid) => {
            id = sid
            return runPromise(onInitialized(sid, session))
          },
          // Awaited by the SDK: the DELETE is answered once every replica was told.
          onsessionclosed: (sid) => runPromise(closeSession(sid, true))
        })
        const server = makeServer({ sessionId: () => id, agent })
        const session: McpSession = { owner, transport, server, unfollow: link.unfollow, busy: 0, lastUsed: now }
        yield* Queue.take(outbox).pipe(
          Effect.flatMap((params) => notifications.deliver(id, session, params)),
          Effect.forever,
          Effect.forkIn(sessionScope)
        )
        yield* Effect.promise(() => server.connect(transport))
        return session
      })

    /**
     * A new session for `caller` (its `initialize` request is next). The slot is taken now, so concurrent
     * initializations cannot overshoot the limit; `settle` gives it back when the SDK did not start the session.
     */
    const create = Effect.fn("McpSessions.create")(function* (caller: Caller, initialize: { readonly protocolVersion?: unknown } | undefined) {
      const requested = initialize?.protocolVersion
      const protocolVersion = typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION
      const owner = caller.principal.user
      const slot = `mcp:${randomUUID()}`
      yield* slots.acquire(slot, owner, idle, "close an MCP session (DELETE /mcp) or retry later")
      const sessionScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      let started = false
      const cleanup = Effect.all([Scope.close(sessionScope, Exit.void), slots.release(slot, owner)], { discard: true })
      const session = yield* build(owner, sessionScope, () => randomUUID(), (sid, session) =>
        Effect.gen(function* () {
          started = true
          const now = yield* Clock.currentTimeMillis
          const record: SessionRecord = { owner, slot, initialize: initializeParams(initialize, protocolVersion), createdAt: now, lastUsed: now }
          // Before the id reaches the client: its next request may land on another replica.
          yield* save(sid, record)
          open.set(sid, Object.assign(session, { scope: sessionScope, record, savedAt: now }))
          yield* publish
          yield* audit.emit({
            type: "mcp.session_init",
            outcome: "success",
            userId: owner,
            clientIp: caller.clientIp,
            correlationId: sid,
            data: { mcp_session_id: sid, protocol_version: protocolVersion }
          })
        })).pipe(Effect.onError(() => cleanup))
      const settle = Effect.suspend(() =>
        started ? Effect.void : Effect.promise(() => session.transport.close().catch(() => undefined)).pipe(Effect.zipRight(cleanup))
      )
      return { session, settle } as const
    })

    /** Re-creates session `id` from its shared record when `caller` owns it. */
    const adopt = (id: string, caller: Caller) =>
      Effect.gen(function* () {
        const missing = new SessionNotFound({ sessionId: id })
        const raw = sharing ? yield* shared.get(recordKey(id)) : Option.none()
        if (Option.isNone(raw)) return yield* missing
        const record = JSON.parse(raw.value) as SessionRecord
        if (record.owner !== caller.principal.user) return yield* missing
        const sessionScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
        const now = yield* Clock.currentTimeMillis
        const session = yield* build(record.owner, sessionScope, () => id, (sid, session) =>
          Effect.zipRight(
            Effect.sync(() => void open.set(sid, Object.assign(session, { scope: sessionScope, record, savedAt: now }))),
            publish
          ))
        const replayed = yield* replayHandshake(session.transport, id, record.initialize)
        if (replayed && ended.has(id)) {
          yield* closeSession(id, false)
          return yield* missing
        }
        if (!replayed) {
          yield* Effect.logWarning("could not re-create an MCP session from its record").pipe(Effect.annotateLogs("mcp_session_id", id))
          yield* closeSession(id, false)
          yield* Scope.close(sessionScope, Exit.void)
          return yield* missing
        }
        yield* slots.touch(record.slot, record.owner, idle)
        yield* Effect.logDebug("MCP session re-created from the shared state").pipe(Effect.annotateLogs("mcp_session_id", id))
        return session
      })

    /** The caller's own session `id` (held here or re-created from the shared state); someone else's answers as unknown. */
    const lookup = (id: string, caller: Caller): Effect.Effect<McpSession, SessionNotFound> =>
      Effect.suspend(() => {
        const s = open.get(id)
        if (s !== undefined) return s.owner === caller.principal.user ? Effect.succeed(s) : Effect.fail(new SessionNotFound({ sessionId: id }))
        if (!sharing) return Effect.fail(new SessionNotFound({ sessionId: id }))
        const pending = adopting.get(id)
        if (pending !== undefined) return Effect.zipRight(Deferred.await(pending), lookup(id, caller))
        // Concurrent first requests on this replica re-create the session once.
        return Effect.gen(function* () {
          const done = yield* Deferred.make<McpSession, SessionNotFound>()
          adopting.set(id, done)
          return yield* adopt(id, caller).pipe(
            Effect.exit,
            Effect.tap((exit) => Deferred.done(done, exit)),
            Effect.ensuring(Effect.sync(() => void adopting.delete(id))),
            Effect.flatten
          )
        })
      })

    /** Marks `session` busy around `effect`; a used session keeps its slot and record alive. */
    const using = <A, E, R>(session: McpSession, effect: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          session.busy++
        }),
        () => effect,
        () =>
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            session.busy--
            session.lastUsed = now
            const s = session as Open
            if (s.record === undefined) return
            yield* slots.touch(s.record.slot, s.owner, idle)
            // Spread out: one record write per tenth of the idle timeout, not one per request.
            if (sharing && now - s.savedAt >= idleMs / 10) {
              s.savedAt = now
              yield* save(s.transport.sessionId ?? "", { ...s.record, lastUsed: now })
            }
          })
      )

    /** Whether nobody (here or on another replica) used session `id` for the idle timeout. */
    const idleEverywhere = (id: string, now: number) =>
      sharing
        ? Effect.map(
          shared.get(recordKey(id)),
          Option.match({ onNone: () => true, onSome: (raw) => now - (JSON.parse(raw) as SessionRecord).lastUsed >= idleMs })
        )
        : Effect.succeed(true)

    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const stale = [...open.entries()].filter(([, s]) => s.busy === 0 && now - s.lastUsed >= idleMs).map(([k]) => k)
      yield* Effect.forEach(stale, (id) => Effect.flatMap(idleEverywhere(id, now), (end) => closeSession(id, end)), { discard: true })
    })
    yield* sweep.pipe(Effect.repeat(Schedule.spaced(Duration.min(Duration.minutes(1), idle))), Effect.forkScoped)

    /** Drops this replica's copy of each session that ended elsewhere; after a gap, of each whose record is gone. */
    const followEnds = shared.notices(endedTopic).pipe(
      Stream.runForEach((notice) =>
        notice._tag === "Announced"
          ? Effect.zipRight(Effect.sync(() => remember(notice.message)), closeSession(notice.message, false))
          : Effect.forEach([...open.keys()], (id) =>
            Effect.flatMap(shared.get(recordKey(id)), (record) => Option.isNone(record) ? closeSession(id, false) : Effect.void), { discard: true })
      )
    )
    const remember = (id: string) => {
      ended.add(id)
      if (ended.size > maxEndedKept) ended.delete(ended.values().next().value!)
    }
    if (sharing) yield* Effect.forkScoped(followEnds)
    // Shared sessions outlive this replica: another one serves their next request.
    yield* Effect.addFinalizer(() => Effect.forEach([...open.keys()], (id) => closeSession(id, !sharing), { discard: true }))
    yield* publish

    return { create, lookup, using, close: (id: string) => closeSession(id, true), count: Effect.sync(() => open.size) } as const
  })
}) {}
