/**
 * Wire schemas of the compliance endpoints: hash-chain verification, legal hold, signed export, RemediationRequest
 * reconstruction, effectiveness and remediation-history context. Names follow the original storage OpenAPI.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { AuditEvent } from "../domain/Audit.ts"
import { DateTimeString, GoDurationString, Int, optional } from "../domain/Common.ts"

const NonEmpty = Schema.String.pipe(Schema.minLength(1))
const IntFromString = Schema.NumberFromString.pipe(Schema.int())
const BooleanFromString = Schema.transform(Schema.Literal("true", "false"), Schema.Boolean, {
  strict: true,
  decode: (s) => s === "true",
  encode: (b) => (b ? "true" : "false")
})

export const VerifyChainRequest = Schema.Struct({ correlation_id: NonEmpty })

export const TamperedEvent = Schema.Struct({
  event_id: Schema.String,
  event_timestamp: optional(Schema.String),
  expected_hash: optional(Schema.String),
  actual_hash: optional(Schema.String),
  previous_hash: optional(Schema.String),
  message: Schema.String
})
export interface TamperedEvent extends Schema.Schema.Type<typeof TamperedEvent> {}

/** 200 even when tampering is found (`is_valid: false`); `tampered_events` is in chain order, the first one first. */
export const VerifyChainResponse = Schema.Struct({
  correlation_id: Schema.String,
  is_valid: Schema.Boolean,
  total_events: Int,
  verified_events: Int,
  tampered_events: Schema.Array(TamperedEvent),
  first_tampered_event_id: optional(Schema.String),
  verification_time: Schema.String,
  message: Schema.String
})
export interface VerifyChainResponse extends Schema.Schema.Type<typeof VerifyChainResponse> {}

export const LegalHoldRequest = Schema.Struct({ correlation_id: NonEmpty, reason: NonEmpty })

/** `placed_by` is the authenticated caller (TokenReview username), never taken from the body. */
export const LegalHold = Schema.Struct({
  correlation_id: Schema.String,
  events_affected: Int,
  placed_by: Schema.String,
  placed_at: Schema.String,
  reason: Schema.String
})
export interface LegalHold extends Schema.Schema.Type<typeof LegalHold> {}

export const LegalHoldList = Schema.Struct({ holds: Schema.Array(LegalHold), total: Int })

export const LegalHoldReleaseRequest = Schema.Struct({ release_reason: NonEmpty })

export const LegalHoldReleased = Schema.Struct({
  correlation_id: Schema.String,
  events_released: Int,
  released_by: Schema.String,
  released_at: Schema.String
})

/** `limit` defaults to "everything that matches"; an export of more than 10,000 events is refused with 413. */
export const ExportQuery = Schema.Struct({
  start_time: optional(DateTimeString),
  end_time: optional(DateTimeString),
  correlation_id: optional(Schema.String),
  event_category: optional(Schema.String),
  format: optional(Schema.Literal("json")),
  include_detached_signature: optional(BooleanFromString),
  offset: optional(IntFromString.pipe(Schema.nonNegative())),
  limit: optional(IntFromString.pipe(Schema.positive())),
  redact_pii: optional(BooleanFromString)
})
export interface ExportQuery extends Schema.Schema.Type<typeof ExportQuery> {}

export const ExportedEvent = Schema.Struct({ ...AuditEvent.fields, hash_chain_valid: Schema.Boolean })

/**
 * The export body. The document without `detached_signature` is what is signed (byte for byte): the detached JWS
 * (`<protected>..<signature>`, ES256) travels in the `X-Export-Signature` response header; with
 * `include_detached_signature=true` a DER ECDSA-SHA256 signature (base64) is appended as the last member,
 * `detached_signature`. The public key: `GET /api/v1/audit/export/signing-key` (JWKS) or `…/signing-key.pem`.
 */
export const AuditExportResponse = Schema.Struct({
  export_metadata: Schema.Struct({
    export_timestamp: Schema.String,
    export_format: Schema.Literal("json"),
    query_filters: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    total_events: Int,
    signature: Schema.String,
    signature_algorithm: Schema.String,
    signature_key_id: Schema.String,
    exported_by: Schema.String
  }),
  events: Schema.Array(ExportedEvent),
  hash_chain_verification: Schema.Struct({
    total_events_verified: Int,
    valid_chain_events: Int,
    broken_chain_events: Int,
    chain_integrity_percentage: Schema.Number,
    verification_timestamp: Schema.String,
    tampered_event_ids: Schema.Array(Schema.String)
  }),
  detached_signature: optional(Schema.String)
})
export interface AuditExportResponse extends Schema.Schema.Type<typeof AuditExportResponse> {}

