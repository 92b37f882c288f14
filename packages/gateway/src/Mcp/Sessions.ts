/**
 * MCP sessions (`Mcp-Session-Id`), each a web-standard transport of the official SDK plus its own `Server`, bound
 * to the user who opened it: another user's id answers as unknown, and a session id never authenticates (every
 * request runs the edge chain first). Each session, from its initialization on, holds a slot of the gateway-wide
 * pool (`SessionSlots`, shared with A2A conversations); with none free the `initialize` is refused. `DELETE /mcp`,
 * idling past `sessionIdleTimeout` and shutdown close a session and free its slot.
 * `mcp.session_init` is audited once per session id, when the SDK assigns it, with the protocol version the SDK's
 * server answers the initialize with (the client's when supported, else the latest).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Clock, Duration, Effect, ExecutionStrategy, Exit, Runtime, Schedule, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { SessionNotFound } from "@kubemend/core/Errors"
import { AgentClient, type AgentLink } from "../AgentClient.ts"
import type { Caller } from "../Edge/Chain.ts"
import { SessionSlots } from "../Edge/SessionSlots.ts"
import { GatewayAudit } from "../GatewayAudit.ts"
import { GatewayConfig } from "../GatewayConfig.ts"
import { GatewayMetrics } from "../GatewayMetrics.ts"
import { makeServerFactory } from "./Server.ts"

export interface McpSession {
  readonly owner: string
  readonly transport: WebStandardStreamableHTTPServerTransport
  readonly server: Server
  /** Requests being handled right now; an idle sweep never closes a busy session. */
  busy: number
  lastUsed: number
}

export class McpSessions extends Effect.Service<McpSessions>()("@kubemend/gateway/McpSessions", {
  scoped: Effect.gen(function* () {
    const config = yield* GatewayConfig
    const audit = yield* GatewayAudit
    const metrics = yield* GatewayMetrics
    const agents = yield* AgentClient
    const slots = yield* SessionSlots
    const makeServer = yield* makeServerFactory
    const scope = yield* Effect.scope
    const runtime = yield* Effect.runtime<never>()
    const runFork = Runtime.runFork(runtime)
    const open = new Map<string, McpSession & { readonly scope: Scope.CloseableScope; readonly slot: string }>()

    const publish = Effect.suspend(() => metrics.sessionsOpen(open.size))

    const closeSession = (id: string) =>
      Effect.suspend(() => {
        const s = open.get(id)
        if (s === undefined) return Effect.void
        open.delete(id)
        return Effect.promise(() => s.transport.close().catch(() => undefined)).pipe(
          Effect.zipRight(Scope.close(s.scope, Exit.void)),
          Effect.zipRight(slots.release(s.slot)),
          Effect.zipRight(publish)
        )
      })

    /**
     * A new session for `caller` (its `initialize` request is next). The slot is taken now, so concurrent
     * initializations cannot overshoot the limit; `settle` gives it back when the SDK did not start the session.
     */
    const create = Effect.fn("McpSessions.create")(function* (caller: Caller, requestedVersion: string | undefined) {
      const protocolVersion = requestedVersion !== undefined && SUPPORTED_PROTOCOL_VERSIONS.includes(requestedVersion)
        ? requestedVersion
        : LATEST_PROTOCOL_VERSION
      const slot = `mcp:${randomUUID()}`
      yield* slots.acquire(slot, caller.principal.user, "close an MCP session (DELETE /mcp) or retry later")
      const sessionScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      let id: string | undefined
      // eslint-disable-next-line prefer-const -- assigned below; the agent link's callback, made first, reads it
      let server: Server | undefined
      const link: AgentLink = yield* agents.link((params) => {
        void server?.sendLoggingMessage(params as Parameters<Server["sendLoggingMessage"]>[0]).catch(() => undefined)
      }).pipe(
        Scope.extend(sessionScope),
        Effect.onError(() => Effect.zipRight(Scope.close(sessionScope, Exit.void), slots.release(slot)))
      )
      const now = yield* Clock.currentTimeMillis
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          id = sid
          open.set(sid, Object.assign(session, { scope: sessionScope, slot }))
          runFork(Effect.zipRight(
            publish,
            audit.emit({
              type: "mcp.session_init",
              outcome: "success",
              userId: caller.principal.user,
              clientIp: caller.clientIp,
              correlationId: sid,
              data: { mcp_session_id: sid, protocol_version: protocolVersion }
            })
          ))
        },
        onsessionclosed: (sid) => {
          runFork(closeSession(sid))
        }
      })
      server = makeServer({ sessionId: () => id, agent: link })
      const session: McpSession = { owner: caller.principal.user, transport, server, busy: 0, lastUsed: now }
      const settle = Effect.suspend(() => {
        if (id !== undefined) return Effect.void
        return Effect.promise(() => transport.close().catch(() => undefined)).pipe(
          Effect.zipRight(Scope.close(sessionScope, Exit.void)),
          Effect.zipRight(slots.release(slot))
        )
      })
      yield* Effect.promise(() => server!.connect(transport)).pipe(Effect.onError(() => settle))
      return { session, settle } as const
    })

    /** The caller's own session `id`; someone else's answers exactly like an unknown id. */
    const lookup = (id: string, caller: Caller) =>
      Effect.suspend(() => {
        const s = open.get(id)
        return s === undefined || s.owner !== caller.principal.user
          ? Effect.fail(new SessionNotFound({ sessionId: id }))
          : Effect.succeed(s as McpSession)
      })

    /** Marks `session` busy around `effect`. */
    const using = <A, E, R>(session: McpSession, effect: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          session.busy++
        }),
        () => effect,
        () =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.sync(() => {
              session.busy--
              session.lastUsed = now
            }))
      )

    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const idle = Duration.toMillis(config.sessionIdleTimeout)
      const stale = [...open.entries()].filter(([, s]) => s.busy === 0 && now - s.lastUsed >= idle).map(([k]) => k)
      yield* Effect.forEach(stale, closeSession, { discard: true })
    })
    yield* sweep.pipe(
      Effect.repeat(Schedule.spaced(Duration.min(Duration.minutes(1), config.sessionIdleTimeout))),
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() => Effect.forEach([...open.keys()], closeSession, { discard: true }))
    yield* publish

    return { create, lookup, using, close: closeSession, count: Effect.sync(() => open.size) } as const
  })
}) {}
