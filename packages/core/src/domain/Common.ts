/**
 * Small building blocks shared by the domain schemas. They keep the generated JSON Schema flat (no `$ref`s, no
 * `allOf`) so the same schemas can be turned into CRD YAML and MCP tool schemas.
 */
import { Schema } from "effect"

/** An integer without the `$ref: Int` that `Schema.Int` puts into JSON Schema. */
export const Int = Schema.Number.pipe(Schema.int())

/** A non-empty string, flat in JSON Schema. */
export const NonEmpty = Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" }))

/**
 * An enum of string literals with one readable error ("must be one of …") instead of one issue per member.
 */
export const Enum = <const L extends readonly [string, ...Array<string>]>(...values: L) =>
  Schema.Literal(...values).annotations({
    message: (issue) => ({
      message: `must be one of ${values.join(", ")} (got ${JSON.stringify(issueActual(issue))})`,
      override: true
    })
  })

const issueActual = (issue: unknown): unknown =>
  typeof issue === "object" && issue !== null && "actual" in issue ? (issue as { actual: unknown }).actual : undefined

/**
 * Go `time.ParseDuration` syntax as used in the platform CR and the config files (`30s`, `1h30m`, `2160h`).
 * Kept a string here (CRD-friendly); the config loader turns it into a `Duration`. `0` is accepted as Go does.
 */
export const GoDurationPattern = /^(0|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/

export const GoDurationString = Schema.String.pipe(
  Schema.pattern(GoDurationPattern, {
    message: (issue) => `must be a Go duration such as 30s, 15m or 1h30m (got ${JSON.stringify(issueActual(issue))})`
  })
)

/** RFC 3339 timestamp as it appears in Kubernetes objects and audit events; kept a string on the wire. */
export const DateTimeString = Schema.String.pipe(
  Schema.filter(
    (s) =>
      (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s))) ||
      `must be an RFC 3339 date-time (got ${JSON.stringify(s)})`,
    { jsonSchema: { format: "date-time" } }
  )
)

/** Lower-case hex UUID (any version). */
export const UuidString = Schema.String.pipe(
  Schema.pattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, {
    message: (issue) => `must be a UUID (got ${JSON.stringify(issueActual(issue))})`
  })
)

/**
 * A free-form JSON object (Kubernetes `resources`, engine config, …). In JSON Schema it is an object whose unknown
 * fields are kept (`x-kubernetes-preserve-unknown-fields`), which is what a CRD needs for such a field.
 */
export const Loose = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  jsonSchema: { type: "object", "x-kubernetes-preserve-unknown-fields": true }
})

export const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

/** An optional key that, when present, must not be `undefined` (matches `exactOptionalPropertyTypes`). */
export const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * An optional key with a default. The default is applied on decode (the Type side has the key) and written as the
 * JSON Schema `default`, so CRD generation gets the same value the API server would apply.
 */
export const withDefault = <S extends Schema.Schema.Any>(
  schema: S,
  value: Schema.Schema.Type<S> & Schema.Schema.Encoded<S>
) => Schema.optionalWith(schema.annotations({ default: value }) as unknown as S, { exact: true, default: () => value })

/**
 * An optional block whose fields all have defaults: when absent it decodes to the fully defaulted block. The JSON
 * Schema default is `{}` (the API server then fills the nested defaults, as kubebuilder's `default={}` does).
 */
export const withBlockDefault = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const empty = Schema.decodeUnknownSync(schema)({})
  // `jsonSchema` rather than `default`: JSONSchema.make encodes a `default` annotation through the schema, which
  // would spell out every nested default instead of `{}`.
  return Schema.optionalWith(schema.annotations({ jsonSchema: { default: {} } }), { exact: true, default: () => empty })
}

/** An array of at most `n` items with a short message (the stock one prints the whole array). */
export const maxItems = (n: number) => <A, I, R>(self: Schema.Schema<ReadonlyArray<A>, I, R>) =>
  self.pipe(
    Schema.filter((a) => a.length <= n || `must have at most ${n} entries (got ${a.length})`, {
      jsonSchema: { maxItems: n }
    })
  )

/** An array of at least `n` items with a short message. */
export const minItems = (n: number) => <A, I, R>(self: Schema.Schema<ReadonlyArray<A>, I, R>) =>
  self.pipe(
    Schema.filter((a) => a.length >= n || `must have at least ${n} ${n === 1 ? "entry" : "entries"}`, {
      jsonSchema: { minItems: n }
    })
  )
