/**
 * Catalog tools over the storage service: workflow discovery in two steps (`list_available_actions`, then
 * `list_workflows` for one action type), `get_workflow` for a workflow's parameter schema, and
 * `get_remediation_history` for what was done to the target before. Discovery is filtered by the incident's
 * signal context, which the model never sets.
 */
import { Effect, Schema } from "effect"
import { K8s } from "@kubemend/core/K8s"
import { specHash } from "@kubemend/core/SpecHash"
import type { SignalContext } from "@kubemend/core/StorageApi"
import type { IncidentRequest } from "@kubemend/core/domain/Incident"
import { GoDurationPattern } from "@kubemend/core/domain/Common"
import { Catalog } from "./Catalog.ts"
import { parameterSpecs } from "./Params.ts"
import type { TargetRef } from "./Run.ts"
import { failed, ok, opt, tool } from "./ToolKit.ts"

/** Action types per page of `list_available_actions`, as the original pages them. */
const actionsPage = 10
const levels = new Set(["critical", "high", "warning", "info"])

const componentOf = (t: { apiVersion?: string | undefined; kind: string }) =>
  t.apiVersion === undefined || t.apiVersion === "" ? t.kind : `${t.apiVersion}/${t.kind}`

/** Discovery filters from the incident (and the resolved target when known). */
export const signalContext = (request: IncidentRequest, target: TargetRef | undefined): SignalContext => {
  const custom = request.enrichment_results?.customLabels
  return {
    ...(levels.has(request.severity) ? { severity: request.severity } : {}),
    component: componentOf(target ?? { apiVersion: request.resource_api_version, kind: request.resource_kind }),
    environment: request.environment,
    priority: request.priority,
    remediation_id: request.remediation_id,
    // Always sent, so workflows whose custom labels this signal lacks stay hidden.
    custom_labels: JSON.stringify(custom ?? {})
  }
}

const Name = Schema.String.pipe(Schema.pattern(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/))

export const make = Effect.gen(function* () {
  const catalog = yield* Catalog
  const k8s = yield* K8s
  const unavailable = (e: { readonly message: string }) => Effect.succeed(failed(`storage service unavailable: ${e.message}`))

  const listActions = tool(
    "list_available_actions",
    "Workflow discovery step 1: the remediation action types that have workflows matching this incident, a page at a time (offset).",
    Schema.Struct({ offset: opt(Schema.Number.pipe(Schema.between(0, 10_000))), limit: opt(Schema.Number.pipe(Schema.between(1, 100))) }),
    (a, run) =>
      catalog.listActions(signalContext(run.session.request, run.remediationTarget), {
        offset: Math.round(a.offset ?? 0),
        limit: Math.round(a.limit ?? actionsPage)
      }).pipe(
        Effect.map((r) =>
          ok({
            action_types: r.actionTypes,
            total: r.pagination.totalCount,
            offset: r.pagination.offset,
            ...(r.pagination.hasMore ? { next_offset: r.pagination.offset + r.pagination.limit } : {})
          })
        ),
        Effect.catchAll(unavailable)
      )
  )

  const listWorkflows = tool(
    "list_workflows",
    "Workflow discovery step 2: the workflows of one action type that match this incident. Review all before selecting.",
    Schema.Struct({ action_type: Schema.String.pipe(Schema.pattern(/^[A-Za-z][A-Za-z0-9]{0,99}$/)) }),
    (a, run) =>
      catalog.listWorkflows(a.action_type, signalContext(run.session.request, run.remediationTarget)).pipe(
        Effect.map((r) => {
          for (const w of r.workflows) {
            run.discovered.set(w.workflowId, {
              workflowId: w.workflowId,
              name: w.workflowName,
              actionType: r.actionType,
              version: w.version,
              ...(w.executionBundle === undefined ? {} : { executionBundle: w.executionBundle })
            })
          }
          return ok({ action_type: r.actionType, workflows: r.workflows, total: r.pagination.totalCount })
        }),
        Effect.catchAll(unavailable)
      )
  )

  const getWorkflow = tool(
    "get_workflow",
    "Workflow discovery step 3: one workflow with its parameter schema (names, types, patterns, required).",
    Schema.Struct({ workflow_id: Schema.String.pipe(Schema.maxLength(64)) }),
    (a) =>
      catalog.getWorkflow(a.workflow_id).pipe(
        Effect.map((w) =>
          ok({
            workflow_id: w.workflowId,
            name: w.workflowName,
            action_type: w.actionType,
            version: w.version,
            description: w.description,
            parameters: parameterSpecs(w.parameters)
          })
        ),
        Effect.catchTags({
          WorkflowNotFound: () => Effect.succeed(failed(`workflow ${a.workflow_id} is not in the catalog`)),
          CatalogUnavailable: unavailable
        })
      )
  )

  const history = tool(
    "get_remediation_history",
    "Past remediations of a resource (what was run, outcome, effectiveness), to avoid repeating what failed.",
    Schema.Struct({
      kind: Schema.String.pipe(Schema.pattern(/^[A-Za-z][A-Za-z0-9]{0,62}$/)),
      name: Name,
      namespace: opt(Name),
      since: opt(Schema.String.pipe(Schema.pattern(GoDurationPattern)))
    }),
    (a, run) =>
      Effect.gen(function* () {
        const namespace = a.namespace ?? run.session.request.resource_namespace
        const current = yield* Effect.option(k8s.getResource({ kind: a.kind, name: a.name, namespace }))
        return yield* catalog.history({
          targetKind: a.kind,
          targetName: a.name,
          targetNamespace: namespace,
          ...(current._tag === "Some" ? { currentSpecHash: specHash(current.value.spec) } : {}),
          ...(a.since === undefined ? {} : { tier1Window: a.since })
        })
      }).pipe(Effect.map(ok), Effect.catchAll(unavailable))
  )

  return [listActions, listWorkflows, getWorkflow, history] as const
})
