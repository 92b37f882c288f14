/**
 * What every API answer carries, whatever the service: `X-Request-Id` (the caller's when it sent a well-formed one,
 * else minted) — also in every log line and audit event of the request —, `X-Content-Type-Options: nosniff`, and
 * `Cache-Control: no-store` unless the route chose its own. Applied to the API listener only; health and metrics
 * keep their plain answers.
 */
import { HttpApp, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef, Option } from "effect"
import { randomUUID } from "node:crypto"

/** The request id a caller sent (`X-Request-Id`), when bounded and printable. */
export const requestIdOf = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  const id = headers["x-request-id"]?.trim()
  return id !== undefined && /^[\x21-\x7e]{1,128}$/.test(id) ? id : undefined
}

/** The id of the request this fiber serves, if any (audit events pick it up). */
export const currentRequestId: FiberRef.FiberRef<Option.Option<string>> = FiberRef.unsafeMake(Option.none())

export const apiHeaders = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const id = requestIdOf(request.headers) ?? randomUUID()
    yield* HttpApp.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, {
        "x-request-id": id,
        "x-content-type-options": "nosniff",
        ...(response.headers["cache-control"] === undefined ? { "cache-control": "no-store" } : {})
      }))
    )
    return yield* app.pipe(Effect.locally(currentRequestId, Option.some(id)), Effect.annotateLogs("request_id", id))
  })
)
