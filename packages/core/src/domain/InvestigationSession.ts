/**
 * InvestigationSession, `{api_group}/v1alpha1`: created with an RR when an interactive investigation is started on
 * a target. The spec names no fields; these follow the original CRD and everything is optional except the RR it
 * belongs to and the user driving it. Unknown fields are ignored on decode.
 */
import { Schema } from "effect"
import { Enum, NonEmpty, optional } from "./Common.ts"
import { Condition, resource } from "./Meta.ts"

export const InvestigationSessionKind = "InvestigationSession"
export const InvestigationSessionPlural = "investigationsessions"

/** How the user joined: a fresh start or a takeover of another user's session. */
export const JoinMode = Enum("start", "takeover")

export const InvestigationSessionPhase = Enum("Active", "Disconnected", "Completed", "Cancelled", "Failed")
export type InvestigationSessionPhase = typeof InvestigationSessionPhase.Type

export const UserIdentity = Schema.Struct({
  username: NonEmpty,
  groups: optional(Schema.Array(Schema.String))
})

export const InvestigationSessionSpec = Schema.Struct({
  remediationRequestRef: Schema.Struct({ name: NonEmpty, namespace: optional(Schema.String) }),
  userIdentity: UserIdentity,
  joinMode: optional(JoinMode),
  a2aTaskID: optional(Schema.String)
})

export const InvestigationSessionStatus = Schema.Struct({
  phase: optional(InvestigationSessionPhase),
  connectionState: optional(Schema.String),
  leaseHolder: optional(Schema.String),
  leaseAcquiredAt: optional(Schema.String),
  aiAnalysisRef: optional(Schema.String),
  kaCorrelationID: optional(Schema.String),
  startedAt: optional(Schema.String),
  disconnectedAt: optional(Schema.String),
  reconnectedAt: optional(Schema.String),
  completedAt: optional(Schema.String),
  message: optional(Schema.String),
  conditions: optional(Schema.Array(Condition))
})

export const InvestigationSession = resource(
  InvestigationSessionKind,
  InvestigationSessionSpec,
  InvestigationSessionStatus
)
export interface InvestigationSession extends Schema.Schema.Type<typeof InvestigationSession> {}
