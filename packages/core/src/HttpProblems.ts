/**
 * The HTTP edge of an `HttpApi` service, shared by storage and the agent: a request body limit and one rule for
 * every failure, so each 4xx/5xx is `application/problem+json` with its own status. Services on plain routers (the
 * gateway, signals, the console) end theirs with `lastAnswers`, to the same effect.
 */
import {
  type HttpApi,
  HttpApiBuilder,
  type HttpApiGroup,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Cause, Effect, Either, Option } from "effect"
import { type DomainError, InternalError, NotFound, PayloadTooLarge, ValidationError } from "./Errors.ts"
import { maxJsonDepth, nestsDeeperThan } from "./JsonDepth.ts"
import { type ProblemBody, ProblemContentType } from "./Problem.ts"
import { problemResponse } from "./Wire.ts"

/** 413 from `Content-Length` before anything is read; chunked bodies are cut at the limit while reading. */
export const bodyLimit = (limitBytes: number) =>
  HttpMiddleware.make((app) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const length = Number(request.headers["content-length"] ?? "0")
      if (Number.isFinite(length) && length > limitBytes) {
        return yield* problemResponse(new PayloadTooLarge({ limitBytes }), request.url)
      }
      return yield* HttpIncomingMessage.withMaxBodySize(app, Option.some(limitBytes))
    })
  )

/** The 404 for a request no route takes (method and path named). */
export const noRoute = (request: HttpServerRequest.HttpServerRequest) =>
  new NotFound({ resource: "route", id: request.url, detail: `no route for ${request.method} ${request.url}` })

/**
 * What a plain router leaves unanswered, as problems like every other answer (the platform would send empty bodies):
 * an unknown route or method a 404, a defect (a bug of ours) a logged 500 without internals. Interruptions pass.
 */
export const lastAnswers = HttpMiddleware.make((app) =>
  app.pipe(
    Effect.catchAll((e) =>
      HttpServerError.isServerError(e) && e._tag === "RouteNotFound"
        ? problemResponse(noRoute(e.request), e.request.url)
        : Effect.fail(e)
    ),
    Effect.catchAllDefect((defect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* Effect.logError("request failed", Cause.die(defect)).pipe(Effect.annotateLogs({ method: request.method, url: request.url }))
        return yield* problemResponse(new InternalError({}), request.url)
      })
    )
  )
)

const maxBytesExceeded = (e: HttpServerError.RequestError) => e.cause instanceof Error && e.cause.message.includes("maxBytes exceeded")

/** Maps what the framework raised (as a failure or a defect) to the problem a client should see. */
const frameworkProblem = (error: unknown, limitBytes: number): Option.Option<DomainError> => {
  if (error instanceof HttpApiDecodeError) return Option.some(new ValidationError({ detail: error.message }))
  if (!HttpServerError.isServerError(error)) return Option.none()
  if (error._tag === "RequestError") {
    return Option.some(
      maxBytesExceeded(error) ? new PayloadTooLarge({ limitBytes }) : new ValidationError({ detail: "the request body is not valid JSON" })
    )
  }
  if (error._tag === "RouteNotFound") return Option.some(noRoute(error.request))
  return Option.none()
}

const isProblemBody = (u: unknown): u is ProblemBody =>
  typeof u === "object" && u !== null && typeof (u as ProblemBody).status === "number" &&
  typeof (u as ProblemBody).type === "string" && typeof (u as ProblemBody).title === "string"

/**
 * Writes a Problem value with the status it carries. (The Problem classes are structurally identical, so letting
 * the HttpApi encoder pick the class of a union would answer with the status of whichever class comes first.)
 */
const problemBodyResponse = (body: ProblemBody) => HttpServerResponse.text(JSON.stringify(body), { status: body.status, contentType: ProblemContentType })

/**
 * Whether the request's JSON body nests deeper than `maxJsonDepth`. Asked only once something died: describing a
 * value that deep in a decode error overflows the stack, and the body (already read, so cached) is then the cause.
 */
const nestsTooDeep = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["content-type"] ?? "application/json").includes("application/json")
    ? Effect.map(Effect.either(request.json), (body) => Either.isRight(body) && nestsDeeperThan(body.right))
    : Effect.succeed(false)

/**
 * API-level middleware: schema decode failures 400 `validation-error`, bad or oversized bodies 400/413, unknown
 * routes 404, Problems raised by handlers and auth middleware as they are, a body nesting deeper than
 * `maxJsonDepth` 400, anything else a logged 500 without internals.
 */
export const problemMiddleware = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  limitBytes: number
) =>
  HttpApiBuilder.middleware(api, (app) =>
    Effect.catchAllCause(app, (cause) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
        const error: unknown = Option.getOrElse(Cause.failureOption(cause as Cause.Cause<unknown>), () => Option.getOrUndefined(Cause.dieOption(cause)))
        const mapped = frameworkProblem(error, limitBytes)
        if (Option.isSome(mapped)) return yield* problemResponse(mapped.value, request.url)
        if (isProblemBody(error)) return problemBodyResponse(error)
        if (Cause.isDie(cause) && (yield* nestsTooDeep(request))) {
          return yield* problemResponse(new ValidationError({ detail: `the request body nests deeper than ${maxJsonDepth} levels` }), request.url)
        }
        yield* Effect.logError("request failed", cause)
        return yield* problemResponse(new InternalError({}), request.url)
      })))
