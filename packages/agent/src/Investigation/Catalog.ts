/**
 * What the agent needs from the storage service, over the core `Storage` client: workflow discovery (action types
 * -> workflows), one workflow with its parameter schema, the remediation history of a target. Every call goes
 * through a circuit breaker (`aiagent_api_ds_circuit_breaker_state`); a missing workflow is an answer, not a
 * failure of the service.
 */
import * as CircuitBreaker from "@kubemend/core/CircuitBreaker"
import { Context, Data, Duration, Effect, Layer } from "effect"
import { Storage, type StorageError } from "@kubemend/core/Storage"
import type {
  ActionTypeListResponse,
  RemediationHistoryContext,
  RemediationHistoryQuery,
  RemediationWorkflow,
  SignalContext,
  WorkflowDiscoveryResponse
} from "@kubemend/core/StorageApi"
import { AgentMetrics, breakerGauge } from "../Metrics.ts"

export class CatalogUnavailable extends Data.TaggedError("CatalogUnavailable")<{ readonly message: string }> {}
export class WorkflowNotFound extends Data.TaggedError("WorkflowNotFound")<{ readonly workflowId: string }> {}

export interface CatalogService {
  readonly listActions: (
    context: SignalContext,
    page?: { readonly offset: number; readonly limit: number }
  ) => Effect.Effect<ActionTypeListResponse, CatalogUnavailable>
  readonly listWorkflows: (
    actionType: string,
    context: SignalContext
  ) => Effect.Effect<WorkflowDiscoveryResponse, CatalogUnavailable>
  readonly getWorkflow: (workflowId: string) => Effect.Effect<RemediationWorkflow, WorkflowNotFound | CatalogUnavailable>
  readonly history: (query: RemediationHistoryQuery) => Effect.Effect<RemediationHistoryContext, CatalogUnavailable>
  /** Reachability, for readiness. */
  readonly ping: Effect.Effect<void, CatalogUnavailable>
}

export class Catalog extends Context.Tag("@kubemend/agent/Catalog")<Catalog, CatalogService>() {}

const uuid = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
/** Discovery pages: the model must see every workflow of an action type, so ask for the maximum page. */
const pageSize = 100

const unavailable = (e: StorageError) => new CatalogUnavailable({ message: "detail" in e && e.detail !== undefined ? e.detail : e._tag })

const make = Effect.gen(function* () {
  const storage = yield* Storage
  const metrics = yield* AgentMetrics
  const breaker = yield* CircuitBreaker.make({
    name: "storage",
    failureThreshold: 5,
    resetTimeout: Duration.seconds(30),
    unavailableDetail: "storage circuit breaker is open",
    onState: (s) => Effect.sync(() => metrics.storageBreaker.set(breakerGauge[s]))
  })
  const guarded = <A, E extends { readonly _tag: string }>(eff: Effect.Effect<A, E>) =>
    breaker.run(eff, (e) => e._tag === "CatalogUnavailable").pipe(
      Effect.catchTag("DependencyUnavailable", () => Effect.fail(new CatalogUnavailable({ message: "storage circuit breaker is open" })))
    ) as Effect.Effect<A, E | CatalogUnavailable>

  const getWorkflow = (workflowId: string) =>
    // An id that is not a UUID cannot be in the catalog (and must not count against the breaker).
    !uuid.test(workflowId)
      ? Effect.fail(new WorkflowNotFound({ workflowId }))
      : guarded(
        storage.getWorkflow(workflowId).pipe(
          Effect.mapError((e) => (e._tag === "NotFound" ? new WorkflowNotFound({ workflowId }) : unavailable(e)))
        )
      )

  return Catalog.of({
    listActions: (context, page) =>
      guarded(Effect.mapError(storage.listActions({ ...context, offset: page?.offset ?? 0, limit: page?.limit ?? pageSize }), unavailable)),
    listWorkflows: (actionType, context) => guarded(Effect.mapError(storage.listWorkflowsByAction(actionType, { ...context, limit: pageSize }), unavailable)),
    getWorkflow,
    history: (query) => guarded(Effect.mapError(storage.remediationHistory(query), unavailable)),
    ping: getWorkflow("00000000-0000-4000-8000-000000000000").pipe(Effect.catchTag("WorkflowNotFound", () => Effect.void))
  })
})

/** Over the core Storage client (live: `Storage.layerConfig`; tests: `Storage.layerMemory`). Needs AgentMetrics. */
export const layer = Layer.effect(Catalog, make)
