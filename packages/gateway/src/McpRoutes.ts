/**
 * `/mcp` on the gateway's HttpServer: MCP Streamable HTTP (revision 2025-03-26) through the official SDK's
 * web-standard server transport. Every request runs the edge chain first; then `POST` without a session id must
 * be `initialize` (which opens a session), anything else names the caller's own session. `Accept` picks the
 * answer: with `text/event-stream` the SDK's SSE stream, with only `application/json` one JSON body.
 *
 * A `POST` is read inside the chain, after the token and before the limits (`Edge.serveRead`), so that a single
 * `tools/call` takes its tool-call token with them in one round trip of the shared state; what reading it refuses
 * (406, 415, 413, JSON-RPC parse errors) is answered after the limits and the console gate, in the same order as
 * when the handler read it.
 */
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Deferred, Effect, Either } from "effect"
import { Drain } from "@kubemend/core/Drain"
import { ServerConfig } from "@kubemend/core/Servers"
import { InternalError, InvalidRequest, McpDisabled, NotAcceptable, type PayloadTooLarge, UnsupportedMediaType } from "@kubemend/core/Errors"
import { maxJsonDepth, nestsDeeperThan } from "@kubemend/core/JsonDepth"
import { problemResponse } from "@kubemend/core/Wire"
import { readBody } from "./Edge/Body.ts"
import type { Caller } from "./Caller.ts"
import { Edge } from "./Edge/Chain.ts"
import { GatewayConfig } from "./GatewayConfig.ts"
import { McpSessions, type McpSession } from "./Mcp/Sessions.ts"
import { authInfoFor } from "./Mcp/Server.ts"
import { collectResponses, forwardedHeaders, pipeSse, requestIds } from "./Mcp/Sse.ts"

const forwarded = ["content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"]

const jsonRpcError = (code: number, message: string) => HttpServerResponse.unsafeJson({ jsonrpc: "2.0", id: null, error: { code, message } }, { status: 400 })

/** `tools/call` without a params object: answered here as invalid params (the SDK would say internal error). */
const missingCallParams = (body: unknown) => {
  const m = body as { id?: unknown; method?: unknown; params?: unknown } | null
  return !Array.isArray(body) && m !== null && typeof m === "object" && m.method === "tools/call" &&
    (typeof m.params !== "object" || m.params === null || typeof (m.params as { name?: unknown }).name !== "string")
}

/** A single `tools/call` request (not a notification) naming its tool: it takes its tool-call token at the edge. */
const isToolCall = (body: unknown) => {
  const m = body as { id?: unknown; method?: unknown; params?: { name?: unknown } } | null
  return !Array.isArray(body) && typeof m === "object" && m !== null && m.method === "tools/call" &&
    (typeof m.id === "string" || typeof m.id === "number") && typeof m.params?.name === "string"
}

/** A POST as read before the limits: its JSON-RPC body, or the JSON-RPC error that answers it. */
type Posted = { readonly body: unknown } | { readonly answer: HttpServerResponse.HttpServerResponse }
/** A POST as read, or why it cannot be (answered once the limits and the console gate let the request through). */
type Read = Either.Either<Posted, NotAcceptable | UnsupportedMediaType | PayloadTooLarge | InvalidRequest>

const initializeOf = (body: unknown) =>
  (Array.isArray(body) ? body : [body]).find((m) => (m as { method?: unknown } | null)?.method === "initialize") as
    | { readonly params?: { readonly protocolVersion?: unknown } }
    | undefined

