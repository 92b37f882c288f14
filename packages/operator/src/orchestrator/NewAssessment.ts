/**
 * The EffectivenessAssessment the orchestrator creates for an RR whose workflow ran, as the reference CRD's spec:
 * both targets, the stabilization window, and the delays of targets that change late — `hashComputeDelay` for a
 * GitOps-managed target (Argo CD or Flux marks on it; `gitOpsSyncDelay`), plus `operatorReconcileDelay` when the
 * target is a custom resource or owned by one (an operator reconciles it); `alertCheckDelay` for a proactive signal
 * (`proactiveAlertDelay`). The pre-remediation hash is the one the execution captured in the WorkflowExecution's
 * status (or the RR's), so the monitor compares like with like.
 */
import { formatGoDuration } from "@kubemend/core/Config"
import type { TargetResource } from "@kubemend/core/domain/Meta"
import type { KubeObject } from "@kubemend/core/K8s"
import { Duration, Effect, Option } from "effect"
import { childMeta, getRaw, load, names, type RemediationRequest, statusField } from "../remediation/Objects.ts"
import { targetOf } from "../remediation/Routing.ts"
import type { Env } from "../remediation/Transition.ts"

const gitOpsMarks = [
  "argocd.argoproj.io/instance",
  "argocd.argoproj.io/tracking-id",
  "kustomize.toolkit.fluxcd.io/name",
  "helm.toolkit.fluxcd.io/name"
]

/** A custom resource's API group: dotted, and not one of Kubernetes' own (`*.k8s.io`). */
const isCustomGroup = (apiVersion: string | undefined) => {
  const group = apiVersion?.includes("/") ? apiVersion.split("/")[0]! : ""
  return group.includes(".") && !group.endsWith(".k8s.io")
}

const propagationOf = (object: Option.Option<KubeObject>, target: TargetResource) => {
  const o = Option.getOrUndefined(object)
  const marks = { ...o?.metadata.labels, ...o?.metadata.annotations }
  const gitOps = gitOpsMarks.some((k) => marks[k] !== undefined)
  const operated = isCustomGroup(target.apiVersion) ||
    (o?.metadata.ownerReferences ?? []).some((r) => isCustomGroup(typeof r["apiVersion"] === "string" ? r["apiVersion"] : undefined))
  return { gitOps, operated }
}

/** The EA body for `rr`, and the facts the `remediation.workflow_created` audit event carries. */
export const newAssessment = (env: Env, rr: RemediationRequest) =>
  Effect.gen(function* () {
    const name = names.assessment(rr.metadata.name)
    const target = targetOf(rr)
    const a = env.config.asyncPropagation
    const object = yield* env.k8s.getResource({
      kind: target.kind,
      name: target.name,
      namespace: target.namespace ?? "",
      ...(target.apiVersion === undefined || target.apiVersion === "" ? {} : { apiVersion: target.apiVersion })
    }).pipe(Effect.map(Option.some), Effect.orElseSucceed(() => Option.none<KubeObject>()))
    const { gitOps, operated } = propagationOf(object, target)
    const hashDelay = Duration.sum(gitOps ? a.gitOpsSyncDelay : Duration.zero, operated ? a.operatorReconcileDelay : Duration.zero)
    const aiName = rr.status?.aiAnalysisRef?.name
    const ai = aiName === undefined ? Option.none() : yield* load(env.k8s, "aianalyses", aiName)
    const proactive = Option.exists(ai, (x) => x.spec.analysisRequest?.signalContext?.signalMode === "proactive")
    const weName = rr.status?.workflowExecutionRef?.name ?? names.execution(rr.metadata.name)
    const we = yield* getRaw(env.k8s, "workflowexecutions", weName)
    const fromWe = Option.flatMap(we, (w) => Option.fromNullable(statusField(w, "preRemediationSpecHash")))
    const pre = typeof Option.getOrUndefined(fromWe) === "string" ? (Option.getOrUndefined(fromWe) as string) : rr.status?.preRemediationSpecHash
    const body: KubeObject = {
      metadata: childMeta(rr, name, env.k8s.apiGroup, env.k8s.namespace),
      spec: {
        correlationID: rr.metadata.name,
        remediationRequestPhase: "Verifying",
        signalTarget: rr.spec.targetResource,
        remediationTarget: target,
        config: {
          stabilizationWindow: formatGoDuration(env.config.stabilizationWindow),
          ...(Duration.greaterThan(hashDelay, Duration.zero) ? { hashComputeDelay: formatGoDuration(hashDelay) } : {}),
          ...(proactive ? { alertCheckDelay: formatGoDuration(a.proactiveAlertDelay) } : {})
        },
        ...(pre === undefined ? {} : { preRemediationSpecHash: pre }),
        ...(rr.metadata.creationTimestamp === undefined ? {} : { remediationCreatedAt: rr.metadata.creationTimestamp }),
        signalName: rr.spec.signalName
      }
    }
    const selected = Option.flatMap(ai, (x) => Option.fromNullable(x.status?.selectedWorkflow))
    return { name, body, pre, actionType: Option.getOrUndefined(Option.flatMap(selected, (s) => Option.fromNullable(s.actionType))) }
  })
