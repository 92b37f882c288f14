/**
 * The one way an RR's status is written: re-read it, give up if someone else moved it to another phase meanwhile,
 * and write with the resourceVersion just read, so a write computed before the gateway's cancel conflicts instead
 * of overwriting it; a conflict reads again and decides again (bounded). A transition also counts itself, keeps the
 * blocked gauge, and emits the lifecycle audit event (`transitioned`, or the terminal phase's own).
 */
import { isTerminalPhase, type RRPhase } from "@kubemend/core/domain/Phases"
import type { K8sConflict, K8sNotFound, K8sService, K8sUnavailable } from "@kubemend/core/K8s"
import type { StorageError } from "@kubemend/core/Storage"
import type { WorkflowCatalog } from "@kubemend/core/WorkflowOverride"
import { Effect, Option } from "effect"
import type { LifecycleAuditShape } from "./LifecycleAudit.ts"
import type { LifecycleSettings } from "./LifecycleConfig.ts"
import type { LifecycleMetrics } from "./LifecycleMetrics.ts"
import { iso, load, namespaceOf, phaseOf, type RemediationRequest } from "./Objects.ts"
import type { ManagedTargetsShape } from "./Targets.ts"

/** Services every orchestrator step uses. */
export interface Env {
  readonly k8s: K8sService
  readonly config: LifecycleSettings
  readonly metrics: LifecycleMetrics
  readonly audit: LifecycleAuditShape
  readonly targets: ManagedTargetsShape
  /** The storage catalog, when the operator has storage: approvals' workflow overrides are resolved in it. */
  readonly catalog?: WorkflowCatalog<StorageError>
}

export type WriteError = K8sNotFound | K8sConflict | K8sUnavailable

/** Status fields a step writes with the phase; `null` removes a field (merge patch). */
export type StatusPatch = Record<string, unknown>

const blockFields = { blockReason: null, blockMessage: null, blockedUntil: null }

/** Conflicting writes of one RR status retried before the reconcile fails (and is requeued with backoff). */
const conflictRetries = 5

/**
 * Writes `status` if the RR, read again, is still in `phase`; the write is guarded by the resourceVersion read.
 * None: nothing written (the RR is gone or in another phase). A conflict reads again and decides again.
 */
const guardedWrite = (env: Env, name: string, phase: RRPhase, status: StatusPatch) =>
  Effect.gen(function* () {
    for (let attempt = 1;; attempt++) {
      const fresh = yield* load(env.k8s, "remediationrequests", name)
      if (Option.isNone(fresh) || phaseOf(fresh.value) !== phase) return Option.none<StatusPatch>()
      const written = yield* env.k8s.patchCrStatus("remediationrequests", name, status, { resourceVersion: fresh.value.metadata.resourceVersion }).pipe(
        Effect.as(true),
        Effect.catchTag("K8sConflict", (e) => attempt < conflictRetries ? Effect.succeed(false) : Effect.fail(e))
      )
      if (written) return Option.some(status)
      yield* Effect.logDebug(`${name}: status changed while writing it; reading it again`)
    }
  })

/**
 * Moves `rr` to `to` with `fields`. Returns false (nothing written) when the RR is gone or no longer in the phase
 * `rr` was read in; the caller's reconcile then simply ends and the watch brings the RR back.
 */
export const transition = (env: Env, rr: RemediationRequest, now: number, to: RRPhase, fields: StatusPatch = {}) =>
  Effect.gen(function* () {
    const name = rr.metadata.name
    const from = phaseOf(rr)
    const terminal = isTerminalPhase(to)
    const written = yield* guardedWrite(env, name, from, {
      ...(from === "Blocked" && to !== "Blocked" ? blockFields : {}),
      ...(terminal ? { completedAt: iso(now) } : {}),
      ...fields,
      overallPhase: to
    })
    if (Option.isNone(written)) {
      yield* Effect.logDebug(`${name}: phase changed meanwhile, ${from} -> ${to} dropped`)
      return false
    }
    const status = written.value
    const namespace = namespaceOf(rr, env.k8s.namespace)
    yield* env.metrics.transition(namespace, from, to)
    yield* env.metrics.setBlocked(namespace, name, to === "Blocked")
    yield* Effect.logInfo(`remediation ${name}: ${from} -> ${to}`).pipe(
      Effect.annotateLogs({ rr: name, from_phase: from, to_phase: to })
    )
    yield* (terminal ? auditTerminal(env, rr, from, to, status) : auditTransition(env, rr, from, to, status))
    return true
  })

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)

