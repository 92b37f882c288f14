/**
 * `POST /api/v1/mcp`: the interactive MCP server, stateless Streamable HTTP (a fresh low-level `Server` and
 * transport per request, so no MCP session state lives here; the investigation's state is keyed by RR). Progress of
 * a call (the opening analysis of a `start`, a `message` turn) reaches the client as `notifications/message`
 * (logger `kubemend-interactive`) and, when the client sent a progress token, `notifications/progress`, on the
 * call's SSE response; the events published before the call answers are delivered before its result, and an
 * answer about a session carries `event_seq`, the last of its events the call delivered: a subscriber of the
 * session's REST event stream (`GET /api/v1/incident/session/<id>/stream`, `Last-Event-ID: <event_seq>`) goes on
 * from there without a gap or a repeat (how the gateway follows an investigation between calls).
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, type CallToolResult, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect, Fiber, Layer, Option, Runtime, Stream, SubscriptionRef } from "effect"
import { Audit } from "@kubemend/core/Audit"
import { auditRefusal } from "@kubemend/core/EndpointAccess"
import { McpDisabled } from "@kubemend/core/Errors"
import { maxJsonDepth, nestsDeeperThan } from "@kubemend/core/JsonDepth"
import { problemResponse } from "@kubemend/core/Wire"
import { AgentConfig, InteractiveAuthConfigLive } from "../AgentConfig.ts"
import { describeSessionEvent } from "@kubemend/core/domain/Incident"
import type { SessionEvent } from "../Sessions/Session.ts"
import { type Acting, Callers, McpPath } from "./Callers.ts"
import { Autonomous } from "./Autonomous.ts"
import { Investigations } from "./Investigations.ts"
import { type LogPosition, Registry } from "./Registry.ts"
import { SessionLeases } from "./Leases.ts"
import { dispatch, rrOf, toolSpecs } from "./Tools.ts"

export { McpPath }
const maxBodyBytes = 1024 * 1024

const text = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  ...(typeof value === "object" && value !== null && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {})
})
const toolError = (message: string): CallToolResult => ({ content: [{ type: "text", text: message }], isError: true })

/** Longest wait, after a call answered, for its last events to go out before the result. */
const flushWait = Duration.seconds(1)

/**
 * Runs `effect` while forwarding the RR's session events to `notify`; when it is done, the events published so far
 * are forwarded (bounded by `flushWait`) before the forwarder stops, so the last progress precedes the result.
 * Answers the result with the position of the last event forwarded.
 */
const withProgress = <A, E>(
  registry: Registry,
  rr: string,
  effect: Effect.Effect<A, E>,
  notify: (f: { readonly sessionId: string; readonly event: SessionEvent }) => Effect.Effect<void>
): Effect.Effect<readonly [A, LogPosition | undefined], E> =>
  Effect.scoped(Effect.gen(function* () {
    // Where the log stood before following: a call that publishes nothing has nothing to flush.
    const sent = yield* SubscriptionRef.make(yield* registry.position(rr))
    const events = yield* registry.follow(rr)
    const forwarding = yield* events.pipe(
      Stream.runForEach((f) => Effect.zipRight(notify(f), SubscriptionRef.set(sent, { sessionId: f.sessionId, seq: f.event.seq }))),
      Effect.fork
    )
    const flush = Effect.gen(function* () {
      const target = yield* registry.position(rr)
      if (target === undefined || target.seq === 0) return
      yield* sent.changes.pipe(
        Stream.takeUntil((p) => p !== undefined && p.sessionId === target.sessionId && p.seq >= target.seq),
        Stream.runDrain,
        Effect.timeoutOption(flushWait)
      )
    })
    const value = yield* effect.pipe(Effect.ensuring(Effect.zipRight(flush, Fiber.interrupt(forwarding))))
    return [value, yield* SubscriptionRef.get(sent)] as const
  }))

/** A session answer gains `event_seq` when the position is in that session (else the stream starts at its log). */
const withEventSeq = (value: unknown, at: LogPosition | undefined): unknown => {
  const o = value as { session_id?: unknown } | null
  return typeof o === "object" && o !== null && at !== undefined && o.session_id === at.sessionId ? { ...o, event_seq: at.seq } : value
}

