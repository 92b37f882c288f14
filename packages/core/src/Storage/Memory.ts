/**
 * `Storage.layerMemory`: the storage API's behaviour in memory for callers' unit tests. Same batch bounds,
 * idempotent event ids and per-correlation hash chain, same workflow registration rules and ids (UUIDv5 of the
 * content hash), same label matching. Effectiveness and reconstruction answer what the seed holds.
 */
import { Clock, Duration, Effect, Either, Option, Ref } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { parseGoDuration } from "../Config.ts"
import type { AuditEvent } from "../domain/Audit.ts"
import { Conflict, ContentIntegrityViolation, NotFound, ReconstructionIncomplete, ValidationError } from "../Errors.ts"
import type { Storage, StorageService } from "../Storage.ts"
import type {
  ActionTypeCreateRequest,
  ActionTypeCreateResponse,
  EffectivenessScoreResponse,
  ReconstructionResponse,
  RemediationWorkflow,
  SignalContext,
  StructuredDescription
} from "../StorageApi.ts"
import { canonicalJson, customLabelsMatch, labelMatches, parseCustomLabels, parseWorkflowContent } from "../StorageApi/WorkflowContent.ts"

export interface MemorySeed {
  readonly events?: ReadonlyArray<AuditEvent>
  readonly workflows?: ReadonlyArray<RemediationWorkflow>
  readonly actionTypes?: ReadonlyArray<{ readonly name: string; readonly description: StructuredDescription }>
  readonly effectiveness?: Readonly<Record<string, EffectivenessScoreResponse>>
  readonly reconstructions?: Readonly<Record<string, ReconstructionResponse>>
}

const matches = (w: RemediationWorkflow, c: SignalContext) =>
  (c.severity === undefined || labelMatches(w.labels, "severity", c.severity)) &&
  (c.component === undefined || labelMatches(w.labels, "component", c.component)) &&
  (c.environment === undefined || labelMatches(w.labels, "environment", c.environment)) &&
  (c.priority === undefined || labelMatches(w.labels, "priority", c.priority)) &&
  (c.custom_labels === undefined || customLabelsMatch(w.customLabels, parseCustomLabels(c.custom_labels) ?? {}))

const page = <A>(items: ReadonlyArray<A>, offset = 0, limit = 10) => ({
  items: items.slice(offset, offset + limit),
  pagination: { totalCount: items.length, offset, limit, hasMore: offset + limit < items.length }
})

