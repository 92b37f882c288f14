/**
 * The audit event envelope sent to the storage service (`AuditEventRequest`) and its stored form (`AuditEvent`,
 * with id, partition date, hash chain and legal hold). Field names and limits follow the storage OpenAPI; the
 * typed per-event payloads travel in `event_data` as a JSON object.
 */
import { Schema } from "effect"
import { DateTimeString, Enum, Int, optional, UuidString } from "./Common.ts"

/** Schema version written by every emitter. */
export const AuditEventVersion = "1.0"

export const AuditEventCategory = Enum(
  "gateway",
  "notification",
  "analysis",
  "aiagent",
  "signalprocessing",
  "workflow",
  "workflowexecution",
  "orchestration",
  "approval",
  "effectiveness",
  "actiontype",
  "apifrontend",
  "security",
  "agentsession"
)
export type AuditEventCategory = typeof AuditEventCategory.Type

export const AuditEventOutcome = Enum("success", "failure", "pending")
export type AuditEventOutcome = typeof AuditEventOutcome.Type

/** Hash algorithm of the per-correlation-id chain: unkeyed SHA-256, or HMAC-SHA256 with a configured key. */
export const AuditHashAlgorithm = Enum("sha256-unkeyed", "hmac-sha256")
export type AuditHashAlgorithm = typeof AuditHashAlgorithm.Type

const bounded = (min: number, max: number) => Schema.String.pipe(Schema.minLength(min), Schema.maxLength(max))
const nullable = <A, I>(s: Schema.Schema<A, I, never>) => optional(Schema.NullOr(s))

/** Typed payload of the event (`event_type` inside it matches the envelope's). */
export const AuditEventData = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const auditEventRequestFields = {
  version: bounded(1, 20),
  event_type: bounded(1, 100),
  event_timestamp: DateTimeString,
  event_category: AuditEventCategory,
  event_action: bounded(1, 50),
  event_outcome: AuditEventOutcome,
  correlation_id: bounded(1, 255),
  actor_type: optional(Schema.String),
  actor_id: optional(Schema.String),
  actor_ip: optional(Schema.String.pipe(Schema.maxLength(45))),
  resource_type: optional(Schema.String),
  resource_id: optional(Schema.String),
  parent_event_id: nullable(UuidString),
  parent_event_date: nullable(Schema.String),
  namespace: nullable(Schema.String),
  cluster_id: nullable(Schema.String),
  severity: nullable(Schema.String),
  duration_ms: nullable(Int),
  error_code: nullable(Schema.String),
  error_message: nullable(Schema.String),
  retention_days: nullable(Int),
  is_sensitive: nullable(Schema.Boolean),
  event_data: AuditEventData
}

/** One event as emitted (`POST /api/v1/audit/events`, items of `/events/batch`). */
export const AuditEventRequest = Schema.Struct(auditEventRequestFields)
export interface AuditEventRequest extends Schema.Schema.Type<typeof AuditEventRequest> {}

/** An event as stored and returned by queries and export. */
export const AuditEvent = Schema.Struct({
  ...auditEventRequestFields,
  event_id: UuidString,
  event_date: nullable(Schema.String),
  event_hash: nullable(Schema.String),
  previous_event_hash: nullable(Schema.String),
  hash_algorithm: optional(AuditHashAlgorithm),
  legal_hold: nullable(Schema.Boolean),
  legal_hold_reason: nullable(Schema.String),
  legal_hold_placed_by: nullable(Schema.String),
  legal_hold_placed_at: nullable(Schema.String)
})
export interface AuditEvent extends Schema.Schema.Type<typeof AuditEvent> {}

/** 201 answer to a single event. */
export const AuditEventResponse = Schema.Struct({
  event_id: UuidString,
  event_timestamp: Schema.String,
  message: Schema.String
})

/** Answer to a batch (1 to 1000 events). */
export const BatchAuditEventResponse = Schema.Struct({
  event_ids: Schema.Array(UuidString),
  message: optional(Schema.String)
})

/** Batch limits of `POST /api/v1/audit/events/batch`. */
export const AuditBatchLimits = { min: 1, max: 1000 } as const
