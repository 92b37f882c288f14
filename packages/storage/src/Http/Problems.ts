/**
 * Errors to RFC 7807 at the HTTP edge. Handlers fail with domain errors and turn them into the Problem class the
 * wire table names (`orProblem`); the API middleware turns what the framework produces itself (schema decode
 * failures, unparsable or oversized bodies, unknown routes, defects) into problems too, so every 4xx/5xx is
 * `application/problem+json`.
 */
import { HttpApiBuilder, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import {
  DependencyUnavailable,
  type DomainError,
  InternalError,
  NotFound,
  PayloadTooLarge,
  ValidationError
} from "@kubemend/core/Errors"
import { type ProblemBody, type ProblemByStatus, ProblemContentType } from "@kubemend/core/Problem"
import { StorageApi } from "@kubemend/core/StorageApi"
import { problemResponse, toProblem, type wire } from "@kubemend/core/Wire"
import { Cause, Effect, Option } from "effect"
import type { DatabaseUnavailable } from "../Db/Errors.ts"

/** The Problem class the wire table assigns to `E` (so endpoint error types stay exact). */
export type ProblemFor<E extends DomainError> = InstanceType<(typeof ProblemByStatus)[(typeof wire)[E["_tag"]]["status"]]>

type EdgeError = DomainError | DatabaseUnavailable

type DomainOf<E extends EdgeError> = E extends DatabaseUnavailable ? DependencyUnavailable : Exclude<E, DatabaseUnavailable>

const toDomain = (e: EdgeError): DomainError =>
  e._tag === "DatabaseUnavailable" ? new DependencyUnavailable({ dependency: "database", detail: "the database is unreachable; retry later" }) : e

/** Fails with the Problem for a domain error (the database being away is a 503). */
export const problem = <E extends EdgeError>(e: E): Effect.Effect<never, ProblemFor<DomainOf<E>>> =>
  Effect.flatMap(toProblem(toDomain(e)), (p) => Effect.fail(p as ProblemFor<DomainOf<E>>))

export const orProblem = <A, E extends EdgeError, R>(effect: Effect.Effect<A, E, R>) => Effect.catchAll(effect, problem)

const maxBytesExceeded = (e: HttpServerError.RequestError) =>
  e.cause instanceof Error && e.cause.message.includes("maxBytes exceeded")

/**
 * A success with an explicit status, for endpoints that answer with more than one (201 created / 202 queued,
 * 201 / 200 idempotent registration): their response classes can be structurally alike, so the encoder alone
 * could pick the wrong status.
 */
export const withStatus = (status: number) => (body: object) => HttpServerResponse.unsafeJson(body, { status })

/** Maps what the framework raised (as a failure or a defect) to the problem a client should see. */
const frameworkProblem = (error: unknown, limitBytes: number): Option.Option<DomainError> => {
  if (error instanceof HttpApiDecodeError) return Option.some(new ValidationError({ detail: error.message }))
  if (!HttpServerError.isServerError(error)) return Option.none()
  if (error._tag === "RequestError") {
    return Option.some(
      maxBytesExceeded(error) ? new PayloadTooLarge({ limitBytes }) : new ValidationError({ detail: "the request body is not valid JSON" })
    )
  }
  if (error._tag === "RouteNotFound") {
    return Option.some(new NotFound({ resource: "route", id: error.request.url, detail: `no route for ${error.request.method} ${error.request.url}` }))
  }
  return Option.none()
}

const isProblemBody = (u: unknown): u is ProblemBody =>
  typeof u === "object" && u !== null && typeof (u as ProblemBody).status === "number" &&
  typeof (u as ProblemBody).type === "string" && typeof (u as ProblemBody).title === "string"

/**
 * Writes a Problem value with the status it carries. (The Problem classes are structurally identical, so letting
 * the HttpApi encoder pick the class of a union would answer with the status of whichever class comes first.)
 */
const problemBodyResponse = (body: ProblemBody) =>
  HttpServerResponse.text(JSON.stringify(body), { status: body.status, contentType: ProblemContentType })

/**
 * API-level middleware: every failure becomes an `application/problem+json` response with its own status —
 * schema decode failures 400 `validation-error`, bad or oversized bodies 400/413, unknown routes 404, Problems
 * raised by handlers and the auth middleware as they are, anything else a logged 500 without internals.
 */
export const problemMiddleware = (limitBytes: number) =>
  HttpApiBuilder.middleware(StorageApi, (app) =>
    Effect.catchAllCause(app, (cause) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
        const error: unknown = Option.getOrElse(Cause.failureOption(cause as Cause.Cause<unknown>), () =>
          Option.getOrUndefined(Cause.dieOption(cause)))
        const mapped = frameworkProblem(error, limitBytes)
        if (Option.isSome(mapped)) return yield* problemResponse(mapped.value, request.url)
        if (isProblemBody(error)) return problemBodyResponse(error)
        yield* Effect.logError("request failed", cause)
        return yield* problemResponse(new InternalError({}), request.url)
      })
    )
  )
