/**
 * NotificationRequest, `{api_group}/v1alpha1`, named `nr-<rrName>-<kind>`: a message for people, created by the
 * orchestrator (an escalated investigation goes to the ops escalation channel) and delivered by a notification
 * controller, which owns the status. Phases are the notification backlog phases of spec document 3.
 */
import { Schema } from "effect"
import { Enum, NonEmpty, optional } from "./Common.ts"
import { Condition, ObjectReference, resource, TargetResource } from "./Meta.ts"

export const NotificationRequestKind = "NotificationRequest"
export const NotificationRequestPlural = "notificationrequests"

export const NotificationPhase = Enum("Pending", "Sending", "Sent", "Retrying", "PartiallySent", "Failed")
export type NotificationPhase = typeof NotificationPhase.Type

export const NotificationPriority = Enum("low", "medium", "high", "critical")

export const NotificationRequestSpec = Schema.Struct({
  /** What the message is about (`escalation`, …). */
  type: NonEmpty,
  priority: NotificationPriority,
  channel: NonEmpty,
  recipients: optional(Schema.Array(Schema.Struct({ channel: NonEmpty }))),
  subject: NonEmpty,
  body: Schema.String,
  reason: optional(Schema.String),
  remediationRequestRef: ObjectReference,
  target: optional(TargetResource),
  requestedAt: optional(Schema.String)
})

/** One receiver's delivery of a NotificationRequest (written by the notification controller). */
export const NotificationDelivery = Schema.Struct({
  /** The configured receiver's name. */
  receiver: NonEmpty,
  /** `slack`, `webhook`, `pagerduty` or `email`. */
  channel: NonEmpty,
  status: Enum("Pending", "Sent", "Retrying", "Failed"),
  attempts: Schema.Number,
  lastAttemptAt: optional(Schema.String),
  sentAt: optional(Schema.String),
  /** When the next attempt is due (Retrying). */
  nextAttemptAt: optional(Schema.String),
  lastError: optional(Schema.String)
})

export const NotificationRequestStatus = Schema.Struct({
  phase: optional(NotificationPhase),
  deliveries: optional(Schema.Array(NotificationDelivery)),
  sentAt: optional(Schema.String),
  message: optional(Schema.String),
  conditions: optional(Schema.Array(Condition))
})

export const NotificationRequest = resource(NotificationRequestKind, NotificationRequestSpec, NotificationRequestStatus)
export interface NotificationRequest extends Schema.Schema.Type<typeof NotificationRequest> {}
