/**
 * JSON-RPC 2.0 envelopes as Schemas: requests, notifications, responses, errors and batches.
 * Bad JSON is -32700, a bad envelope -32600 (through the wire table).
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { InvalidRequest, ParseError } from "./Errors.ts"
import { maxJsonDepth, nestsDeeperThan } from "./JsonDepth.ts"
import type { JsonRpcErrorObject } from "./Wire.ts"

export const JsonRpcId = Schema.Union(Schema.String, Schema.Number, Schema.Null)
export type JsonRpcId = typeof JsonRpcId.Type

export const JsonRpcRequest = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(JsonRpcId),
  method: Schema.String.pipe(Schema.minLength(1)),
  params: Schema.optional(Schema.Union(Schema.Record({ key: Schema.String, value: Schema.Unknown }), Schema.Array(Schema.Unknown)))
})
export type JsonRpcRequest = typeof JsonRpcRequest.Type

/** A request without `id` is a notification: it gets no response. */
export const isNotification = (request: JsonRpcRequest): boolean => request.id === undefined

export const JsonRpcErrorSchema = Schema.Struct({
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
})

export const JsonRpcResponse = Schema.Union(
  Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: JsonRpcId, result: Schema.Unknown }),
  Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: JsonRpcId, error: JsonRpcErrorSchema })
)
export type JsonRpcResponse = typeof JsonRpcResponse.Type

export type JsonRpcMessage =
  | { readonly _tag: "Single"; readonly request: JsonRpcRequest }
  | { readonly _tag: "Batch"; readonly requests: ReadonlyArray<Either.Either<JsonRpcRequest, InvalidRequest>> }

const decodeRequest = Schema.decodeUnknownEither(JsonRpcRequest, { onExcessProperty: "ignore" })

const toInvalid = (u: unknown) =>
  Either.mapLeft(
    decodeRequest(u),
    (e) => new InvalidRequest({ detail: ParseResult.TreeFormatter.formatErrorSync(e).split("\n")[0] })
  )

/**
 * Decodes a body. A batch keeps its members' individual outcomes, because the spec answers each invalid member with
 * its own -32600 while the valid ones proceed; an empty batch is itself invalid.
 */
export const decode = (text: string): Effect.Effect<JsonRpcMessage, ParseError | InvalidRequest> =>
  Effect.gen(function* () {
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new ParseError({ detail: "body is not valid JSON" })
    })
    if (nestsDeeperThan(json)) return yield* new InvalidRequest({ detail: `the request nests deeper than ${maxJsonDepth} levels` })
    if (Array.isArray(json)) {
      if (json.length === 0) return yield* new InvalidRequest({ detail: "empty batch" })
      return { _tag: "Batch", requests: json.map(toInvalid) } as const
    }
    const request = yield* toInvalid(json)
    return { _tag: "Single", request } as const
  })

/** The id to answer with when the request could not be decoded: whatever id the body carried, else null. */
export const salvageId = (text: string): JsonRpcId => {
  try {
    const json = JSON.parse(text) as { id?: unknown }
    const id = json?.id
    return typeof id === "string" || typeof id === "number" ? id : null
  } catch {
    return null
  }
}

export const success = (id: JsonRpcId, result: unknown): JsonRpcResponse => ({ jsonrpc: "2.0", id, result })

export const failure = (id: JsonRpcId, error: JsonRpcErrorObject): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  error: error.data === undefined ? { code: error.code, message: error.message } : error
})

export const notification = (method: string, params: unknown) => ({ jsonrpc: "2.0" as const, method, params })
