/**
 * The agent's API server: the REST contract (`AgentApi` in core) with its handlers, the OpenAPI 3.1 document at
 * `/api/v1/openapi.json`, the interactive MCP route, and one rule for every failure: an RFC 7807 problem body.
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Cause, Effect, Layer, Option } from "effect"
import { AgentApi, AgentOpenApiPath } from "@kubemend/core/AgentApi"
import { InternalError, NotFound, ValidationError } from "@kubemend/core/Errors"
import { drainGuard } from "@kubemend/core/Servers"
import { problemResponse } from "@kubemend/core/Wire"
import { ConfigHttpLive } from "./Http/Config.ts"
import { IncidentHttpLive } from "./Http/Incident.ts"

export { AgentApi, AgentOpenApiPath }

const tagOf = (u: unknown) => (typeof u === "object" && u !== null && "_tag" in u ? String((u as { _tag: unknown })._tag) : "")

/**
 * Failures the HttpApi would answer in its own shapes become problems: a body that fails the schema (400
 * `validation-error`), unreadable JSON (400), an unknown route (404), a defect (500, logged, no internals).
 */
const ProblemsLive = HttpApiBuilder.middleware(AgentApi, (app) =>
  Effect.catchAllCause(app, (cause) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
      const failure = Cause.failureOption(cause)
      const e = Cause.squash(cause)
      switch (tagOf(e)) {
        case "HttpApiDecodeError":
          return yield* problemResponse(new ValidationError({ detail: (e as { message: string }).message }), request.url)
        case "RequestError":
          return yield* problemResponse(new ValidationError({ detail: "the request body is not valid JSON" }), request.url)
        case "RouteNotFound":
          return yield* problemResponse(new NotFound({ resource: "route", id: `${request.method} ${request.url}` }), request.url)
      }
      if (Option.isNone(failure) && !Cause.isInterruptedOnly(cause)) {
        yield* Effect.logError("request failed", cause)
        return yield* problemResponse(new InternalError({}), request.url)
      }
      return yield* Effect.failCause(cause)
    })))

export const ApiLive = HttpApiBuilder.api(AgentApi).pipe(
  Layer.provide(IncidentHttpLive),
  Layer.provide(ConfigHttpLive)
)

/** Serves the API (plus whatever routes `extra` adds to `HttpApiBuilder.Router`) on the current HttpServer. */
export const serve = <E, R>(extra: Layer.Layer<never, E, R>) =>
  HttpApiBuilder.serve(drainGuard).pipe(
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: AgentOpenApiPath })),
    Layer.provide(ProblemsLive),
    Layer.provide(extra),
    Layer.provide(ApiLive)
  )