const makeHandler = Effect.gen(function* () {
  const config = yield* AgentConfig
  const callers = yield* Callers
  const audit = yield* Audit
  const registry = yield* Registry
  const call = dispatch(yield* Investigations, yield* Autonomous, config.toolPrefix)
  const tools = toolSpecs(config.toolPrefix)

  const server = (caller: Acting, runtime: Runtime.Runtime<never>) => {
    const mcp = new Server({ name: "kubemend-agent", version: "1.0.0" }, { capabilities: { tools: {}, logging: {} } })
    mcp.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((t) => ({ ...t, inputSchema: t.inputSchema as never })) }))
    mcp.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const effect = call(request.params.name, request.params.arguments, caller)
      if (effect === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`)
      const token = request.params._meta?.progressToken
      let progress = 0
      const notify = ({ event: e, sessionId }: { readonly sessionId: string; readonly event: SessionEvent }) => {
        const message = describeSessionEvent(e.type, e.data)
        if (message === undefined) return Effect.void
        const data = {
          event: e.type,
          message,
          ...e.data,
          rr_id: Option.getOrUndefined(rrOf(request.params.arguments)),
          session_id: sessionId,
          seq: e.seq,
          timestamp: e.timestamp
        }
        return Effect.promise(() =>
          Promise.all([
            extra.sendNotification({ method: "notifications/message", params: { level: "info", logger: "kubemend-interactive", data } }),
            token === undefined
              ? Promise.resolve()
              : extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: ++progress, message } })
          ]).catch(() => undefined)
        )
      }
      const program = Option.match(rrOf(request.params.arguments), {
        onNone: () => effect,
        onSome: (rr) => Effect.map(withProgress(registry, rr, effect, notify), ([value, at]) => withEventSeq(value, at))
      }).pipe(
        Effect.match({ onSuccess: text, onFailure: (e) => toolError(e.message) }),
        Effect.catchAllDefect((d) => Effect.logError("interactive tool crashed", d).pipe(Effect.as(toolError("internal error")))),
        Effect.withSpan("Mcp.callTool", { attributes: { tool: request.params.name } })
      )
      return Runtime.runPromise(runtime, program, { signal: extra.signal })
    })
    return mcp
  }

  /** The caller of the current request, or the refusal to answer (401/403 problem+json, audited). */
  const admit = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const clientIp = Option.getOrUndefined(request.remoteAddress)
    return yield* callers.resolve(request.headers, clientIp).pipe(
      Effect.tapError((refused) => auditRefusal("agent", audit.emit, request, refused, clientIp)),
      Effect.catchAll((refused) => Effect.flatMap(problemResponse(refused.error, McpPath), Effect.fail))
    )
  })

  const handler = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const caller = yield* Effect.either(admit)
    if (caller._tag === "Left") return caller.left
    if (!config.interactive.enabled) {
      return yield* problemResponse(new McpDisabled({ detail: "interactive sessions are disabled (interactive.enabled)" }), McpPath)
    }
    const body = yield* request.json.pipe(HttpServerRequest.withMaxBodySize(Option.some(maxBodyBytes)), Effect.option)
    if (Option.isNone(body)) {
      return yield* HttpServerResponse.json(
        { jsonrpc: "2.0", id: null, error: { code: ErrorCode.ParseError, message: "Parse error: the body is not JSON" } },
        { status: 400 }
      )
    }
    if (nestsDeeperThan(body.value)) {
      return yield* HttpServerResponse.json(
        {
          jsonrpc: "2.0",
          id: null,
          error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: the request nests deeper than ${maxJsonDepth} levels` }
        },
        { status: 400 }
      )
    }
    const runtime = yield* Effect.runtime<never>()
    const mcp = server(caller.right, runtime)
    const transport = new StreamableHTTPServerTransport({})
    yield* Effect.promise(() => mcp.connect(transport))
    const req = NodeHttpServerRequest.toIncomingMessage(request)
    const res = NodeHttpServerRequest.toServerResponse(request)
    // The transport writes the Node response itself; the request is done when that response closes.
    yield* Effect.async<void>((resume) => {
      res.once("close", () => resume(Effect.void))
      transport.handleRequest(req, res, body.value).catch((e) => {
        if (!res.headersSent) res.writeHead(500).end()
        resume(Effect.logError("mcp transport failed", e))
      })
    }).pipe(Effect.ensuring(Effect.promise(() => mcp.close().catch(() => undefined))))
    return HttpServerResponse.empty()
  })

  // Stateless: no standalone notification stream and no MCP session to delete (clients accept 405 for both).
  const notAllowed = Effect.match(admit, {
    onFailure: (refusal) => refusal,
    onSuccess: () => HttpServerResponse.text("only POST is supported", { status: 405, headers: { allow: "POST" } })
  })
  return { handler, notAllowed }
})

/** The route, added to the API server's router. */
export const McpRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const { handler, notAllowed } = yield* makeHandler
    yield* router.post(McpPath, handler)
    yield* router.get(McpPath, notAllowed)
    yield* router.del(McpPath, notAllowed)
  })
)

/** The interactive services: leases (orphans reclaimed at start), investigations, autonomous starts, callers. */
export const InteractiveLive = Layer.merge(Investigations.Default, Autonomous.Default).pipe(
  Layer.provideMerge(Registry.Default),
  Layer.provideMerge(SessionLeases.Default),
  Layer.provideMerge(Callers.layer().pipe(Layer.provide(InteractiveAuthConfigLive)))
)
