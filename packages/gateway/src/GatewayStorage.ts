/**
 * The storage queries the gateway's tools make, as a small port over core's `Storage` client (the shared
 * StorageApi contract over HTTP, authenticated with the gateway's ServiceAccount token). Its failures are sorted
 * into outages (which count against the storage breaker) and answers (not found, rejected).
 */
import { Context, Duration, Effect, Layer } from "effect"
import { Storage, type StorageError } from "@kubemend/core/Storage"
import type {
  AuditEventsQuery,
  AuditEventsQueryResponse,
  RemediationHistoryContext,
  RemediationHistoryQuery,
  VerifyChainResponse,
  WorkflowEffectiveness,
  WorkflowEffectivenessQuery,
  WorkflowListQuery,
  WorkflowListResponse
} from "@kubemend/core/StorageApi"

type WorkflowListResponse = typeof WorkflowListResponse.Type
type WorkflowEffectivenessQuery = typeof WorkflowEffectivenessQuery.Type

/** `unavailable`: the service could not be reached or failed (counts against the breaker); else its answer. */
export class StorageFailure {
  readonly _tag = "StorageFailure"
  constructor(readonly kind: "unavailable" | "not_found" | "rejected", readonly message: string) {}
}

export interface GatewayStorageShape {
  readonly listWorkflows: (q: WorkflowListQuery) => Effect.Effect<WorkflowListResponse, StorageFailure>
  /** One catalog entry by its id (a UUID); `not_found` when there is none. */
  readonly getWorkflow: (workflowId: string) => Effect.Effect<WorkflowListResponse["workflows"][number], StorageFailure>
  readonly remediationHistory: (q: RemediationHistoryQuery) => Effect.Effect<RemediationHistoryContext, StorageFailure>
  readonly workflowEffectiveness: (q: WorkflowEffectivenessQuery) => Effect.Effect<WorkflowEffectiveness, StorageFailure>
  readonly auditEvents: (q: AuditEventsQuery) => Effect.Effect<AuditEventsQueryResponse, StorageFailure>
  /** Storage's hash-chain check of one correlation id's events. */
  readonly verifyChain: (correlationId: string) => Effect.Effect<VerifyChainResponse, StorageFailure>
  /** Reachability for `/readyz`. */
  readonly ping: Effect.Effect<void, StorageFailure>
}

const down = new StorageFailure("unavailable", "the storage service is not configured")

const failureOf = (e: StorageError): StorageFailure =>
  e._tag === "DependencyUnavailable"
    ? new StorageFailure("unavailable", "the storage service is unavailable")
    : e._tag === "NotFound"
    ? new StorageFailure("not_found", e.detail ?? "not found")
    : new StorageFailure("rejected", "detail" in e && typeof e.detail === "string" ? e.detail : e._tag)

/** Reachability without credentials: the service's public OpenAPI document. */
const pingUrl = (url: string) =>
  Effect.tryPromise(async (signal) => {
    const res = await fetch(`${url.replace(/\/+$/, "")}/api/v1/openapi.json`, { signal })
    await res.body?.cancel()
    if (res.status >= 500) throw new Error(String(res.status))
  }).pipe(
    Effect.timeout(Duration.seconds(2)),
    Effect.mapError(() => new StorageFailure("unavailable", "the storage service is unavailable"))
  )

export class GatewayStorage extends Context.Tag("@kubemend/gateway/GatewayStorage")<GatewayStorage, GatewayStorageShape>() {
  /** Over core's Storage client; `url` is pinged for readiness. */
  static readonly layerFromStorage = (url: string) =>
    Layer.effect(
      GatewayStorage,
      Effect.map(Storage, (storage) =>
        GatewayStorage.of({
          listWorkflows: (q) => Effect.mapError(storage.listWorkflows(q), failureOf),
          getWorkflow: (id) => Effect.mapError(storage.getWorkflow(id), failureOf),
          remediationHistory: (q) => Effect.mapError(storage.remediationHistory(q), failureOf),
          workflowEffectiveness: (q) => Effect.mapError(storage.workflowEffectiveness(q.workflow_id, q.namespace), failureOf),
          auditEvents: (q) => Effect.mapError(storage.queryEvents(q), failureOf),
          verifyChain: (id) => Effect.mapError(storage.verifyChain(id), failureOf),
          ping: pingUrl(url)
        }))
    )

