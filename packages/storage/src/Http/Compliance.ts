/**
 * Handlers of the compliance and read-model endpoints: verify-chain, legal hold, signed export, reconstruction,
 * effectiveness and remediation-history context.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { NotFound } from "@kubemend/core/Errors"
import { ExportSignatureHeader, StorageApi, StorageCaller } from "@kubemend/core/StorageApi"
import { Clock, Effect, Either } from "effect"
import { AuditWriter } from "../AuditWriter.ts"
import { ChainWalk } from "../Chain.ts"
import { AuditRepo } from "../Db/AuditRepo.ts"
import { toAuditEvent } from "../Db/AuditRows.ts"
import { HoldRepo } from "../Db/HoldRepo.ts"
import { Exporter } from "../Export.ts"
import { ExportSigner } from "../ExportSigner.ts"
import { Insights } from "../Insights.ts"
import { reconstruct } from "../Reconstruct.ts"
import { StorageConfig } from "../StorageConfig.ts"
import { orProblem } from "./Problems.ts"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const ComplianceHttp = HttpApiBuilder.group(StorageApi, "compliance", (handlers) =>
  Effect.gen(function* () {
    const repo = yield* AuditRepo
    const holds = yield* HoldRepo
    const writer = yield* AuditWriter
    const exporter = yield* Exporter
    const insights = yield* Insights
    const config = yield* StorageConfig
    return handlers
      .handle("verifyAuditChain", ({ payload }) =>
        Effect.gen(function* () {
          const walk = new ChainWalk(writer.hasher, false)
          const report = walk.finish(yield* repo.verify(payload.correlation_id, walk))
          const first = report.findings[0]
          return {
            correlation_id: payload.correlation_id,
            is_valid: report.findings.length === 0,
            total_events: report.total,
            verified_events: report.verified,
            tampered_events: report.findings,
            ...(first === undefined ? {} : { first_tampered_event_id: first.event_id }),
            verification_time: (yield* now).toISOString(),
            message: report.total === 0
              ? "no events for this correlation_id"
              : first === undefined
              ? `hash chain intact: ${report.verified} of ${report.total} events verified`
              : `hash chain broken: ${report.findings.length} event(s) failed verification, first ${first.event_id}: ${first.message}`
          }
        }).pipe(orProblem))
      .handle("placeLegalHold", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* StorageCaller
          return yield* holds.place(payload.correlation_id, payload.reason, caller.username, yield* now)
        }).pipe(orProblem))
      .handle("releaseLegalHold", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* StorageCaller
          return yield* holds.release(path.correlation_id, caller.username, payload.release_reason, yield* now)
        }).pipe(orProblem))
      .handle("listLegalHolds", () => holds.list.pipe(Effect.map((list) => ({ holds: list, total: list.length })), orProblem))
      .handle("exportAuditEvents", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* StorageCaller
          const { body, signature } = yield* exporter.build(urlParams, caller.username)
          return HttpServerResponse.uint8Array(body, {
            contentType: "application/json",
            headers: { [ExportSignatureHeader]: signature }
          })
        }).pipe(orProblem))
      .handle("reconstructRemediationRequest", ({ path }) =>
        Effect.gen(function* () {
          const { rows } = yield* repo.chain(path.correlation_id)
          if (rows.length === 0) {
            return yield* new NotFound({
              resource: "audit events",
              id: path.correlation_id,
              detail: `No audit events found for correlation_id: ${path.correlation_id}`
            })
          }
          const at = yield* now
          const result = reconstruct(path.correlation_id, rows.map(toAuditEvent), config.apiGroup, at)
          if (Either.isLeft(result)) return yield* result.left
          return {
            remediation_request_yaml: result.right.yaml,
            validation: {
              is_valid: result.right.errors.length === 0,
              completeness: result.right.completeness,
              errors: result.right.errors,
              warnings: result.right.warnings
            },
            reconstructed_at: at.toISOString(),
            correlation_id: path.correlation_id
          }
        }).pipe(orProblem))
      .handle("getEffectivenessScore", ({ path }) => insights.effectiveness(path.correlation_id).pipe(orProblem))
      .handle("getWorkflowEffectiveness", ({ urlParams }) => insights.workflowEffectiveness(urlParams.workflow_id, urlParams.namespace).pipe(orProblem))
      .handle("getRemediationHistoryContext", ({ urlParams }) => insights.history(urlParams).pipe(orProblem))
  }))

export const PublicHttp = HttpApiBuilder.group(StorageApi, "public", (handlers) =>
  Effect.map(ExportSigner, (signer) =>
    handlers
      .handle("exportSigningKey", () => Effect.succeed(signer.jwks))
      .handle("exportSigningKeyPem", () => Effect.succeed(signer.publicKeyPem))))
