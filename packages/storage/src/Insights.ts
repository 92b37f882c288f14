/**
 * Read models over the audit trail: effectiveness of one remediation, a workflow's track record, and the
 * remediation-history context of a target (original: DD-HAPI-016). Tier 1 is the detailed chain inside
 * `tier1Window`; tier 2 (summaries back to `tier2Window`) is included when the current spec hash matches an
 * older pre-remediation hash, i.e. the target regressed to a configuration that was remediated before.
 */
import { PgClient } from "@effect/sql-pg"
import { formatGoDuration, parseGoDuration } from "@kubemend/core/Config"
import type { AuditEvent } from "@kubemend/core/domain/Audit"
import { NotFound } from "@kubemend/core/Errors"
import type { RemediationHistoryContext, RemediationHistoryEntry, RemediationHistoryQuery, WorkflowEffectiveness } from "@kubemend/core/StorageApi"
import { Clock, Duration, Effect, Option } from "effect"
import { AuditRepo } from "./Db/AuditRepo.ts"
import { auditColumns, type AuditRow, toAuditEvent } from "./Db/AuditRows.ts"
import { orUnavailable } from "./Db/Errors.ts"
import { isEffectivenessEvent, scoreOf, signalResolved } from "./Effectiveness.ts"

const related = [
  "effectiveness.%",
  "orchestrator.lifecycle.completed",
  "orchestrator.lifecycle.failed"
]

const byCorrelation = (events: ReadonlyArray<AuditEvent>) => {
  const map = new Map<string, Array<AuditEvent>>()
  for (const e of events) map.set(e.correlation_id, [...(map.get(e.correlation_id) ?? []), e])
  return map
}

const str = (d: Record<string, unknown> | undefined, k: string) => (typeof d?.[k] === "string" ? (d[k] as string) : undefined)

