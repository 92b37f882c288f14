/**
 * Errors to RFC 7807 in the handlers: they fail with domain errors and turn them into the Problem class the wire
 * table names (`orProblem`). What the framework raises itself is mapped by core's `problemMiddleware`.
 */
import { HttpServerResponse } from "@effect/platform"
import { DependencyUnavailable, type DomainError } from "@kubemend/core/Errors"
import type { ProblemByStatus } from "@kubemend/core/Problem"
import { toProblem, type wire } from "@kubemend/core/Wire"
import { Effect } from "effect"
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

/**
 * A success with an explicit status, for endpoints that answer with more than one (201 created / 202 queued,
 * 201 / 200 idempotent registration): their response classes can be structurally alike, so the encoder alone
 * could pick the wrong status.
 */
export const withStatus = (status: number) => (body: object) => HttpServerResponse.unsafeJson(body, { status })
