/**
 * The one place that reads driver failures. A failure a caller can act on becomes a named error: the database being
 * unreachable (the write then goes to the dead-letter queue), text it cannot hold, a unique or legal-hold
 * violation. Anything else is a bug of ours and becomes a defect at the repository edge.
 */
import { SqlError } from "@effect/sql/SqlError"
import { ValidationError } from "@kubemend/core/Errors"
import { Data, Effect, Option } from "effect"

export class DatabaseUnavailable extends Data.TaggedError("DatabaseUnavailable")<{ readonly cause: unknown }> {}

const connectionCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN"])

const codeOf = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : undefined

/** SQLSTATE of the failure, when the server answered one. */
export const sqlState = (error: SqlError): string | undefined => codeOf(error.cause)

/**
 * Connection-level failures: refused/reset sockets, pool connect timeouts, "Connection terminated", and the server
 * classes 08 (connection exception) and 57P (shutdown, cannot connect now).
 */
export const isUnavailable = (error: SqlError): boolean => {
  const code = codeOf(error.cause)
  if (code !== undefined && (connectionCodes.has(code) || code.startsWith("08") || code.startsWith("57P"))) return true
  const text = `${error.message ?? ""} ${error.cause instanceof Error ? error.cause.message : String(error.cause ?? "")}`
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Failed to acquire connection|Connection timed out|ECONNREFUSED|not queryable|Client has encountered a connection error/i
    .test(
      text
    )
}

/**
 * A NUL character, in a parameter (22021) or a jsonb `\u0000` escape (22P05): PostgreSQL text cannot hold it, so a
 * request carrying one (a filter, an id, a reason) is refused as invalid.
 */
const isUnstorableText = (error: SqlError): boolean => {
  const state = sqlState(error)
  return state === "22021" || state === "22P05"
}

/**
 * Unavailability becomes `DatabaseUnavailable`, text the database cannot hold a `ValidationError`; every other SQL
 * failure is a defect. `withTransaction` turns a failed COMMIT or ROLLBACK into a defect, and a connection lost at
 * that moment is unavailability too.
 */
export const orUnavailable = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError> | DatabaseUnavailable | ValidationError, R> =>
  Effect.catchIf(
    effect,
    (e): e is SqlError => e instanceof SqlError,
    (error): Effect.Effect<never, DatabaseUnavailable | ValidationError> =>
      isUnavailable(error)
        ? Effect.fail(new DatabaseUnavailable({ cause: error }))
        : isUnstorableText(error)
        ? Effect.fail(new ValidationError({ detail: "text must not contain NUL (\\u0000) characters" }))
        : Effect.die(error)
  ).pipe(
    Effect.catchSomeDefect((defect) =>
      defect instanceof SqlError && isUnavailable(defect) ? Option.some(Effect.fail(new DatabaseUnavailable({ cause: defect }))) : Option.none()
    )
  ) as Effect.Effect<A, Exclude<E, SqlError> | DatabaseUnavailable | ValidationError, R>
