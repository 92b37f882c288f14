/**
 * `Verifying`: the orchestrator's side of the effectiveness assessment. It creates the EffectivenessAssessment (once;
 * `NewAssessment.ts`), records the remediation for storage's history (`remediation.workflow_created`), keeps the
 * RR's `verificationDeadline` at the EA's validity deadline plus 30 s, and turns the monitor's verdict (the EA's
 * `RemediationEffective` condition) into the outcome:
 * - effective -> `Remediated`;
 * - ineffective -> `Inconclusive` and a NotificationRequest (`ineffective`), or, when it completes an ineffective
 *   chain of `ineffectiveChainThreshold` on its fingerprint, `ManualReviewRequired` (the next RR on the fingerprint
 *   is then blocked `IneffectiveChain` by routing instead of looping);
 * - undetermined (spec drift, target gone) -> `Inconclusive`; expired unassessed -> `VerificationTimedOut`.
 * The EA's changes requeue the RR (Controllers.ts), so nothing here polls.
 */
import { formatTargetResource } from "@kubemend/core/domain/WorkflowExecution"
import { Duration, Effect, Option } from "effect"
import { chainLength, detailOfStatus, loadVerdicts, verdictOfStatus } from "../remediation/Chain.ts"
import { newAssessment } from "./NewAssessment.ts"
import { notify } from "./Escalation.ts"
import { ensure, getRaw, iso, loadAll, millisOf, names, namespaceOf, type RemediationRequest, statusField } from "../remediation/Objects.ts"
import { history, targetOf } from "../remediation/Routing.ts"
import { type Env, patchStatus, transition } from "../remediation/Transition.ts"

/** The RR's verification deadline lies this far past the EA's validity deadline (reference: #280). */
const deadlineBuffer = 30_000

const create = (env: Env, rr: RemediationRequest) =>
  Effect.gen(function* () {
    const namespace = namespaceOf(rr, env.k8s.namespace)
    const a = yield* newAssessment(env, rr)
    const created = yield* ensure(env.k8s, "effectivenessassessments", a.body)
    if (created) {
      yield* env.metrics.childCreated(namespace, "EffectivenessAssessment")
      const wf = rr.status?.selectedWorkflowRef
      yield* env.audit.emit({
        type: "remediation.workflow_created",
        category: "orchestration",
        correlationId: rr.metadata.name,
        namespace,
        data: {
          rr_name: rr.metadata.name,
          namespace,
          target_resource: formatTargetResource(targetOf(rr)),
          ...(a.pre === undefined ? {} : { pre_remediation_spec_hash: a.pre }),
          workflow_id: wf?.workflowId,
          workflow_version: wf?.version,
          action_type: a.actionType,
          signal_type: rr.spec.signalType,
          signal_fingerprint: rr.spec.signalFingerprint,
          ea_name: a.name
        }
      })
    }
    yield* patchStatus(env, rr, { effectivenessAssessmentRef: { kind: "EffectivenessAssessment", name: a.name, namespace } })
    return {}
  })

const finish = (env: Env, rr: RemediationRequest, now: number, verdict: NonNullable<ReturnType<typeof verdictOfStatus>>, detail: string) =>
  Effect.gen(function* () {
    const what = `workflow ${rr.status?.selectedWorkflowRef?.workflowId ?? ""} on ${formatTargetResource(targetOf(rr))}`
    switch (verdict) {
      case "effective":
        return yield* transition(env, rr, now, "Completed", { outcome: "Remediated", message: `${what} remediated: ${detail}` })
      case "expired":
        return yield* transition(env, rr, now, "Completed", { outcome: "VerificationTimedOut", message: `${what}: ${detail}` })
      case "undetermined":
        return yield* transition(env, rr, now, "Completed", { outcome: "Inconclusive", message: `${what}: ${detail}` })
      case "ineffective": {
        const r = env.config.routing
        const past = history(rr, yield* loadAll(env.k8s, "remediationrequests"))
        const chain = 1 + chainLength(past, yield* loadVerdicts(env.k8s), now - Duration.toMillis(r.ineffectiveTimeWindow))
        const escalate = chain >= r.ineffectiveChainThreshold
        const message = `${what} was not effective (${detail})${
          escalate ? `; ${chain} ineffective remediations of this signal, escalated to manual review` : ""
        }`
        const refs = yield* notify(
          env,
          rr,
          now,
          escalate
            ? {
              kind: "ineffective-chain",
              reason: "IneffectiveChain",
              subject: `Remediations of ${rr.spec.signalName} are not effective (${rr.metadata.name})`,
              body: message
            }
            : {
              kind: "ineffective",
              type: "ineffective",
              reason: "IneffectiveRemediation",
              subject: `Remediation not effective: ${rr.spec.signalName} (${rr.metadata.name})`,
              body: message
            }
        )
        return yield* transition(env, rr, now, "Completed", {
          outcome: escalate ? "ManualReviewRequired" : "Inconclusive",
          message: message.slice(0, 1024),
          notificationRequestRefs: refs,
          ...(escalate ? { requiresManualReview: true } : {})
        })
      }
    }
  })

export const onVerifying = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const ea = yield* getRaw(env.k8s, "effectivenessassessments", names.assessment(rr.metadata.name))
    if (Option.isNone(ea)) return yield* create(env, rr)
    const validity = millisOf(statusField(ea.value, "validityDeadline") as string | undefined)
    if (Option.isSome(validity)) {
      const deadline = iso(validity.value + deadlineBuffer)
      if (rr.status?.verificationDeadline !== deadline) yield* patchStatus(env, rr, { verificationDeadline: deadline })
    }
    const verdict = verdictOfStatus(ea.value.status)
    if (verdict === undefined) return {}
    yield* finish(env, rr, now, verdict, detailOfStatus(ea.value.status))
    return {}
  })
