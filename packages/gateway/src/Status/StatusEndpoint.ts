/**
 * `POST /a2a/status`: JSON-RPC `status/subscribe` with `params.rr_id`, answered with an SSE stream of the RR's
 * phase. Errors before the stream are HTTP 400 with a JSON-RPC error body whose messages are the original's
 * (`invalid_request`, `method_not_found`, `invalid_params`, `rr_not_found`); auth and rate-limit failures are
 * RFC 7807 problems like everywhere else.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { type DomainError, InvalidParams, InvalidRequest, MethodNotFound, RrNotFound, SessionLimitReached } from "@kubemend/core/Errors"
import * as JsonRpc from "@kubemend/core/JsonRpc"
import { Drain } from "@kubemend/core/Drain"
import { K8s } from "@kubemend/core/K8s"
import { problemResponse, wire } from "@kubemend/core/Wire"
import { readBody } from "../Edge/Body.ts"
import { Edge } from "../Edge/Chain.ts"
import { GatewayConfig } from "../GatewayConfig.ts"
import { StatusConfig } from "./Config.ts"
import { type Sink, StatusHub } from "./Hub.ts"

export const statusEndpoint = "/a2a/status"

type StatusError = InvalidRequest | MethodNotFound | InvalidParams | RrNotFound

const messages: Record<StatusError["_tag"], string> = {
  InvalidRequest: "invalid_request",
  MethodNotFound: "method_not_found",
  InvalidParams: "invalid_params",
  RrNotFound: "rr_not_found"
}

export const rpcErrorResponse = (id: JsonRpc.JsonRpcId, e: StatusError) =>
  HttpServerResponse.unsafeJson(JsonRpc.failure(id, { code: wire[e._tag].rpc, message: messages[e._tag] }), { status: 400 })

/**
 * Hands the response over to the hub and lets the request finish. A request fiber kept alive for the life of a
 * stream holds its whole middleware and handler continuation (about 40 KB, ten times the connection itself); the
 * platform writes nothing to a response it sees as ended, so marking this one ended lets its fiber complete while
 * the hub keeps writing to it (Node's own bookkeeping does not read the overridden getter). Listeners left on the
 * request and response by the body reader and the platform would keep the finished fiber reachable for the life
 * of the connection, so they go (the body has been read in full); the hub's own `close` listener comes after.
 */
const detach = (req: IncomingMessage, res: ServerResponse) => {
  for (const listener of res.listeners("close")) res.removeListener("close", listener as () => void)
  for (const event of ["data", "end", "error", "aborted"]) req.removeAllListeners(event)
  req.on("error", () => {})
  Object.defineProperty(res, "writableEnded", { get: () => true, configurable: true })
}

/** A subscriber's end of the stream over a Node response. */
export const responseSink = (res: ServerResponse): Sink => ({
  write: (bytes) => void res.write(bytes),
  end: (closeConnection) => {
    const socket = res.socket
    res.end(closeConnection === true && socket !== null ? () => void socket.end() : undefined)
  },
  pending: () => res.writableLength,
  destroy: () => void res.destroy(),
  onClose: (f) => void res.once("close", f)
})

export const sseHeaders = {
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no"
} as const

/** The subscribe request's `rr_id`, or the JSON-RPC error for the body. */
const parse = (text: string) =>
  Effect.gen(function* () {
    const message = yield* JsonRpc.decode(text).pipe(
      Effect.catchTag("ParseError", (e) => Effect.fail(new InvalidRequest(e.detail === undefined ? {} : { detail: e.detail })))
    )
    if (message._tag === "Batch") return yield* new InvalidRequest({ detail: "batches are not supported" })
    const { request } = message
    if (request.method !== "status/subscribe") return yield* new MethodNotFound({ method: request.method })
    const params = request.params
    const rrId = params !== undefined && !Array.isArray(params) ? (params as Record<string, unknown>).rr_id : undefined
    if (typeof rrId !== "string" || rrId.trim() === "") return yield* new InvalidParams({ detail: "params.rr_id is required" })
    return { id: request.id ?? null, rrId }
  })

const isDomainError = (u: unknown): u is DomainError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof (u as { _tag: unknown })._tag === "string" && (u as { _tag: string })._tag in wire

export const statusHandler = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  // The chain without the console gate: every authenticated user may subscribe.
  const caller = yield* (yield* Edge).identify(request, statusEndpoint)
  const config = yield* GatewayConfig
  const settings = yield* StatusConfig
  const hub = yield* StatusHub
  const k8s = yield* K8s
  const text = yield* readBody(request, config.maxBodyBytes)
  const parsed = yield* Effect.either(parse(text))
  if (parsed._tag === "Left") return rpcErrorResponse(JsonRpc.salvageId(text), parsed.left)
  const { id, rrId } = parsed.right
  // Any failed read answers -32001, as the original does: the caller learns nothing about why.
  const rr = yield* Effect.either(k8s.getCr("remediationrequests", rrId))
  if (rr._tag === "Left") return rpcErrorResponse(id, new RrNotFound({ rrId }))
  if ((yield* hub.size) >= settings.maxSubscribers) {
    return yield* new SessionLimitReached({ limit: settings.maxSubscribers, detail: "too many open status streams" })
  }
  const res = NodeHttpServerRequest.toServerResponse(request)
  res.writeHead(200, { "content-type": "text/event-stream", ...sseHeaders })
  detach(NodeHttpServerRequest.toIncomingMessage(request), res)
  yield* hub.subscribe(rrId, {
    current: rr.right,
    expiresAt: caller.principal.expiresAt,
    sink: responseSink(res),
    draining: (yield* Drain).started
  })
  // What the platform records (metrics, tracing); the response itself was written above.
  return HttpServerResponse.empty({ status: 200 })
}).pipe(Effect.catchIf(isDomainError, (e) => problemResponse(e)), Effect.withSpan("Status.subscribe"))
