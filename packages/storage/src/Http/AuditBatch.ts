/**
 * The body of `POST /audit/events/batch`, read and decoded by hand: the generic Schema decode of 1000 events was
 * the largest single cost of a batch. Every event is checked against the rules of `AuditEventInput` in one plain
 * loop and normalised at once. Anything the loop does not accept (an invalid event, an unusual shape) goes through
 * the contract's own Schema decode, so a client sees exactly the errors it saw before; the loop only ever accepts
 * input that the Schema accepts too (a test holds the two together).
 */
import { HttpServerRequest, UrlParams } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { AuditEventCategory, AuditEventOutcome } from "@kubemend/core/domain/Audit"
import { AuditEventBatch, type AuditEventInput } from "@kubemend/core/StorageApi"
import { Effect, ParseResult, Schema } from "effect"

const categories: ReadonlySet<unknown> = new Set(AuditEventCategory.literals)
const outcomes: ReadonlySet<unknown> = new Set(AuditEventOutcome.literals)
const uuid = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const dateTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

type Fields = Record<string, unknown>

const bounded = (v: unknown, min: number, max: number) => typeof v === "string" && v.length >= min && v.length <= max
const optionalString = (v: unknown) => v === undefined || typeof v === "string"
const nullableString = (v: unknown) => v === undefined || v === null || typeof v === "string"
const nullableInt = (v: unknown) => v === undefined || v === null || (typeof v === "number" && Number.isSafeInteger(v))
const nullableUuid = (v: unknown) => v === undefined || v === null || (typeof v === "string" && uuid.test(v))
const isRecord = (v: unknown): v is Fields => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * Whether the Schema would accept `e` as an `AuditEventInput` and decode it to the same field values (keys the
 * schema does not know are ignored both ways; `undefined` cannot come out of JSON, so absent means `undefined`).
 */
const acceptable = (e: unknown): e is AuditEventInput => {
  if (!isRecord(e)) return false
  const ts = e.event_timestamp
  const data = e.event_data
  return bounded(e.version, 1, 20) &&
    bounded(e.event_type, 1, 100) &&
    typeof ts === "string" && dateTime.test(ts) && !Number.isNaN(Date.parse(ts)) &&
    categories.has(e.event_category) &&
    bounded(e.event_action, 1, 50) &&
    outcomes.has(e.event_outcome) &&
    bounded(e.correlation_id, 1, 255) &&
    optionalString(e.actor_type) && optionalString(e.actor_id) && optionalString(e.resource_type) &&
    optionalString(e.resource_id) &&
    (e.actor_ip === undefined || bounded(e.actor_ip, 0, 45)) &&
    nullableUuid(e.parent_event_id) &&
    nullableString(e.parent_event_date) && nullableString(e.namespace) && nullableString(e.cluster_id) &&
    nullableString(e.severity) && nullableString(e.error_code) && nullableString(e.error_message) &&
    nullableInt(e.duration_ms) && nullableInt(e.retention_days) &&
    (e.is_sensitive === undefined || e.is_sensitive === null || typeof e.is_sensitive === "boolean") &&
    // The Schema copies the payload's keys into a new object, where `__proto__` would not survive as a key.
    isRecord(data) && !Object.hasOwn(data, "__proto__") &&
    (e.event_id === undefined || (typeof e.event_id === "string" && uuid.test(e.event_id)))
}

/** The events of the batch, or `undefined` when the Schema has to decide. */
export const fastDecode = (body: unknown): ReadonlyArray<AuditEventInput> | undefined => {
  if (!Array.isArray(body)) return undefined
  for (let i = 0; i < body.length; i++) if (!acceptable(body[i])) return undefined
  return body
}

const decodeBatch = Schema.decodeUnknown(AuditEventBatch)

/**
 * The request body as the HttpApi would hand it to the Schema (JSON unless the content type says otherwise), so
 * unreadable bodies fail the same way (a defect the problem middleware answers as 400, or 413 past the limit).
 * A multipart body is read as bytes rather than parsed: it is refused either way, only the "actual" in the message
 * differs.
 */
const body = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request): Effect.Effect<unknown> => {
  const type = (request.headers["content-type"] ?? "application/json").toLowerCase().trim()
  if (type.includes("application/json")) return Effect.orDie(request.json)
  if (type.includes("x-www-form-urlencoded")) return Effect.orDie(Effect.map(request.urlParamsBody, UrlParams.toRecord))
  if (type.startsWith("text/")) return Effect.orDie(request.text)
  return Effect.orDie(Effect.map(request.arrayBuffer, (b) => new Uint8Array(b)))
})

/** The decoded batch; a body the contract rejects fails with the same `HttpApiDecodeError` as before. */
export const batchPayload: Effect.Effect<ReadonlyArray<AuditEventInput>, HttpApiDecodeError, HttpServerRequest.HttpServerRequest> = Effect.flatMap(
  body,
  (raw) => {
    const fast = fastDecode(raw)
    return fast !== undefined
      ? Effect.succeed(fast)
      : decodeBatch(raw).pipe(Effect.catchIf(ParseResult.isParseError, HttpApiDecodeError.refailParseError))
  }
)
