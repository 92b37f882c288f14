/**
 * The investigation agent's REST contract (submit, poll, result): IncidentRequest, IncidentResponse and the
 * session answers. Required fields and limits follow the agent's OpenAPI 1.5.7; the spec's key response fields
 * (`root_cause`, `investigation_outcome`, `actionable`) are carried next to the original ones.
 */
import { Schema } from "effect"
import { Enum, Int, Loose, NonEmpty, optional, StringMap, UuidString, withDefault } from "./Common.ts"
import { HumanReviewReason } from "./AIAnalysis.ts"
import { SeverityInput } from "./Severity.ts"

const nullable = <A, I>(s: Schema.Schema<A, I, never>) => optional(Schema.NullOr(s))
const Confidence = Schema.Number.pipe(Schema.between(0, 1))
/** A JSON object with some known keys; other keys are kept. */
const open = <F extends Schema.Struct.Fields>(fields: F) => Schema.Struct(fields, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

export const SignalMode = Enum("reactive", "proactive")

export const BusinessClassification = Schema.Struct({
  businessUnit: nullable(Schema.String),
  serviceOwner: nullable(Schema.String),
  criticality: nullable(Schema.String),
  slaRequirement: nullable(Schema.String)
})

export const EnrichmentResults = Schema.Struct({
  kubernetesContext: nullable(Loose),
  customLabels: nullable(Loose),
  businessClassification: nullable(BusinessClassification)
})

/** `POST /api/v1/incident/analyze`. Severity accepts the `medium`/`low` aliases. */
export const IncidentRequest = Schema.Struct({
  incident_id: Schema.String,
  remediation_id: NonEmpty,
  signal_name: Schema.String,
  severity: SeverityInput,
  signal_source: Schema.String,
  resource_namespace: Schema.String,
  resource_kind: Schema.String,
  resource_name: Schema.String,
  /** Empty when the upstream source could not determine it. */
  resource_api_version: Schema.String,
  error_message: Schema.String,
  environment: Schema.String,
  priority: Schema.String,
  risk_tolerance: Schema.String,
  business_category: Schema.String,
  cluster_name: Schema.String,
  description: nullable(Schema.String),
  is_duplicate: nullable(Schema.Boolean),
  occurrence_count: nullable(Int),
  deduplication_window_minutes: nullable(Int),
  firing_time: nullable(Schema.String),
  received_time: nullable(Schema.String),
  first_seen: nullable(Schema.String),
  last_seen: nullable(Schema.String),
  signal_labels: nullable(StringMap),
  signal_annotations: nullable(StringMap),
  enrichment_results: nullable(EnrichmentResults),
  signal_mode: nullable(SignalMode),
  /** Create the session `pending` and wait for an interactive start instead of investigating at once. */
  interactive: nullable(Schema.Boolean)
})
export interface IncidentRequest extends Schema.Schema.Type<typeof IncidentRequest> {}
export interface IncidentRequestEncoded extends Schema.Schema.Encoded<typeof IncidentRequest> {}

export const AlternativeWorkflow = Schema.Struct({
  workflow_id: Schema.String,
  execution_bundle: nullable(Schema.String),
  confidence: Confidence,
  rationale: Schema.String
})

export const ValidationAttempt = Schema.Struct({
  attempt: Int.pipe(Schema.greaterThanOrEqualTo(1)),
  workflow_id: nullable(Schema.String),
  is_valid: Schema.Boolean,
  errors: optional(Schema.Array(Schema.String)),
  timestamp: Schema.String
})

export const AlignmentFinding = Schema.Struct({
  step_index: Int,
  step_kind: Enum("llm_reasoning", "tool_result", "signal_input"),
  tool: optional(Schema.String),
  explanation: Schema.String
})

/** Emitted after every investigation (`alignment_verdict`). */
export const AlignmentVerdict = Schema.Struct({
  result: Enum("aligned", "suspicious"),
  circuit_breaker_activated: optional(Schema.Boolean),
  summary: optional(Schema.String),
  flagged: Int.pipe(Schema.nonNegative()),
  total: Int.pipe(Schema.nonNegative()),
  findings: optional(Schema.Array(AlignmentFinding)),
  grounding_review: optional(Loose)
})

/** The workflow the agent selected: name, action type, parameters (other keys kept). */
export const IncidentSelectedWorkflow = open({
  workflow_id: optional(Schema.String),
  name: optional(Schema.String),
  action_type: optional(Schema.String),
  version: optional(Schema.String),
  execution_bundle: optional(Schema.String),
  confidence: optional(Confidence),
  rationale: optional(Schema.String),
  parameters: optional(Loose)
})

/** `GET /api/v1/incident/session/{id}/result`. */
export const IncidentResponse = Schema.Struct({
  incident_id: Schema.String,
  analysis: Schema.String,
  root_cause_analysis: Loose,
  confidence: Confidence,
  timestamp: Schema.String,
  root_cause: optional(Schema.String),
  investigation_outcome: optional(Schema.String),
  actionable: optional(Schema.Boolean),
  selected_workflow: nullable(IncidentSelectedWorkflow),
  needs_human_review: withDefault(Schema.Boolean, false),
  human_review_reason: nullable(HumanReviewReason),
  is_actionable: nullable(Schema.Boolean),
  warnings: optional(Schema.Array(Schema.String)),
  alternative_workflows: optional(Schema.Array(AlternativeWorkflow)),
  validation_attempts_history: optional(Schema.Array(ValidationAttempt)),
  detected_labels: nullable(Loose),
  alignment_verdict: nullable(AlignmentVerdict)
})
export interface IncidentResponse extends Schema.Schema.Type<typeof IncidentResponse> {}

export const SessionStatusValues = ["pending", "investigating", "completed", "failed", "cancelled"] as const

/** Status of an agent session. */
export const SessionStatusValue = Enum(...SessionStatusValues)
export type SessionStatusValue = typeof SessionStatusValue.Type

/** Session status as read from an agent: the original's `running` reads as `investigating`. */
export const SessionStatusValueInput = Schema.transform(Enum(...SessionStatusValues, "running"), SessionStatusValue, {
  strict: true,
  decode: (s) => (s === "running" ? "investigating" : s),
  encode: (s) => s
})

export const isTerminalSessionStatus = (s: SessionStatusValue) => s === "completed" || s === "failed" || s === "cancelled"

/** `POST /api/v1/incident/analyze` answers 202 with the new session id. */
export const AnalyzeAccepted = Schema.Struct({ session_id: UuidString })

/** `GET /api/v1/incident/session/{id}`. */
export const SessionStatus = Schema.Struct({
  session_id: optional(Schema.String),
  status: SessionStatusValueInput,
  progress: optional(Schema.String),
  error: optional(Schema.String),
  acting_user: optional(Schema.String),
  acting_user_groups: optional(Schema.Array(Schema.String))
})
export interface SessionStatus extends Schema.Schema.Type<typeof SessionStatus> {}

/** `POST /api/v1/incident/session/{id}/cancel`. */
export const CancelSessionResponse = Schema.Struct({ session_id: Schema.String, status: Schema.String })

/** `GET /api/v1/incident/session/{id}/snapshot`. */
export const SessionSnapshot = Schema.Struct({
  session_id: Schema.String,
  status: Schema.String,
  created_at: Schema.String,
  metadata: optional(Loose),
  error: optional(Schema.String),
  cancelled_phase: optional(Schema.String),
  cancelled_at_turn: optional(Int),
  rca_summary: optional(Schema.String),
  total_prompt_tokens: optional(Int),
  total_completion_tokens: optional(Int)
})

/** Event types of the session stream (`GET …/stream`). */
export const SessionEventType = Enum(
  "reasoning_delta",
  "token_delta",
  "tool_call_start",
  "tool_call",
  "tool_result",
  "error",
  "complete",
  "cancelled",
  "alignment_verdict",
  "interactive_state",
  "session_ended"
)
export type SessionEventType = typeof SessionEventType.Type

/**
 * One line a person reads about a session event (MCP `notifications/message` and progress, the status stream), or
 * undefined for events not worth a line (token deltas, the final `session_ended`). `interactive_state` is ours, not
 * the original's: an interactive session changed hands, its analysis answered or failed, or it lapsed.
 */
export const describeSessionEvent = (type: string, data: Readonly<Record<string, unknown>>): string | undefined => {
  switch (type) {
    case "tool_call":
      return `calling ${String(data["name"])}`
    case "tool_result":
      return `${String(data["name"])} ${data["ok"] === true ? "answered" : "failed"}`
    case "reasoning_delta":
      return String(data["text"]).slice(0, 500)
    case "error":
      return `error: ${String(data["error"])}`
    case "complete":
      return "the investigation completed"
    case "cancelled":
      return `the investigation was cancelled: ${String(data["reason"] ?? "")}`
    case "interactive_state":
      return data["status"] === "disconnected"
        ? `the session of ${String(data["holder"])} lapsed (disconnected)`
        : data["previous_holder"] !== undefined
        ? `${String(data["holder"])} took the session over from ${String(data["previous_holder"])}`
        : data["analysis"] === "answered"
        ? `the analysis answered: ${String(data["summary"] ?? "").slice(0, 500)}`
        : data["analysis"] === "failed"
        ? `the analysis failed: ${String(data["error"] ?? "")}`
        : `${String(data["holder"])} drives the session (analysis ${String(data["analysis"])})`
    default:
      return undefined
  }
}