  /** No storage configured: every call answers unavailable. */
  static readonly layerUnavailable = Layer.succeed(GatewayStorage, {
    listWorkflows: () => Effect.fail(down),
    getWorkflow: () => Effect.fail(down),
    remediationHistory: () => Effect.fail(down),
    workflowEffectiveness: () => Effect.fail(down),
    auditEvents: () => Effect.fail(down),
    verifyChain: () => Effect.fail(down),
    ping: Effect.fail(down)
  })

  /** Fixed answers (tests, benchmarks); filters applied as the service would. */
  static readonly layerMemory = (data: MemoryStorageData) => Layer.succeed(GatewayStorage, memory(data))
}

export interface MemoryStorageData {
  readonly workflows?: ReadonlyArray<WorkflowListResponse["workflows"][number]>
  readonly effectiveness?: ReadonlyArray<WorkflowEffectiveness>
  /** Keyed `namespace/kind/name`. */
  readonly history?: Readonly<Record<string, RemediationHistoryContext>>
  readonly events?: ReadonlyArray<AuditEventsQueryResponse["data"][number]>
}

const memory = (data: MemoryStorageData): GatewayStorageShape => ({
  listWorkflows: (q) =>
    Effect.sync(() => {
      const all = (data.workflows ?? []).filter((w) =>
        (q.status === undefined || w.status === q.status) && (q.workflow_name === undefined || w.workflowName === q.workflow_name)
      )
      return { workflows: all.slice(0, q.limit ?? 50), limit: q.limit ?? 50, offset: 0, total: all.length }
    }),
  getWorkflow: (id) => {
    const found = (data.workflows ?? []).find((w) => w.workflowId === id)
    return found === undefined ? Effect.fail(new StorageFailure("not_found", `workflow ${id} not found`)) : Effect.succeed(found)
  },
  remediationHistory: (q) => {
    const found = data.history?.[`${q.targetNamespace}/${q.targetKind}/${q.targetName}`]
    return Effect.succeed(
      found ?? {
        targetResource: `${q.targetNamespace}/${q.targetKind}/${q.targetName}`,
        currentSpecHash: q.currentSpecHash ?? "",
        regressionDetected: false,
        tier1: { window: q.tier1Window ?? "24h", chain: [] },
        tier2: { window: q.tier2Window ?? "2160h", chain: [] }
      }
    )
  },
  workflowEffectiveness: (q) => {
    const found = (data.effectiveness ?? []).find((e) => e.workflow_id === q.workflow_id && (q.namespace === undefined || e.namespace === q.namespace))
    return found === undefined
      ? Effect.fail(new StorageFailure("not_found", `no executions of workflow ${q.workflow_id}`))
      : Effect.succeed(found)
  },
  auditEvents: (q) =>
    Effect.sync(() => {
      const data_ = (data.events ?? []).filter((e) =>
        (q.correlation_id === undefined || e.correlation_id === q.correlation_id) &&
        (q.event_type === undefined || e.event_type === q.event_type)
      )
      return { data: data_, pagination: { limit: q.limit ?? 50, offset: 0, total: data_.length, has_more: false } }
    }),
  // Fixed answers hold no hash chain: every event of the correlation id counts as verified.
  verifyChain: (id) =>
    Effect.sync(() => {
      const n = (data.events ?? []).filter((e) => e.correlation_id === id).length
      return {
        correlation_id: id,
        is_valid: true,
        total_events: n,
        verified_events: n,
        tampered_events: [],
        verification_time: new Date().toISOString(),
        message: `${n} events verified`
      }
    }),
  ping: Effect.void
})