/** Every non-terminal move, so the trail (and storage's reconstruction) knows the phase an unfinished RR is in. */
const auditTransition = (env: Env, rr: RemediationRequest, from: RRPhase, to: RRPhase, status: StatusPatch) => {
  const namespace = namespaceOf(rr, env.k8s.namespace)
  return env.audit.emit({
    type: "orchestrator.lifecycle.transitioned",
    category: "orchestration",
    correlationId: rr.metadata.name,
    namespace,
    data: {
      rr_name: rr.metadata.name,
      namespace,
      from_phase: from,
      to_phase: to,
      transition_reason: str(status["blockReason"]) ?? str(status["message"])
    }
  })
}

const auditTerminal = (env: Env, rr: RemediationRequest, from: RRPhase, to: RRPhase, status: StatusPatch) => {
  const namespace = namespaceOf(rr, env.k8s.namespace)
  const base = { correlationId: rr.metadata.name, namespace, category: "orchestration" as const }
  const common = { rr_name: rr.metadata.name, namespace, from_phase: from, overall_phase: to }
  switch (to) {
    case "Completed":
      return env.audit.emit({
        ...base,
        type: "orchestrator.lifecycle.completed",
        data: {
          ...common,
          crd_outcome: str(status["outcome"]),
          outcome: status["outcome"] === "Remediated" ? "Success" : str(status["outcome"]),
          message: str(status["message"])
        }
      })
    case "Cancelled":
      return env.audit.emit({ ...base, type: "orchestrator.lifecycle.cancelled", data: { ...common, message: str(status["message"]) } })
    default:
      return env.audit.emit({
        ...base,
        type: "orchestrator.lifecycle.failed",
        outcome: "failure",
        data: {
          ...common,
          failure_phase: str(status["failurePhase"]) ?? str(status["timeoutPhase"]) ?? from,
          failure_reason: str(status["failureReason"]) ?? str(status["message"]),
          timeout_phase: str(status["timeoutPhase"]),
          crd_outcome: str(status["outcome"])
        }
      })
  }
}

/** Writes status fields without a phase change, guarded as a transition is; false when the RR left its phase. */
export const patchStatus = (env: Env, rr: RemediationRequest, fields: StatusPatch) =>
  Effect.map(guardedWrite(env, rr.metadata.name, phaseOf(rr), fields), Option.isSome)

/** The workflow chosen for the RR (storage rebuilds `selectedWorkflowRef` from it). */
export const selectionAudit = (
  env: Env,
  rr: RemediationRequest,
  wf: { readonly workflowId: string; readonly version?: string; readonly workflowName?: string; readonly executionBundle?: string }
) =>
  env.audit.emit({
    type: "workflowexecution.selection.completed",
    category: "workflowexecution",
    correlationId: rr.metadata.name,
    namespace: namespaceOf(rr, env.k8s.namespace),
    data: {
      rr_name: rr.metadata.name,
      workflow_id: wf.workflowId,
      workflow_version: wf.version,
      workflow_name: wf.workflowName,
      container_image: wf.executionBundle
    }
  })

/**
 * First sight of an RR. It carries the signal and target too: whatever created the RR (a signal source, kubectl, the
 * agent) may not audit, and storage rebuilds the RR's spec from this event when no signal event exists.
 */
export const createdAudit = (env: Env, rr: RemediationRequest, timeoutConfig: Record<string, string> | undefined) => {
  const namespace = namespaceOf(rr, env.k8s.namespace)
  const spec = rr.spec
  const target = spec.targetResource
  return env.audit.emit({
    type: "orchestrator.lifecycle.created",
    category: "orchestration",
    correlationId: rr.metadata.name,
    namespace,
    resource: { type: "RemediationRequest", id: rr.metadata.name },
    data: {
      rr_name: rr.metadata.name,
      namespace,
      timeout_config: timeoutConfig,
      signal_name: spec.signalName,
      fingerprint: spec.signalFingerprint,
      severity: spec.severity,
      signal_type: spec.signalType,
      signal_source: spec.signalSource,
      target_kind: target.kind,
      target_name: target.name,
      target_namespace: target.namespace,
      target_api_version: target.apiVersion,
      signal_labels: spec.signalLabels,
      signal_annotations: spec.signalAnnotations,
      original_payload: spec.originalPayload
    }
  })
}