/** The response header carrying the detached JWS over the export body. */
export const ExportSignatureHeader = "x-export-signature"

/** The export verification key as PEM (SubjectPublicKeyInfo), for `openssl dgst -verify`. */
export const SigningKeyPem = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/x-pem-file" }))

export const SigningKeySet = Schema.Struct({
  keys: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

export const ReconstructionResponse = Schema.Struct({
  remediation_request_yaml: Schema.String,
  validation: Schema.Struct({
    is_valid: Schema.Boolean,
    completeness: Int,
    errors: Schema.Array(Schema.String),
    warnings: Schema.Array(Schema.String)
  }),
  reconstructed_at: Schema.String,
  correlation_id: Schema.String
})
export interface ReconstructionResponse extends Schema.Schema.Type<typeof ReconstructionResponse> {}

const NullableNumber = Schema.NullOr(Schema.Number)

export const EffectivenessScoreResponse = Schema.Struct({
  correlation_id: Schema.String,
  score: NullableNumber,
  components: Schema.Struct({
    health_assessed: Schema.Boolean,
    health_score: NullableNumber,
    health_details: optional(Schema.String),
    alert_assessed: Schema.Boolean,
    alert_score: NullableNumber,
    alert_details: optional(Schema.String),
    metrics_assessed: Schema.Boolean,
    metrics_score: NullableNumber,
    metrics_details: optional(Schema.String)
  }),
  hash_comparison: optional(
    Schema.Struct({
      pre_remediation_spec_hash: optional(Schema.String),
      post_remediation_spec_hash: optional(Schema.String),
      hash_match: Schema.NullOr(Schema.Boolean)
    })
  ),
  assessment_status: Schema.String,
  computed_at: Schema.String
})
export interface EffectivenessScoreResponse extends Schema.Schema.Type<typeof EffectivenessScoreResponse> {}

/** Aggregate over a workflow's executions (optionally one namespace): what the gateway's effectiveness tool shows. */
export const WorkflowEffectivenessQuery = Schema.Struct({
  workflow_id: NonEmpty,
  namespace: optional(Schema.String)
})

export const WorkflowEffectiveness = Schema.Struct({
  workflow_id: Schema.String,
  namespace: optional(Schema.String),
  success_rate: Schema.Number,
  /** Go duration string (`1m30s`). */
  avg_duration: Schema.String,
  sample_size: Int,
  avg_effectiveness_score: NullableNumber
})
export interface WorkflowEffectiveness extends Schema.Schema.Type<typeof WorkflowEffectiveness> {}

export const RemediationHistoryQuery = Schema.Struct({
  targetKind: NonEmpty,
  targetName: NonEmpty,
  targetNamespace: NonEmpty,
  currentSpecHash: optional(Schema.String),
  tier1Window: optional(GoDurationString),
  tier2Window: optional(GoDurationString)
})
export interface RemediationHistoryQuery extends Schema.Schema.Type<typeof RemediationHistoryQuery> {}

const HashMatch = Schema.Literal("preRemediation", "postRemediation", "none")

export const RemediationHistorySummary = Schema.Struct({
  remediationUID: Schema.String,
  signalType: optional(Schema.String),
  actionType: Schema.NullOr(Schema.String),
  outcome: optional(Schema.String),
  effectivenessScore: NullableNumber,
  signalResolved: Schema.NullOr(Schema.Boolean),
  hashMatch: HashMatch,
  assessmentReason: Schema.NullOr(Schema.String),
  completedAt: Schema.String
})

export const RemediationHistoryEntry = Schema.Struct({
  ...RemediationHistorySummary.fields,
  signalFingerprint: optional(Schema.String),
  preRemediationSpecHash: optional(Schema.String),
  postRemediationSpecHash: optional(Schema.String),
  healthChecks: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  metricDeltas: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  sideEffects: optional(Schema.Array(Schema.String)),
  assessedAt: optional(Schema.String)
})
export interface RemediationHistoryEntry extends Schema.Schema.Type<typeof RemediationHistoryEntry> {}

export const RemediationHistoryContext = Schema.Struct({
  targetResource: Schema.String,
  currentSpecHash: Schema.String,
  regressionDetected: Schema.Boolean,
  tier1: Schema.Struct({ window: Schema.String, chain: Schema.Array(RemediationHistoryEntry) }),
  tier2: Schema.Struct({ window: Schema.String, chain: Schema.Array(RemediationHistorySummary) })
})
export interface RemediationHistoryContext extends Schema.Schema.Type<typeof RemediationHistoryContext> {}
