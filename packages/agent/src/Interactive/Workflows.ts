/**
 * Workflow discovery and selection in an interactive session. Discovery lists the catalog's workflows for the
 * incident (action types, then workflows, then each one's parameters, pre-filled from the investigation);
 * selection accepts only a workflow that discovery returned in this session, validates its parameters, resolves
 * the target's owner (enrichment) and records the choice on the session's RR, creating the RR only when there is
 * none yet.
 */
import { Effect } from "effect"
import { K8s } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"
import { Catalog } from "../Investigation/Catalog.ts"
import { signalContext } from "../Investigation/CatalogTools.ts"
import { type ParameterSpec, parameterSpecs, validateParameters, withDefaults } from "../Investigation/Params.ts"
import type { TargetRef } from "../Investigation/Run.ts"
import { Tools } from "../Investigation/Tools.ts"
import { requestForSession } from "./SessionRequest.ts"
import type { DiscoveredWorkflow, InteractiveSession } from "./State.ts"

const maxActionTypes = 20

/** The session's target: what owner resolution found, else the incident's resource. */
export const targetOf = (st: InteractiveSession): TargetRef | undefined => {
  if (st.run.remediationTarget !== undefined) return st.run.remediationTarget
  const r = st.session.request
  return r.resource_kind === "" || r.resource_name === ""
    ? undefined
    : {
      kind: r.resource_kind,
      name: r.resource_name,
      ...(r.resource_namespace === "" ? {} : { namespace: r.resource_namespace }),
      ...(r.resource_api_version === "" ? {} : { apiVersion: r.resource_api_version })
    }
}

/** A value the investigation already knows for a parameter named like a target field. */
const known = (spec: ParameterSpec, target: TargetRef | undefined): unknown => {
  if (target === undefined) return undefined
  const n = spec.name.toLowerCase()
  if (/namespace/.test(n)) return target.namespace
  if (/(^|_)kind$/.test(n)) return target.kind
  if (/^(name|target_name|resource_name|pod_name|(deployment|statefulset|daemonset|replicaset|workload)(_name)?)$/.test(n)) return target.name
  return undefined
}

export const make = Effect.gen(function* () {
  const catalog = yield* Catalog
  const k8s = yield* K8s
  const tools = yield* Tools
  const unavailable = (e: { readonly message: string }) => new ToolError({ message: `workflow catalog unavailable: ${e.message}` })

  const discover = Effect.fn("Interactive.discover")(function* (st: InteractiveSession) {
    const target = targetOf(st)
    const context = signalContext(st.session.request, target)
    const actions = yield* Effect.mapError(catalog.listActions(context), unavailable)
    const lists = yield* Effect.forEach(
      actions.actionTypes.slice(0, maxActionTypes),
      (a) => Effect.mapError(catalog.listWorkflows(a.actionType, context), unavailable),
      { concurrency: 4 }
    )
    const entries = yield* Effect.forEach(
      lists.flatMap((l) => l.workflows.map((w) => ({ w, actionType: l.actionType }))),
      ({ actionType, w }) =>
        catalog.getWorkflow(w.workflowId).pipe(
          Effect.map((full) => parameterSpecs(full.parameters)),
          Effect.orElseSucceed(() => [] as Array<ParameterSpec>),
          Effect.map((specs): DiscoveredWorkflow => ({
            workflow_id: w.workflowId,
            name: w.workflowName,
            description: w.description.what,
            kind: actionType,
            action_type: actionType,
            version: w.version,
            parameters: specs.map((s) => {
              const value = known(s, target) ?? s.default
              return { name: s.name, type: s.type, description: s.description, required: s.required, ...(value === undefined ? {} : { default: value }) }
            })
          }))
        ),
      { concurrency: 4 }
    )
    st.discovered.clear()
    for (const e of entries) st.discovered.set(e.workflow_id, e)
    return entries
  })

  const select = Effect.fn("Interactive.select")(function* (
    st: InteractiveSession,
    input: {
      readonly workflowId: string
      readonly parameters: Readonly<Record<string, unknown>>
      readonly target: TargetRef | undefined
      readonly user: string
    }
  ) {
    const seen = st.discovered.get(input.workflowId)
    if (seen === undefined) {
      return yield* new ToolError({
        message: `workflow ${input.workflowId} was not returned by discover_workflows in this session; discover first and select one of its results`
      })
    }
    const workflow = yield* catalog.getWorkflow(input.workflowId).pipe(
      Effect.catchTag("WorkflowNotFound", () => Effect.fail(new ToolError({ message: `workflow ${input.workflowId} is no longer in the catalog` }))),
      Effect.catchTag("CatalogUnavailable", (e) => Effect.fail(unavailable(e)))
    )
    const specs = parameterSpecs(workflow.parameters)
    const prefilled = Object.fromEntries(seen.parameters.flatMap((p) => (p.default === undefined ? [] : [[p.name, p.default]])))
    const parameters = withDefaults(specs, { ...prefilled, ...input.parameters })
    const errors = validateParameters(specs, parameters)
    if (errors.length > 0) return yield* new ToolError({ message: `invalid parameters: ${errors.join("; ")}` })

    // Enrichment: the remediation target is the top owner of the named (or investigated) resource.
    const named = input.target ?? targetOf(st)
    if (named === undefined) {
      return yield* new ToolError({ message: "no target: pass kind, name and namespace of the resource to remediate" })
    }
    const chain = yield* Effect.option(tools.ownerChain({ ...named, namespace: named.namespace ?? "default" }))
    const target = chain._tag === "Some" ? chain.value[chain.value.length - 1]! : named

    const created = !st.rrExists
    if (created) {
      const ask = { rr: st.rr, sessionId: st.session.id, signalName: st.session.request.signal_name, severity: st.session.request.severity, user: input.user }
      yield* requestForSession(k8s, ask, target).pipe(
        Effect.mapError((e) => new ToolError({ message: e._tag === "RequestInProgress" ? e.message : `could not create the RemediationRequest: ${e.message}` }))
      )
      st.rrExists = true
    }
    const ref = {
      workflowId: workflow.workflowId,
      version: workflow.version,
      workflowName: workflow.workflowName,
      ...(workflow.executionBundle === undefined ? {} : { executionBundle: workflow.executionBundle })
    }
    yield* k8s.patchCrStatus("remediationrequests", st.rr, { selectedWorkflowRef: ref }).pipe(
      Effect.mapError((e) => new ToolError({ message: `could not record the selection on ${st.rr}: ${e._tag}` }))
    )
    st.selection = {
      target,
      workflow: {
        workflow_id: workflow.workflowId,
        name: workflow.workflowName,
        workflow_name: workflow.workflowName,
        action_type: workflow.actionType,
        version: workflow.version,
        ...(workflow.executionBundle === undefined ? {} : { execution_bundle: workflow.executionBundle }),
        execution_engine: workflow.executionEngine,
        parameters
      }
    }
    return { created, target, parameters, workflow: ref }
  })

  return { discover, select } as const
})
