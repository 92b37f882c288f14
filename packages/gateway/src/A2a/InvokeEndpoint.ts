/**
 * `POST /a2a/invoke` (and its alias `POST /`): the edge chain of `/mcp` (per-IP limit, token, per-user limit,
 * console gate), then one JSON-RPC 2.0 request in either A2A dialect. Protocol and admission failures are
 * JSON-RPC errors with the standard A2A codes; everything that happens inside a task is the task's state.
 */
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { type Duration, Effect, Stream } from "effect"
import { Drain } from "@kubemend/core/Drain"
import { type DomainError, InvalidRequest, MethodNotFound } from "@kubemend/core/Errors"
import * as JsonRpc from "@kubemend/core/JsonRpc"
import { ServerConfig } from "@kubemend/core/Servers"
import { toJsonRpcError } from "@kubemend/core/Wire"
import { readBody } from "../Edge/Body.ts"
import type { Caller } from "../Caller.ts"
import { Edge } from "../Edge/Chain.ts"
import { GatewayConfig } from "../GatewayConfig.ts"
import { A2aAgent } from "./Agent.ts"
import { a2aErrorObject, PushNotificationNotSupported, UnsupportedOperation } from "./Errors.ts"
import type { TaskEvent, TaskView } from "./Model.ts"
import * as Protocol from "./Protocol.ts"
import { Tasks } from "./Tasks.ts"

type RpcError = DomainError | PushNotificationNotSupported | UnsupportedOperation

const errorObject = (e: RpcError) => e._tag === "PushNotificationNotSupported" || e._tag === "UnsupportedOperation" ? a2aErrorObject(e) : toJsonRpcError(e)

const json = (body: unknown) => HttpServerResponse.unsafeJson(body)

const encoder = new TextEncoder()

const keepaliveComment = encoder.encode(": keepalive\n\n")

/** The results as SSE events, with a `: keepalive` comment every `keepalive` until the results end. */
export const sseFrames = <E, R>(id: JsonRpc.JsonRpcId, results: Stream.Stream<unknown, E, R>, keepalive: Duration.Duration) =>
  results.pipe(
    Stream.map((r) => encoder.encode(`data: ${JSON.stringify(JsonRpc.success(id, r))}\n\n`)),
    Stream.merge(Stream.repeatEffect(Effect.as(Effect.sleep(keepalive), keepaliveComment)), { haltStrategy: "left" })
  )

const sse = (id: JsonRpc.JsonRpcId, results: Stream.Stream<unknown>, keepalive: Duration.Duration) =>
  HttpServerResponse.stream(
    sseFrames(id, results, keepalive),
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" } }
  )

const taskStream = (v: Protocol.Version, snapshot: TaskView, events: Stream.Stream<TaskEvent>) =>
  Stream.concat(Stream.make(Protocol.streamTask(v, snapshot)), Stream.map(events, (e) => Protocol.streamEvent(v, e)))

/** The drain as tasks see it (the listener's Drain is built after the agent, so it comes with each request). */
const shutdownOf = Effect.gen(function* () {
  const drain = yield* Drain
  const { drainTimeout } = yield* ServerConfig
  return drain.shutdown(drainTimeout)
})

/** One decoded request, answered. */
const dispatch = (caller: Caller, request: JsonRpc.JsonRpcRequest) =>
  Effect.gen(function* () {
    const id = request.id ?? null
    const found = Protocol.operationOf(request.method)
    if (found === undefined) return yield* new MethodNotFound({ method: request.method })
    const [op, v] = found
    const owner = caller.principal.user
    switch (op) {
      case "send": {
        const agent = yield* A2aAgent
        const { message, options } = yield* Protocol.decodeSend(v, request.params)
        const { task, go } = yield* agent.start(caller, message, request.method, yield* shutdownOf)
        yield* go
        if (!options.returnImmediately) yield* task.done
        return json(JsonRpc.success(id, Protocol.sendResult(v, yield* task.view, options.historyLength)))
      }
      case "stream": {
        const agent = yield* A2aAgent
        const { message } = yield* Protocol.decodeSend(v, request.params)
        const { task, go } = yield* agent.start(caller, message, request.method, yield* shutdownOf)
        // Subscribed before the loop starts, so the stream misses nothing.
        const events = Stream.unwrapScoped(Effect.gen(function* () {
          const sub = yield* task.subscribe
          yield* go
          return taskStream(v, sub.snapshot, sub.events)
        }))
        return sse(id, events, (yield* GatewayConfig).streamKeepaliveInterval)
      }
      case "get": {
        const { id: taskId, historyLength } = yield* Protocol.decodeTaskId(request.params)
        const task = yield* (yield* Tasks).get(owner, taskId)
        return json(JsonRpc.success(id, Protocol.task(v, yield* task.view, historyLength)))
      }
      case "cancel": {
        const { id: taskId } = yield* Protocol.decodeTaskId(request.params)
        const task = yield* (yield* Tasks).cancel(owner, taskId)
        return json(JsonRpc.success(id, Protocol.task(v, yield* task.view)))
      }
      case "resubscribe": {
        const { id: taskId } = yield* Protocol.decodeTaskId(request.params)
        const task = yield* (yield* Tasks).get(owner, taskId)
        return sse(
          id,
          Stream.unwrapScoped(Effect.map(task.subscribe, (sub) => taskStream(v, sub.snapshot, sub.events))),
          (yield* GatewayConfig).streamKeepaliveInterval
        )
      }
      case "push":
        return yield* new PushNotificationNotSupported({ method: request.method })
      case "unsupported":
        return yield* new UnsupportedOperation({ method: request.method })
    }
  }).pipe(
    Effect.catchAll((e: RpcError) => Effect.succeed(json(JsonRpc.failure(request.id ?? null, errorObject(e)))))
  )

const handle = (caller: Caller, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const config = yield* GatewayConfig
    const text = yield* readBody(request, config.maxBodyBytes)
    const decoded = yield* Effect.either(JsonRpc.decode(text))
    if (decoded._tag === "Left") return json(JsonRpc.failure(JsonRpc.salvageId(text), toJsonRpcError(decoded.left)))
    const message = decoded.right
    if (message._tag === "Batch") {
      return json(JsonRpc.failure(null, toJsonRpcError(new InvalidRequest({ detail: "batch requests are not supported" }))))
    }
    return yield* dispatch(caller, message.request)
  })

/** The route handler for `endpoint` (`/a2a/invoke` or `/`). */
export const a2aHandler = (endpoint: string) =>
  Effect.flatMap(Edge, (edge) => edge.serve(endpoint, handle)).pipe(Effect.withSpan("A2a.invoke", { attributes: { endpoint } }))
