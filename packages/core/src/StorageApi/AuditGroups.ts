/**
 * Endpoint declarations of the audit side of the storage API (paths relative to `/api/v1`).
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ConflictProblem, NotFoundProblem, PayloadTooLargeProblem } from "../Problem.ts"
import {
  AuditEventBatch,
  AuditEventCreated,
  AuditEventInput,
  AuditEventsQuery,
  AuditEventsQueryResponse,
  AuditWriteAccepted,
  BatchAuditEventResponse,
  NotificationAudit,
  NotificationAuditResponse
} from "./Audit.ts"
import { AccessRule } from "../EndpointAccess/Rule.ts"
import { StorageAuth } from "./Auth.ts"
import {
  AuditExportResponse,
  EffectivenessScoreResponse,
  ExportQuery,
  LegalHold,
  LegalHoldList,
  LegalHoldReleased,
  LegalHoldReleaseRequest,
  LegalHoldRequest,
  ReconstructionResponse,
  RemediationHistoryContext,
  RemediationHistoryQuery,
  SigningKeyPem,
  SigningKeySet,
  VerifyChainRequest,
  VerifyChainResponse,
  WorkflowEffectiveness,
  WorkflowEffectivenessQuery
} from "./Compliance.ts"

const CorrelationPath = Schema.Struct({ correlation_id: Schema.String.pipe(Schema.minLength(1)) })

export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.post("createAuditEvent", "/audit/events").annotate(AccessRule, AccessRule.write)
      .setPayload(AuditEventInput)
      .addSuccess(AuditEventCreated, { status: 201 })
      .addSuccess(AuditWriteAccepted, { status: 202 })
  )
  .add(
    HttpApiEndpoint.post("createAuditEventsBatch", "/audit/events/batch").annotate(AccessRule, AccessRule.write)
      .setPayload(AuditEventBatch)
      .addSuccess(BatchAuditEventResponse, { status: 201 })
      .addSuccess(AuditWriteAccepted, { status: 202 })
  )
  .add(
    HttpApiEndpoint.get("queryAuditEvents", "/audit/events").annotate(AccessRule, AccessRule.read)
      .setUrlParams(AuditEventsQuery)
      .addSuccess(AuditEventsQueryResponse)
  )
  .add(
    HttpApiEndpoint.post("createNotificationAudit", "/audit/notifications").annotate(AccessRule, AccessRule.write)
      .setPayload(NotificationAudit)
      .addSuccess(NotificationAuditResponse, { status: 201 })
      .addSuccess(AuditWriteAccepted, { status: 202 })
      .addError(ConflictProblem)
  )
  .middleware(StorageAuth)
{}

export class ComplianceGroup extends HttpApiGroup.make("compliance")
  .add(
    HttpApiEndpoint.post("verifyAuditChain", "/audit/verify-chain").annotate(AccessRule, AccessRule.read)
      .setPayload(VerifyChainRequest)
      .addSuccess(VerifyChainResponse)
  )
  .add(
    HttpApiEndpoint.post("placeLegalHold", "/audit/legal-hold").annotate(AccessRule, AccessRule.write)
      .setPayload(LegalHoldRequest)
      .addSuccess(LegalHold)
      .addError(NotFoundProblem)
  )
  .add(
    HttpApiEndpoint.del("releaseLegalHold", "/audit/legal-hold/:correlation_id").annotate(AccessRule, AccessRule.grant("legal-hold-release"))
      .setPath(CorrelationPath)
      .setPayload(LegalHoldReleaseRequest)
      .addSuccess(LegalHoldReleased)
      .addError(NotFoundProblem)
  )
  .add(HttpApiEndpoint.get("listLegalHolds", "/audit/legal-hold").annotate(AccessRule, AccessRule.read).addSuccess(LegalHoldList))
  .add(
    HttpApiEndpoint.get("exportAuditEvents", "/audit/export").annotate(AccessRule, AccessRule.grant("export"))
      .setUrlParams(ExportQuery)
      .addSuccess(AuditExportResponse)
      .addError(PayloadTooLargeProblem)
  )
  .add(
    HttpApiEndpoint.post("reconstructRemediationRequest", "/audit/remediation-requests/:correlation_id/reconstruct").annotate(AccessRule, AccessRule.read)
      .setPath(CorrelationPath)
      .addSuccess(ReconstructionResponse)
      .addError(NotFoundProblem)
  )
  .add(
    HttpApiEndpoint.get("getEffectivenessScore", "/effectiveness/:correlation_id").annotate(AccessRule, AccessRule.read)
      .setPath(CorrelationPath)
      .addSuccess(EffectivenessScoreResponse)
      .addError(NotFoundProblem)
  )
  .add(
    HttpApiEndpoint.get("getWorkflowEffectiveness", "/effectiveness").annotate(AccessRule, AccessRule.read)
      .setUrlParams(WorkflowEffectivenessQuery)
      .addSuccess(WorkflowEffectiveness)
  )
  .add(
    HttpApiEndpoint.get("getRemediationHistoryContext", "/remediation-history/context").annotate(AccessRule, AccessRule.read)
      .setUrlParams(RemediationHistoryQuery)
      .addSuccess(RemediationHistoryContext)
  )
  .middleware(StorageAuth)
{}

/** Unauthenticated: the export verification key is public so a third party can check an export. */
export class PublicGroup extends HttpApiGroup.make("public")
  .add(HttpApiEndpoint.get("exportSigningKey", "/audit/export/signing-key").annotate(AccessRule, AccessRule.public).addSuccess(SigningKeySet))
  .add(HttpApiEndpoint.get("exportSigningKeyPem", "/audit/export/signing-key.pem").annotate(AccessRule, AccessRule.public).addSuccess(SigningKeyPem))
{}