export class Insights extends Effect.Service<Insights>()("@kubemend/storage/Insights", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const repo = yield* AuditRepo
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const eventsOf = (correlationIds: ReadonlyArray<string>, patterns: ReadonlyArray<string>) =>
      correlationIds.length === 0
        ? Effect.succeed([] as ReadonlyArray<AuditEvent>)
        : sql
          .unsafe<AuditRow>(
            `SELECT ${auditColumns} FROM audit_events
             WHERE correlation_id = ANY($1::text[]) AND event_type LIKE ANY($2::text[])
             ORDER BY correlation_id, chain_position`,
            [correlationIds, patterns]
          )
          .pipe(Effect.map((rows) => rows.map(toAuditEvent)))

    const effectiveness = (correlationId: string) =>
      Effect.gen(function* () {
        const { rows } = yield* repo.chain(correlationId)
        const events = rows.map(toAuditEvent).filter(isEffectivenessEvent)
        if (events.length === 0) {
          return yield* new NotFound({
            resource: "effectiveness assessment",
            id: correlationId,
            detail: `No effectiveness assessment events found for correlation_id: ${correlationId}`
          })
        }
        return scoreOf(correlationId, events, yield* now)
      })

    const workflowEffectiveness = (workflowId: string, namespace: string | undefined) =>
      Effect.gen(function* () {
        const terminal = yield* sql.unsafe<{ correlation_id: string; succeeded: boolean; duration_ms: number | null }>(
          `SELECT * FROM (
             SELECT DISTINCT ON (correlation_id) correlation_id,
               event_type = 'workflowexecution.workflow.completed' AS succeeded,
               coalesce(duration_ms, (extract(epoch FROM ((event_data->>'completed_at')::timestamptz
                 - (event_data->>'started_at')::timestamptz)) * 1000)::int) AS duration_ms
             FROM audit_events
             WHERE event_type IN ('workflowexecution.workflow.completed', 'workflowexecution.workflow.failed')
               AND event_data->>'workflow_id' = $1
               AND ($2::text IS NULL OR coalesce(namespace, event_data->>'namespace') = $2)
             ORDER BY correlation_id, chain_position DESC) t
           LIMIT 10000`,
          [workflowId, namespace ?? null]
        )
        const durations = terminal.flatMap((t) => (t.duration_ms === null ? [] : [t.duration_ms]))
        const effects = byCorrelation(yield* eventsOf(terminal.map((t) => t.correlation_id), ["effectiveness.%"]))
        const at = yield* now
        const scores = [...effects.entries()].flatMap(([cid, events]) => {
          const s = scoreOf(cid, events, at).score
          return s === null ? [] : [s]
        })
        const avg = (xs: ReadonlyArray<number>) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length)
        return {
          workflow_id: workflowId,
          ...(namespace === undefined ? {} : { namespace }),
          success_rate: terminal.length === 0 ? 0 : Math.round((terminal.filter((t) => t.succeeded).length / terminal.length) * 10000) / 10000,
          avg_duration: formatGoDuration(Duration.millis(Math.round(avg(durations)))),
          sample_size: terminal.length,
          avg_effectiveness_score: scores.length === 0 ? null : Math.round(avg(scores) * 10000) / 10000
        } satisfies WorkflowEffectiveness
      }).pipe(orUnavailable, Effect.withSpan("Insights.workflowEffectiveness"))

    const history = (q: RemediationHistoryQuery) =>
      Effect.gen(function* () {
        const tier1Window = q.tier1Window ?? "24h"
        const tier2Window = q.tier2Window ?? "2160h"
        const tier1 = Option.getOrElse(parseGoDuration(tier1Window), () => Duration.hours(24))
        const tier2 = Duration.max(tier1, Option.getOrElse(parseGoDuration(tier2Window), () => Duration.hours(2160)))
        const at = yield* now
        const target = `${q.targetNamespace}/${q.targetKind}/${q.targetName}`
        const created = yield* sql.unsafe<AuditRow>(
          `SELECT ${auditColumns} FROM audit_events
           WHERE event_type = 'remediation.workflow_created' AND event_data->>'target_resource' = $1
             AND event_timestamp >= $2
           ORDER BY event_timestamp DESC, seq DESC LIMIT 500`,
          [target, new Date(at.getTime() - Duration.toMillis(tier2))]
        )
        const origins = created.map(toAuditEvent)
        const events = byCorrelation(yield* eventsOf([...new Set(origins.map((e) => e.correlation_id))], related))
        const current = q.currentSpecHash ?? ""
        const entries = origins.map((origin): RemediationHistoryEntry => {
          const trail = events.get(origin.correlation_id) ?? []
          const find = (type: string) => [...trail].reverse().find((e) => e.event_type === type)
          const completed = find("effectiveness.assessment.completed")
          const hash = find("effectiveness.hash.computed")?.event_data
          const lifecycle = find("orchestrator.lifecycle.completed") ?? find("orchestrator.lifecycle.failed")
          const pre = str(origin.event_data, "pre_remediation_spec_hash") ?? str(hash, "pre_remediation_spec_hash")
          const post = str(hash, "post_remediation_spec_hash") ?? str(completed?.event_data, "post_remediation_spec_hash")
          const score = completed === undefined ? null : scoreOf(origin.correlation_id, trail, at).score
          const health = find("effectiveness.health.assessed")?.event_data["health_checks"]
          const metrics = find("effectiveness.metrics.assessed")?.event_data["metric_deltas"]
          return {
            remediationUID: origin.correlation_id,
            ...(str(origin.event_data, "signal_fingerprint") ? { signalFingerprint: str(origin.event_data, "signal_fingerprint")! } : {}),
            ...(str(origin.event_data, "signal_type") ? { signalType: str(origin.event_data, "signal_type")! } : {}),
            actionType: str(origin.event_data, "action_type") ?? null,
            outcome: str(lifecycle?.event_data, "crd_outcome") ?? str(lifecycle?.event_data, "outcome") ?? "Pending",
            effectivenessScore: score,
            signalResolved: signalResolved(trail),
            hashMatch: current !== "" && current === pre ? "preRemediation" : current !== "" && current === post ? "postRemediation" : "none",
            ...(pre === undefined ? {} : { preRemediationSpecHash: pre }),
            ...(post === undefined ? {} : { postRemediationSpecHash: post }),
            ...(typeof health === "object" && health !== null ? { healthChecks: health as Record<string, unknown> } : {}),
            ...(typeof metrics === "object" && metrics !== null ? { metricDeltas: metrics as Record<string, unknown> } : {}),
            completedAt: str(completed?.event_data, "completed_at") ?? completed?.event_timestamp ?? origin.event_timestamp,
            assessmentReason: completed === undefined ? null : str(completed.event_data, "reason") ?? "Full",
            ...(completed === undefined ? {} : { assessedAt: completed.event_timestamp })
          }
        })
        const cutoff = at.getTime() - Duration.toMillis(tier1)
        const recent = entries.filter((_, i) => Date.parse(origins[i]!.event_timestamp) >= cutoff)
        const older = entries.filter((_, i) => Date.parse(origins[i]!.event_timestamp) < cutoff)
        const regressed = (xs: ReadonlyArray<RemediationHistoryEntry>) => xs.some((e) => e.hashMatch === "preRemediation")
        return {
          targetResource: target,
          currentSpecHash: current,
          regressionDetected: regressed(entries),
          tier1: { window: tier1Window, chain: recent },
          tier2: {
            window: tier2Window,
            chain: regressed(older)
              ? older.map((
                { remediationUID, signalType, actionType, outcome, effectivenessScore, signalResolved, hashMatch, assessmentReason, completedAt }
              ) => ({
                remediationUID,
                ...(signalType === undefined ? {} : { signalType }),
                actionType,
                ...(outcome === undefined ? {} : { outcome }),
                effectivenessScore,
                signalResolved,
                hashMatch,
                assessmentReason,
                completedAt
              }))
              : []
          }
        } satisfies RemediationHistoryContext
      }).pipe(orUnavailable, Effect.withSpan("Insights.history"))

    return { effectiveness, workflowEffectiveness, history } as const
  })
}) {}
