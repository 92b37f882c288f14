/**
 * Garbage collection of terminal RRs once `retentionExpiryTime` (completion + retention, 24 h by default) has
 * passed: the children go first (a real cluster would also delete them through their owner reference; the dev API
 * server and the in-memory layer do not), then the RR itself.
 */
import type { CrPlural } from "@kubemend/core/K8s"
import { Duration, Effect } from "effect"
import type { Reconciled } from "../runtime/Workers.ts"
import { namespaceOf, type RemediationRequest, rrLabel } from "../remediation/Objects.ts"
import type { Env } from "../remediation/Transition.ts"

const childPlurals: ReadonlyArray<CrPlural> = [
  "aianalyses",
  "signalprocessings",
  "workflowexecutions",
  "remediationapprovalrequests",
  "effectivenessassessments",
  "notificationrequests"
]

const ignoreMissing = <E extends { readonly _tag: string }>(e: E) => e._tag === "K8sNotFound" ? Effect.void : Effect.fail(e)

export const collect = (env: Env, rr: RemediationRequest, now: number, expiry: number) =>
  Effect.gen(function* () {
    if (now < expiry) return { requeueAfter: Duration.millis(expiry - now) } satisfies Reconciled
    const selector = `${rrLabel(env.k8s.apiGroup)}=${rr.metadata.name.slice(0, 63)}`
    for (const plural of childPlurals) {
      const items = (yield* env.k8s.listCr(plural, { labelSelector: selector })).items
      for (const child of items) {
        yield* env.k8s.deleteCr(plural, child.metadata.name).pipe(Effect.catchAll(ignoreMissing))
      }
    }
    yield* env.k8s.deleteCr("remediationrequests", rr.metadata.name).pipe(Effect.catchAll(ignoreMissing))
    const namespace = namespaceOf(rr, env.k8s.namespace)
    yield* env.metrics.setBlocked(namespace, rr.metadata.name, false)
    yield* env.audit.emit({
      type: "orchestrator.lifecycle.deleted",
      category: "orchestration",
      correlationId: rr.metadata.name,
      namespace,
      data: { rr_name: rr.metadata.name, namespace, reason: "retention period elapsed", retention_expiry_time: rr.status?.retentionExpiryTime }
    })
    yield* Effect.logInfo(`remediation ${rr.metadata.name} garbage-collected after its retention period`)
    return {} satisfies Reconciled
  })
