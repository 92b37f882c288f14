/**
 * Domain errors every surface can answer with. They know nothing about HTTP or JSON-RPC: `Wire.ts` maps each tag to
 * its status, problem slug and title, and JSON-RPC code.
 */
import { Schema } from "effect"

const detail = { detail: Schema.optional(Schema.String) }

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.String,
  ...detail
}) {}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", { ...detail }) {}

/** Input failed validation; `field` is a dot path when one field is at fault. */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  detail: Schema.String,
  field: Schema.optional(Schema.String)
}) {}

export const AuthFailureReason = Schema.Literal(
  "missing_header",
  "non_bearer",
  "malformed_token",
  "unknown_issuer",
  "token_expired",
  "not_yet_valid",
  "invalid_audience",
  "missing_expiry",
  "invalid_signature",
  "unsupported_algorithm",
  "jwks_unavailable",
  "token_too_large",
  "control_chars",
  "token_review_failed"
)
export type AuthFailureReason = typeof AuthFailureReason.Type

export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  reason: AuthFailureReason,
  ...detail
}) {}

/** The console gate or a per-resource review refused the caller. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", { ...detail }) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  retryAfterSeconds: Schema.Number,
  scope: Schema.Literal("ip", "user", "tool"),
  ...detail
}) {}

/** The service is shutting down and takes no new work. */
export class Draining extends Schema.TaggedError<Draining>()("Draining", { ...detail }) {}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  limitBytes: Schema.Number,
  ...detail
}) {}

export class HeadersTooLarge extends Schema.TaggedError<HeadersTooLarge>()("HeadersTooLarge", { ...detail }) {}

export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  ...detail
}) {}

export class NotAcceptable extends Schema.TaggedError<NotAcceptable>()("NotAcceptable", { ...detail }) {}

export class McpDisabled extends Schema.TaggedError<McpDisabled>()("McpDisabled", { ...detail }) {}

/** Too many open MCP sessions / A2A contexts. */
export class SessionLimitReached extends Schema.TaggedError<SessionLimitReached>()("SessionLimitReached", {
  limit: Schema.Number,
  ...detail
}) {}

// JSON-RPC protocol errors (envelope level).
export class ParseError extends Schema.TaggedError<ParseError>()("ParseError", { ...detail }) {}
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", { ...detail }) {}
export class MethodNotFound extends Schema.TaggedError<MethodNotFound>()("MethodNotFound", {
  method: Schema.String,
  ...detail
}) {}
export class InvalidParams extends Schema.TaggedError<InvalidParams>()("InvalidParams", { ...detail }) {}

/** Status stream: the RemediationRequest does not exist (or could not be read). */
export class RrNotFound extends Schema.TaggedError<RrNotFound>()("RrNotFound", { rrId: Schema.String }) {}

/** A2A: unknown task id. */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()("TaskNotFound", { taskId: Schema.String }) {}
export class TaskNotCancelable extends Schema.TaggedError<TaskNotCancelable>()("TaskNotCancelable", {
  taskId: Schema.String,
  ...detail
}) {}

/** All LLM concurrency slots are taken; the caller may retry. */
export class LlmCapacityExhausted extends Schema.TaggedError<LlmCapacityExhausted>()("LlmCapacityExhausted", {
  ...detail
}) {}

/** Storage: `(name, version)` re-registered with different content. */
export class ContentIntegrityViolation extends Schema.TaggedError<ContentIntegrityViolation>()(
  "ContentIntegrityViolation",
  { name: Schema.String, version: Schema.String, ...detail }
) {}

/** Storage: a batch outside 1..1000 events. */
export class BatchSizeInvalid extends Schema.TaggedError<BatchSizeInvalid>()("BatchSizeInvalid", {
  size: Schema.Number,
  ...detail
}) {}

/** Storage: the export would exceed its event cap. */
export class ExportTooLarge extends Schema.TaggedError<ExportTooLarge>()("ExportTooLarge", {
  limit: Schema.Number,
  ...detail
}) {}

/** Storage: too few events to rebuild the RemediationRequest. */
export class ReconstructionIncomplete extends Schema.TaggedError<ReconstructionIncomplete>()(
  "ReconstructionIncomplete",
  { completeness: Schema.Number, ...detail }
) {}

/** Storage: the database is unreachable and the dead-letter queue is full. */
export class DeadLetterQueueFull extends Schema.TaggedError<DeadLetterQueueFull>()("DeadLetterQueueFull", {
  capacity: Schema.Number,
  ...detail
}) {}

export class SessionNotFound extends Schema.TaggedError<SessionNotFound>()("SessionNotFound", {
  sessionId: Schema.String
}) {}

/** Agent: the result was requested before the session completed. */
export class ResultNotReady extends Schema.TaggedError<ResultNotReady>()("ResultNotReady", {
  sessionId: Schema.String,
  status: Schema.String
}) {}

/** A downstream service (agent, storage, cluster API, metrics backend) is unreachable or its breaker is open. */
export class DependencyUnavailable extends Schema.TaggedError<DependencyUnavailable>()("DependencyUnavailable", {
  dependency: Schema.String,
  ...detail
}) {}

/** A defect or unexpected failure; answered without internals. */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", { ...detail }) {}

export type DomainError =
  | NotFound
  | Conflict
  | ValidationError
  | Unauthenticated
  | Forbidden
  | RateLimited
  | Draining
  | PayloadTooLarge
  | HeadersTooLarge
  | UnsupportedMediaType
  | NotAcceptable
  | McpDisabled
  | SessionLimitReached
  | ParseError
  | InvalidRequest
  | MethodNotFound
  | InvalidParams
  | RrNotFound
  | TaskNotFound
  | TaskNotCancelable
  | LlmCapacityExhausted
  | ContentIntegrityViolation
  | BatchSizeInvalid
  | ExportTooLarge
  | ReconstructionIncomplete
  | DeadLetterQueueFull
  | SessionNotFound
  | ResultNotReady
  | DependencyUnavailable
  | InternalError

export const DomainError = Schema.Union(
  NotFound,
  Conflict,
  ValidationError,
  Unauthenticated,
  Forbidden,
  RateLimited,
  Draining,
  PayloadTooLarge,
  HeadersTooLarge,
  UnsupportedMediaType,
  NotAcceptable,
  McpDisabled,
  SessionLimitReached,
  ParseError,
  InvalidRequest,
  MethodNotFound,
  InvalidParams,
  RrNotFound,
  TaskNotFound,
  TaskNotCancelable,
  LlmCapacityExhausted,
  ContentIntegrityViolation,
  BatchSizeInvalid,
  ExportTooLarge,
  ReconstructionIncomplete,
  DeadLetterQueueFull,
  SessionNotFound,
  ResultNotReady,
  DependencyUnavailable,
  InternalError
)
