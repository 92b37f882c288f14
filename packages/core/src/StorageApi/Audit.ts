/**
 * Wire schemas of the storage service's audit-event endpoints: write one, write a batch, query, notifications.
 * Field names follow the original storage OpenAPI (snake_case); the event envelope itself is `domain/Audit.ts`.
 */
import { Schema } from "effect"
import { AuditEvent, AuditEventCategory, AuditEventOutcome, AuditEventResponse, auditEventRequestFields } from "../domain/Audit.ts"
import { DateTimeString, Int, optional, UuidString } from "../domain/Common.ts"

export { AuditEvent, AuditEventResponse }

/**
 * One event as a client sends it. `event_id` is our extension: a client that picks its own ids (the Audit layer
 * does) can retry a write after a timeout without creating duplicates, because storage skips ids it already has.
 */
export const AuditEventInput = Schema.Struct({
  ...auditEventRequestFields,
  event_id: optional(UuidString)
})
export interface AuditEventInput extends Schema.Schema.Type<typeof AuditEventInput> {}
export interface AuditEventInputEncoded extends Schema.Schema.Encoded<typeof AuditEventInput> {}

/** Decoded leniently as an array; the 1..1000 bound is checked by the handler so it answers `validation-error`. */
export const AuditEventBatch = Schema.Array(AuditEventInput)

export class BatchAuditEventResponse extends Schema.Class<BatchAuditEventResponse>("BatchAuditEventResponse")({
  event_ids: Schema.Array(UuidString),
  message: Schema.String
}) {}

/** 202: the database was unreachable; the events are in the dead-letter queue and will be written when it returns. */
export class AuditWriteAccepted extends Schema.Class<AuditWriteAccepted>("AuditWriteAccepted")({
  status: Schema.Literal("accepted"),
  message: Schema.String,
  event_ids: optional(Schema.Array(UuidString))
}) {}

export class AuditEventCreated extends Schema.Class<AuditEventCreated>("AuditEventCreated")(AuditEventResponse.fields) {}

const IntFromString = Schema.NumberFromString.pipe(Schema.int())

/** `GET /api/v1/audit/events` filters. `since` is relative (`24h`) or RFC 3339; `until` is RFC 3339. */
export const AuditEventsQuery = Schema.Struct({
  event_type: optional(Schema.String),
  event_category: optional(Schema.String),
  event_outcome: optional(AuditEventOutcome),
  severity: optional(Schema.String),
  correlation_id: optional(Schema.String),
  actor_id: optional(Schema.String),
  since: optional(Schema.String),
  until: optional(Schema.String),
  limit: optional(IntFromString.pipe(Schema.between(1, 1000))),
  offset: optional(IntFromString.pipe(Schema.nonNegative())),
  detail_key: optional(Schema.String.pipe(Schema.pattern(/^[a-zA-Z0-9_]+$/))),
  detail_value: optional(Schema.String)
})
export interface AuditEventsQuery extends Schema.Schema.Type<typeof AuditEventsQuery> {}

export const Pagination = Schema.Struct({
  limit: Int,
  offset: Int,
  total: Int,
  has_more: Schema.Boolean
})

export const AuditEventsQueryResponse = Schema.Struct({
  data: Schema.Array(AuditEvent),
  pagination: Pagination
})
export interface AuditEventsQueryResponse extends Schema.Schema.Type<typeof AuditEventsQueryResponse> {}

const max = (n: number) => Schema.String.pipe(Schema.maxLength(n))

/** A notification delivery attempt (`notification_audit` table; `notification_id` is unique). */
export const NotificationAudit = Schema.Struct({
  remediation_id: max(255).pipe(Schema.minLength(1)),
  notification_id: max(255).pipe(Schema.minLength(1)),
  recipient: max(500).pipe(Schema.minLength(1)),
  channel: Schema.Literal("email", "slack", "pagerduty", "teams", "webhook"),
  message_summary: max(1000),
  status: Schema.Literal("sent", "failed", "pending"),
  sent_at: DateTimeString,
  delivery_status: optional(Schema.NullOr(max(255))),
  error_message: optional(Schema.NullOr(max(1000))),
  escalation_level: optional(Int.pipe(Schema.between(0, 5)))
})
export interface NotificationAudit extends Schema.Schema.Type<typeof NotificationAudit> {}

export class NotificationAuditResponse extends Schema.Class<NotificationAuditResponse>("NotificationAuditResponse")({
  ...NotificationAudit.fields,
  id: Int,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export { AuditEventCategory, AuditEventOutcome }
