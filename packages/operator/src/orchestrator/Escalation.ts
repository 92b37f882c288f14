/**
 * Escalation to people: a NotificationRequest to the ops escalation channel, and the `ManualReviewRequired` outcome
 * for an investigation that ended without a workflow but asked for a human (`svc_complete_no_action` with an
 * escalation reason ends as `human_review_reason: operator_escalation`). The notification is idempotent by name,
 * one per RR and kind, so a retried reconcile never sends twice.
 */
import { Effect } from "effect"
import { childMeta, ensure, names, namespaceOf, type RemediationRequest, rrRef } from "../remediation/Objects.ts"
import { targetOf } from "../remediation/Routing.ts"
import { type Env, transition } from "../remediation/Transition.ts"

export interface Notice {
  /** Name suffix: one notification per RR and kind (`escalation`, `ineffective-chain`). */
  readonly kind: string
  /** `spec.type`, which notification routes match on (default `escalation`). */
  readonly type?: string
  readonly reason: string
  readonly subject: string
  readonly body: string
}

/** Creates the NotificationRequest (once) and answers its reference for `status.notificationRequestRefs`. */
export const notify = (env: Env, rr: RemediationRequest, now: number, notice: Notice) =>
  Effect.gen(function* () {
    const namespace = namespaceOf(rr, env.k8s.namespace)
    const name = names.notification(rr.metadata.name, notice.kind)
    const target = targetOf(rr)
    const created = yield* ensure(env.k8s, "notificationrequests", {
      metadata: childMeta(rr, name, env.k8s.apiGroup, env.k8s.namespace),
      spec: {
        type: notice.type ?? "escalation",
        priority: rr.spec.severity === "critical" ? "critical" : "high",
        channel: env.config.escalationChannel,
        recipients: [{ channel: env.config.escalationChannel }],
        subject: notice.subject,
        body: notice.body,
        reason: notice.reason,
        remediationRequestRef: rrRef(rr, env.k8s.apiGroup, env.k8s.namespace),
        target: { kind: target.kind, name: target.name, ...(target.namespace === undefined ? {} : { namespace: target.namespace }) },
        requestedAt: new Date(now).toISOString()
      }
    })
    if (created) {
      yield* env.metrics.childCreated(namespace, "NotificationRequest")
      yield* env.audit.emit({
        type: "orchestrator.notification.created",
        category: "notification",
        correlationId: rr.metadata.name,
        namespace,
        resource: { type: "NotificationRequest", id: name },
        data: { notification_name: name, channel: env.config.escalationChannel, reason: notice.reason, subject: notice.subject }
      })
    }
    const ref = { kind: "NotificationRequest", name, namespace }
    const existing = rr.status?.notificationRequestRefs ?? []
    return existing.some((r) => r.name === name) ? existing : [...existing, ref]
  })

/** The investigation wants a human: outcome `ManualReviewRequired`, and the ops channel is told. */
export const manualReview = (env: Env, rr: RemediationRequest, now: number, reason: string, detail: string) =>
  Effect.gen(function* () {
    const refs = yield* notify(env, rr, now, {
      kind: "escalation",
      reason,
      subject: `Manual review required: ${rr.spec.signalName} (${rr.metadata.name})`,
      body: detail
    })
    yield* transition(env, rr, now, "Completed", {
      outcome: "ManualReviewRequired",
      requiresManualReview: true,
      message: `manual review required (${reason}): ${detail}`.slice(0, 1024),
      notificationRequestRefs: refs
    })
    return {}
  })