export const makeMemory = (seed: MemorySeed): Effect.Effect<Storage["Type"]> =>
  Effect.gen(function* () {
    const events = yield* Ref.make<ReadonlyArray<AuditEvent>>(seed.events ?? [])
    const workflows = yield* Ref.make<ReadonlyArray<RemediationWorkflow>>(seed.workflows ?? [])
    const actionTypes = yield* Ref.make(new Map((seed.actionTypes ?? []).map((a) => [a.name, a.description])))
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const notifications = yield* Ref.make(new Set<string>())

    const service: StorageService = {
      writeEvents: (input) =>
        Effect.gen(function* () {
          if (input.length < 1 || input.length > 1000) {
            return yield* new ValidationError({ detail: `a batch must hold between 1 and 1000 events (got ${input.length})` })
          }
          const withIds = input.map((e) => ({ ...e, event_id: (e.event_id ?? randomUUID()).toLowerCase() }))
          yield* Ref.update(events, (stored) => {
            const next = [...stored]
            for (const e of withIds) {
              if (next.some((s) => s.event_id === e.event_id)) continue
              const chain = next.filter((s) => s.correlation_id === e.correlation_id)
              const previous = chain.at(-1)?.event_hash ?? ""
              const hash = createHash("sha256").update(previous ?? "").update(canonicalJson(e)).digest("hex")
              next.push({ ...e, event_hash: hash, previous_event_hash: previous, hash_algorithm: "sha256-unkeyed", legal_hold: false })
            }
            return next
          })
          return { eventIds: withIds.map((e) => e.event_id), queued: false }
        }),
      queryEvents: (q) =>
        Effect.gen(function* () {
          const at = (yield* now).getTime()
          const since = q.since === undefined
            ? undefined
            : Option.match(parseGoDuration(q.since), { onSome: (d) => at - Duration.toMillis(d), onNone: () => Date.parse(q.since!) })
          const until = q.until === undefined ? undefined : Date.parse(q.until)
          const all = (yield* Ref.get(events))
            .filter((e) =>
              (q.event_type === undefined || e.event_type === q.event_type) &&
              (q.event_category === undefined || e.event_category === q.event_category) &&
              (q.event_outcome === undefined || e.event_outcome === q.event_outcome) &&
              (q.correlation_id === undefined || e.correlation_id === q.correlation_id) &&
              (q.actor_id === undefined || e.actor_id === q.actor_id) &&
              (q.severity === undefined || e.severity === q.severity) &&
              (since === undefined || Date.parse(e.event_timestamp) >= since) &&
              (until === undefined || Date.parse(e.event_timestamp) <= until) &&
              (q.detail_key === undefined || String(e.event_data[q.detail_key]) === q.detail_value)
            )
            .sort((a, b) => Date.parse(b.event_timestamp) - Date.parse(a.event_timestamp))
          const limit = q.limit ?? 50
          const offset = q.offset ?? 0
          const data = all.slice(offset, offset + limit)
          return { data, pagination: { limit, offset, total: all.length, has_more: offset + data.length < all.length } }
        }),
      verifyChain: (correlationId) =>
        Effect.gen(function* () {
          const n = (yield* Ref.get(events)).filter((e) => e.correlation_id === correlationId).length
          return {
            correlation_id: correlationId,
            is_valid: true,
            total_events: n,
            verified_events: n,
            tampered_events: [],
            verification_time: (yield* now).toISOString(),
            message: "hash chain intact"
          }
        }),
      reconstruct: (correlationId) =>
        Effect.gen(function* () {
          const seeded = seed.reconstructions?.[correlationId]
          if (seeded !== undefined) return seeded
          const any = (yield* Ref.get(events)).some((e) => e.correlation_id === correlationId)
          return yield* any
            ? new ReconstructionIncomplete({ completeness: 0, detail: "no reconstruction seeded for this correlation id" })
            : new NotFound({ resource: "audit events", id: correlationId })
        }),
      effectiveness: (correlationId) =>
        Option.match(Option.fromNullable(seed.effectiveness?.[correlationId]), {
          onNone: () => new NotFound({ resource: "effectiveness assessment", id: correlationId }),
          onSome: Effect.succeed
        }),
      workflowEffectiveness: (workflowId, namespace) =>
        Effect.map(Ref.get(events), (all) => {
          const runs = all.filter((e) =>
            (e.event_type === "workflowexecution.workflow.completed" || e.event_type === "workflowexecution.workflow.failed") &&
            e.event_data["workflow_id"] === workflowId && (namespace === undefined || e.namespace === namespace)
          )
          const durations = runs.flatMap((e) => (typeof e.duration_ms === "number" ? [e.duration_ms] : []))
          const avg = durations.length === 0 ? 0 : durations.reduce((a, b) => a + b, 0) / durations.length
          return {
            workflow_id: workflowId,
            ...(namespace === undefined ? {} : { namespace }),
            success_rate: runs.length === 0 ? 0 : runs.filter((e) => e.event_type.endsWith("completed")).length / runs.length,
            avg_duration: `${Math.round(avg / 1000)}s`,
            sample_size: runs.length,
            avg_effectiveness_score: null
          }
        }),
      remediationHistory: (q) =>
        Effect.gen(function* () {
          const target = `${q.targetNamespace}/${q.targetKind}/${q.targetName}`
          const window = Option.getOrElse(parseGoDuration(q.tier1Window ?? "24h"), () => Duration.hours(24))
          const cutoff = (yield* now).getTime() - Duration.toMillis(window)
          const chain = (yield* Ref.get(events))
            .filter((e) =>
              e.event_type === "remediation.workflow_created" && e.event_data["target_resource"] === target && Date.parse(e.event_timestamp) >= cutoff
            )
            .map((e) => ({
              remediationUID: e.correlation_id,
              actionType: typeof e.event_data["action_type"] === "string" ? (e.event_data["action_type"] as string) : null,
              outcome: "Pending",
              effectivenessScore: null,
              signalResolved: null,
              hashMatch: "none" as const,
              assessmentReason: null,
              completedAt: e.event_timestamp
            }))
          return {
            targetResource: target,
            currentSpecHash: q.currentSpecHash ?? "",
            regressionDetected: false,
            tier1: { window: q.tier1Window ?? "24h", chain },
            tier2: { window: q.tier2Window ?? "2160h", chain: [] }
          }
        }),
      listWorkflows: (q) =>
        Effect.map(Ref.get(workflows), (all) => {
          const hits = all.filter((w) =>
            matches(w, q) && (q.status === undefined || w.status === q.status) && (q.workflow_name === undefined || w.workflowName === q.workflow_name)
          )
          const limit = q.limit ?? 100
          const offset = q.offset ?? 0
          return { workflows: hits.slice(offset, offset + limit), limit, offset, total: hits.length }
        }),
      getWorkflow: (id, context = {}) =>
        Effect.flatMap(Ref.get(workflows), (all) =>
          Option.match(Option.fromNullable(all.find((w) => w.workflowId === id && matches(w, context))), {
            onNone: () => new NotFound({ resource: "workflow", id }),
            onSome: Effect.succeed
          })),
      registerWorkflow: (request) =>
        Effect.gen(function* () {
          const parsed = parseWorkflowContent(request.content)
          if (Either.isLeft(parsed)) return yield* new ValidationError({ field: "content", detail: parsed.left })
          const p = parsed.right
          if (!(yield* Ref.get(actionTypes)).has(p.actionType)) {
            return yield* new ValidationError({ field: "spec.actionType", detail: `unknown action type ${p.actionType}` })
          }
          const all = yield* Ref.get(workflows)
          const existing = all.find((w) => w.workflowName === p.workflowName && w.version === p.version)
          if (existing !== undefined) {
            if (existing.contentHash !== p.contentHash) return yield* new ContentIntegrityViolation({ name: p.workflowName, version: p.version })
            return { workflow: existing, created: false }
          }
          const at = (yield* now).toISOString()
          const { contentHash, workflowId, ...fields } = p
          const previous = all.find((w) => w.workflowName === p.workflowName && w.isLatestVersion)
          const workflow: RemediationWorkflow = {
            ...fields,
            workflowId,
            contentHash,
            content: request.content,
            status: "Active",
            isLatestVersion: true,
            ...(previous === undefined ? {} : { previousVersion: previous.version }),
            createdAt: at,
            updatedAt: at
          }
          yield* Ref.set(workflows, [...all.map((w) => (w.workflowName === p.workflowName ? { ...w, isLatestVersion: false } : w)), workflow])
          return { workflow, created: true }
        }),
      listActions: (q) =>
        Effect.gen(function* () {
          const active = (yield* Ref.get(workflows)).filter((w) => w.status === "Active" && w.isLatestVersion && matches(w, q))
          const types = [...(yield* Ref.get(actionTypes)).entries()]
            .map(([actionType, description]) => ({ actionType, description, workflowCount: active.filter((w) => w.actionType === actionType).length }))
            .filter((a) => a.workflowCount > 0)
            .sort((a, b) => a.actionType.localeCompare(b.actionType))
          const p = page(types, q.offset, q.limit)
          return { actionTypes: p.items, pagination: p.pagination }
        }),
      listWorkflowsByAction: (actionType, q) =>
        Effect.map(Ref.get(workflows), (all) => {
          const hits = all.filter((w) => w.actionType === actionType && w.status === "Active" && w.isLatestVersion && matches(w, q))
          const p = page(hits, q.offset, q.limit)
          return {
            actionType,
            workflows: p.items.map((w) => ({
              workflowId: w.workflowId,
              workflowName: w.workflowName,
              name: w.name,
              description: w.description,
              version: w.version,
              executionEngine: w.executionEngine
            })),
            pagination: p.pagination
          }
        }),
      registerActionType: (request: ActionTypeCreateRequest) =>
        Ref.modify(actionTypes, (map): readonly [ActionTypeCreateResponse, Map<string, StructuredDescription>] =>
          map.has(request.name)
            ? [{ actionType: request.name, status: "exists", wasReenabled: false }, map]
            : [{ actionType: request.name, status: "created", wasReenabled: false }, new Map(map).set(request.name, request.description)]),
      disableWorkflow: (id, reason, by) =>
        Effect.gen(function* () {
          const found = (yield* Ref.get(workflows)).find((w) => w.workflowId === id)
          if (found === undefined) return yield* new NotFound({ resource: "workflow", id })
          const at = (yield* now).toISOString()
          const disabled: RemediationWorkflow = {
            ...found,
            status: "Disabled",
            disabledAt: at,
            disabledReason: reason,
            updatedAt: at,
            ...(by === undefined ? {} : { disabledBy: by })
          }
          yield* Ref.update(workflows, (all) => all.map((w) => (w.workflowId === id ? disabled : w)))
          return disabled
        }),
      updateActionType: (name, description) =>
        Effect.flatMap(Ref.get(actionTypes), (map) =>
          map.has(name) ? Ref.set(actionTypes, new Map(map).set(name, description)) : Effect.fail(new NotFound({ resource: "action type", id: name }))),
      disableActionType: (name) =>
        Effect.gen(function* () {
          if (!(yield* Ref.get(actionTypes)).has(name)) {
            return yield* new NotFound({ resource: "action type", id: name })
          }
          const users = (yield* Ref.get(workflows)).filter((w) =>
            w.actionType === name && w.status === "Active"
          )
          if (users.length > 0) return yield* new Conflict({ detail: `action type ${name} is used by ${users.length} active workflow(s)` })
          yield* Ref.update(actionTypes, (map) => {
            const next = new Map(map)
            next.delete(name)
            return next
          })
        }),
      recordNotification: (record) =>
        Effect.flatMap(Ref.get(notifications), (ids) =>
          ids.has(record.notification_id)
            ? Effect.fail(new Conflict({ detail: `notification_audit already exists with notification_id '${record.notification_id}'` }))
            : Ref.set(notifications, new Set(ids).add(record.notification_id)))
    }
    return service
  })
