/**
 * Request bodies: JSON text decoded with a schema, a failure answered as a 400 naming the field at fault (the path
 * of the first issue, e.g. `alerts.0.labels.alertname`), never a 500.
 */
import { ValidationError } from "@kubemend/core/Errors"
import { nestsDeeperThan } from "@kubemend/core/JsonDepth"
import { Effect, ParseResult, Schema } from "effect"

const pathOf = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

export const parseJson = (text: string) =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: () => new ValidationError({ detail: "the request body is not valid JSON" })
  }).pipe(
    Effect.filterOrFail(
      (u) => !nestsDeeperThan(u),
      () => new ValidationError({ detail: "the request body nests too deep" })
    )
  )

export const decodeBody = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return (u: unknown) =>
    Effect.mapError(decode(u), (error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      const field = issue === undefined || issue.path.length === 0 ? undefined : pathOf(issue.path)
      return new ValidationError({ detail: issue?.message ?? "the request body has the wrong shape", ...(field === undefined ? {} : { field }) })
    })
}
