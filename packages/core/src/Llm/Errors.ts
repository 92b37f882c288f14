import { Schema } from "effect"

/** The provider answered 429 on every attempt; `retryAfterSeconds` is its last Retry-After hint, if any. */
export class LlmRateLimited extends Schema.TaggedError<LlmRateLimited>()("LlmRateLimited", {
  retryAfterSeconds: Schema.optional(Schema.Number),
  message: Schema.String
}) {}

/** 5xx, network failure or timeout on every attempt, or a broken stream. */
export class LlmUnavailable extends Schema.TaggedError<LlmUnavailable>()("LlmUnavailable", {
  message: Schema.String,
  status: Schema.optional(Schema.Number)
}) {}

/** Any other 4xx (bad request, auth, unknown model), or a response we cannot read. Not retried. */
export class LlmBadRequest extends Schema.TaggedError<LlmBadRequest>()("LlmBadRequest", {
  message: Schema.String,
  status: Schema.optional(Schema.Number)
}) {}

/** The `llm` block (or a phase override) is unusable; `key` names the offending setting, e.g. `llm.endpoint`. */
export class LlmConfigError extends Schema.TaggedError<LlmConfigError>()("LlmConfigError", {
  key: Schema.String,
  message: Schema.String
}) {}

export type LlmError = LlmRateLimited | LlmUnavailable | LlmBadRequest | LlmConfigError