export const McpRoutes = Effect.gen(function* () {
  const edge = yield* Edge
  const sessions = yield* McpSessions
  const config = yield* GatewayConfig
  const drain = yield* Drain
  // Tool calls run through the drain: counted in flight, and stopped with a tool error when their grace is over.
  const shutdown = drain.shutdown((yield* ServerConfig).drainTimeout)

  /** Hands one HTTP request to the session's transport and turns its answer into ours. */
  const dispatch = (
    session: McpSession,
    request: HttpServerRequest.HttpServerRequest,
    caller: Caller,
    options: { readonly body?: unknown; readonly json?: boolean }
  ) =>
    Effect.gen(function* () {
      const headers = new Headers()
      for (const name of forwarded) {
        const v = request.headers[name]
        if (v !== undefined) headers.set(name, v)
      }
      headers.set("accept", request.method === "GET" ? "text/event-stream" : "application/json, text/event-stream")
      const webRequest = new Request(`http://gateway${request.url}`, { method: request.method, headers })
      const response = yield* Effect.promise(() =>
        session.transport.handleRequest(webRequest, {
          ...(options.body === undefined ? {} : { parsedBody: options.body }),
          authInfo: authInfoFor(caller, shutdown)
        })
      )
      const sse = (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
      if (!sse || response.body === null) {
        const text = yield* Effect.promise(() => response.text())
        return HttpServerResponse.text(text, {
          status: response.status,
          headers: forwardedHeaders(response)
        })
      }
      if (options.json === true) {
        const responses = yield* Effect.tryPromise(() => collectResponses(response, requestIds(options.body), config.sseMaxBufferedBytes)).pipe(Effect.orDie)
        if (responses.length === 0) return yield* problemResponse(new InternalError({ detail: "no response was produced" }))
        return HttpServerResponse.unsafeJson(Array.isArray(options.body) ? responses : responses[0], {
          headers: session.transport.sessionId === undefined ? {} : { "mcp-session-id": session.transport.sessionId }
        })
      }
      const piped = pipeSse(
        NodeHttpServerRequest.toServerResponse(request),
        request.method,
        response,
        config.sseMaxBufferedBytes,
        config.streamKeepaliveInterval
      )
      // A POST's stream carries the answers to its requests: it ends once they are sent, which the drain waits for
      // (a tool call gets its grace, then a tool error). A GET stream only waits for server messages: it ends when
      // draining starts, so it does not hold the shutdown up.
      if (request.method === "GET") yield* Effect.raceFirst(piped, Deferred.await(drain.started))
      else yield* piped
      // Already written; the status is what request metrics record.
      return HttpServerResponse.empty({ status: response.status })
    })

  /** Reads a POST for the edge (`Edge.serveRead`): refusals are kept for `post` to answer. */
  const readPost = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function* () {
      const accept = request.headers["accept"] ?? ""
      if (!accept.includes("text/event-stream") && !accept.includes("application/json") && !accept.includes("*/*")) {
        return yield* new NotAcceptable({ detail: "Accept must include application/json or text/event-stream" })
      }
      if (!(request.headers["content-type"] ?? "").toLowerCase().startsWith("application/json")) {
        return yield* new UnsupportedMediaType({ detail: "Content-Type must be application/json" })
      }
      const text = yield* readBody(request, config.maxBodyBytes)
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        return { answer: jsonRpcError(-32700, "Parse error: invalid JSON") }
      }
      if (Array.isArray(body) && body.length === 0) return { answer: jsonRpcError(-32600, "Invalid Request: empty batch") }
      if (nestsDeeperThan(body)) return { answer: jsonRpcError(-32600, `Invalid Request: the request nests deeper than ${maxJsonDepth} levels`) }
      if (missingCallParams(body)) {
        const id = (body as { id?: unknown }).id
        return {
          answer: HttpServerResponse.unsafeJson({
            jsonrpc: "2.0",
            id: typeof id === "string" || typeof id === "number" ? id : null,
            error: { code: -32602, message: "Invalid params: tools/call needs params with a tool name" }
          })
        }
      }
      return { body }
    }).pipe(
      Effect.either,
      Effect.map((posted: Read) => ({
        input: posted,
        toolCall: Either.isRight(posted) && "body" in posted.right && isToolCall(posted.right.body)
      }))
    )

  const post = (caller: Caller, request: HttpServerRequest.HttpServerRequest, read: Read) =>
    Effect.gen(function* () {
      const sse = (request.headers["accept"] ?? "").includes("text/event-stream")
      const posted = yield* read
      if ("answer" in posted) return posted.answer
      const { body } = posted
      const id = request.headers["mcp-session-id"]
      if (id === undefined) {
        const initialize = initializeOf(body)
        if (initialize === undefined) {
          return yield* new InvalidRequest({ detail: "Mcp-Session-Id header is required (send initialize first)" })
        }
        const { session, settle } = yield* sessions.create(caller, initialize.params)
        return yield* dispatch(session, request, caller, { body, json: !sse }).pipe(Effect.ensuring(settle))
      }
      const session = yield* sessions.lookup(id, caller)
      return yield* sessions.using(session, dispatch(session, request, caller, { body, json: !sse }))
    })

  const other = (caller: Caller, request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function* () {
      const id = request.headers["mcp-session-id"]
      if (id === undefined) return yield* new InvalidRequest({ detail: "Mcp-Session-Id header is required" })
      const session = yield* sessions.lookup(id, caller)
      return yield* sessions.using(session, dispatch(session, request, caller, {}))
    })

  const disabled = problemResponse(new McpDisabled({ detail: "MCP is disabled on this gateway" }))

  return HttpRouter.empty.pipe(
    HttpRouter.post("/mcp", config.mcpEnabled ? edge.serveRead("/mcp", readPost, post) : disabled),
    HttpRouter.get("/mcp", config.mcpEnabled ? edge.serve("/mcp", other) : disabled),
    HttpRouter.del("/mcp", config.mcpEnabled ? edge.serve("/mcp", other) : disabled)
  )
})
