/**
 * The back of the pipeline: `Approved` (routing before execution, then the WorkflowExecution child), `Running`
 * (the execution's own status decides; the workflow execution controller in execution/ runs it). `Verifying` is in
 * Verifying.ts.
 */
import { formatGoDuration } from "@kubemend/core/Config"
import { formatTargetResource } from "@kubemend/core/domain/WorkflowExecution"
import { Duration, Effect, Option } from "effect"
import type { Reconciled } from "../runtime/Workers.ts"
import { block } from "./Blocking.ts"
import { childMeta, ensure, iso, load, names, namespaceOf, type RemediationRequest, rrRef } from "../remediation/Objects.ts"
import { preExecution, targetOf } from "../remediation/Routing.ts"
import { type Env, transition } from "../remediation/Transition.ts"

/** Parameters of the run: the analysis' values, then an approver's override values on top. */
const parametersFor = (env: Env, rr: RemediationRequest) =>
  Effect.gen(function* () {
    const aiName = rr.status?.aiAnalysisRef?.name
    const ai = aiName === undefined ? Option.none() : yield* load(env.k8s, "aianalyses", aiName)
    const rar = yield* load(env.k8s, "remediationapprovalrequests", names.approval(rr.metadata.name))
    const fromAnalysis = Option.match(ai, { onNone: () => undefined, onSome: (a) => a.status?.selectedWorkflow })
    const overridden = Option.flatMap(rar, (r) => Option.fromNullable(r.status?.workflowOverride))
    return {
      parameters: {
        ...fromAnalysis?.parameters,
        ...Option.getOrUndefined(Option.flatMap(overridden, (o) => Option.fromNullable(o.parameters)))
      },
      confidence: fromAnalysis?.confidence,
      rationale: Option.getOrUndefined(Option.flatMap(overridden, (o) => Option.fromNullable(o.rationale))) ?? fromAnalysis?.rationale
    }
  })

export const onApproved = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const wf = rr.status?.selectedWorkflowRef
    if (wf === undefined) {
      yield* transition(env, rr, now, "Failed", { failurePhase: "WorkflowExecution", failureReason: "approved without a selected workflow" })
      return {}
    }
    if (env.config.dryRun) {
      yield* transition(env, rr, now, "Completed", { outcome: "DryRun", message: "dry run: stopped before execution" })
      return {}
    }
    const blocked = yield* preExecution(env, rr, now, wf.workflowId)
    if (Option.isSome(blocked)) return yield* block(env, rr, now, blocked.value)
    const namespace = namespaceOf(rr, env.k8s.namespace)
    const name = names.execution(rr.metadata.name)
    const target = targetOf(rr)
    const run = yield* parametersFor(env, rr)
    const created = yield* ensure(env.k8s, "workflowexecutions", {
      metadata: childMeta(rr, name, env.k8s.apiGroup, env.k8s.namespace),
      spec: {
        remediationRequestRef: rrRef(rr, env.k8s.apiGroup, env.k8s.namespace),
        targetResource: formatTargetResource(target),
        workflowRef: wf,
        parameters: {
          TARGET_NAME: target.name,
          ...(target.namespace === undefined ? {} : { TARGET_NAMESPACE: target.namespace }),
          ...run.parameters
        },
        ...(run.confidence === undefined ? {} : { confidence: run.confidence }),
        ...(run.rationale === undefined ? {} : { rationale: run.rationale }),
        executionConfig: { timeout: formatGoDuration(env.config.timeouts.executing) }
      }
    })
    if (created) {
      yield* env.metrics.childCreated(namespace, "WorkflowExecution")
      yield* env.audit.emit({
        type: "workflowexecution.execution.started",
        category: "workflowexecution",
        correlationId: rr.metadata.name,
        namespace,
        resource: { type: "WorkflowExecution", id: name },
        data: { rr_name: rr.metadata.name, execution_name: name, workflow_id: wf.workflowId, started_at: iso(now), target: formatTargetResource(target) }
      })
    }
    yield* transition(env, rr, now, "Running", {
      workflowExecutionRef: { kind: "WorkflowExecution", name, namespace },
      executingStartTime: iso(now)
    })
    return {}
  })

export const onRunning = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const name = rr.status?.workflowExecutionRef?.name ?? names.execution(rr.metadata.name)
    const we = yield* load(env.k8s, "workflowexecutions", name)
    if (Option.isNone(we)) {
      yield* transition(env, rr, now, "Failed", { failurePhase: "WorkflowExecution", failureReason: `workflow execution ${name} disappeared` })
      return {}
    }
    switch (we.value.status?.phase) {
      case "Completed":
        yield* transition(env, rr, now, "Verifying", {
          verificationDeadline: iso(now + Duration.toMillis(env.config.timeouts.verifying))
        })
        return { requeueAfter: Duration.zero } satisfies Reconciled
      case "Failed":
        yield* transition(env, rr, now, "Failed", {
          failurePhase: "WorkflowExecution",
          failureReason: we.value.status?.failureReason ?? "workflow execution failed"
        })
        return {}
      default:
        return {}
    }
  })
