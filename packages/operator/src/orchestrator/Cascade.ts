/**
 * The terminal cascade (document 1: every child is patched to failed when the RR enters a terminal phase): an RR
 * that ended `Failed`, `TimedOut` or `Cancelled` patches every AIAnalysis, SignalProcessing and WorkflowExecution
 * child to `Failed`, finished ones included (a cancelled parent marks the AIAnalysis `ParentCancelled`, also one
 * that had completed); an RR that `Completed` patches its unfinished children and leaves the completed ones, whose
 * success is its own. Idempotent (children already `Failed` are left alone) and non-fatal: the RR stays terminal
 * whatever happens here, a failed patch is retried later, and only a complete cascade records
 * `retentionExpiryTime`, after which the RR waits for garbage collection.
 */
import type { RRPhase } from "@kubemend/core/domain/Phases"
import type { CrPlural, KubeObject } from "@kubemend/core/K8s"
import { Duration, Effect, Option } from "effect"
import type { Reconciled } from "../runtime/Workers.ts"
import { collect } from "./Gc.ts"
import { getRaw, iso, millisOf, namespaceOf, phaseOf, type RemediationRequest, rrLabel, statusField } from "../remediation/Objects.ts"
import { type Env, patchStatus } from "../remediation/Transition.ts"

const children: ReadonlyArray<{ readonly plural: CrPlural; readonly ref: (rr: RemediationRequest) => string | undefined }> = [
  { plural: "aianalyses", ref: (rr) => rr.status?.aiAnalysisRef?.name },
  { plural: "signalprocessings", ref: (rr) => rr.status?.signalProcessingRef?.name },
  { plural: "workflowexecutions", ref: (rr) => rr.status?.workflowExecutionRef?.name }
]

/** Whether the cascade leaves `o` as it is under a parent that ended in `parentPhase`. */
const settled = (o: KubeObject, parentPhase: RRPhase) => {
  const phase = statusField(o, "phase")
  return phase === "Failed" || (phase === "Completed" && parentPhase === "Completed")
}

/** The RR's children of one kind: by label, plus the one its status points at (created by someone else). */
const childrenOf = (env: Env, rr: RemediationRequest, plural: CrPlural, ref: string | undefined) =>
  Effect.gen(function* () {
    const labelled = (yield* env.k8s.listCr(plural, { labelSelector: `${rrLabel(env.k8s.apiGroup)}=${rr.metadata.name.slice(0, 63)}` })).items
    if (ref === undefined || labelled.some((o) => o.metadata.name === ref)) return labelled
    return [...labelled, ...Option.toArray(yield* getRaw(env.k8s, plural, ref))]
  })

const failChild = (env: Env, plural: CrPlural, child: KubeObject, parentPhase: RRPhase, now: number) => {
  const message = `parent remediation ${parentPhase}`
  const status: Record<string, unknown> = plural === "aianalyses"
    ? { phase: "Failed", message, completedAt: iso(now), ...(parentPhase === "Cancelled" ? { reason: "ParentCancelled" } : {}) }
    : plural === "workflowexecutions"
    ? { phase: "Failed", failureReason: message, completionTime: iso(now) }
    : { phase: "Failed", message, completedAt: iso(now) }
  // Guarded: a child that finished after our listing keeps its outcome; the cascade comes back in 5 s.
  return env.k8s.patchCrStatus(plural, child.metadata.name, status, { resourceVersion: child.metadata.resourceVersion })
}

/** Handles a terminal RR: cascade once, then garbage collection when the retention has passed. */
export const onTerminal = (env: Env, rr: RemediationRequest, now: number, lastSeen: RRPhase | undefined) =>
  Effect.gen(function* () {
    const expiry = millisOf(rr.status?.retentionExpiryTime)
    if (Option.isSome(expiry)) return yield* collect(env, rr, now, expiry.value)
    const phase = phaseOf(rr)
    const namespace = namespaceOf(rr, env.k8s.namespace)
    yield* env.metrics.setBlocked(namespace, rr.metadata.name, false)
    let complete = true
    for (const { plural, ref } of children) {
      const found = yield* Effect.either(childrenOf(env, rr, plural, ref(rr)))
      if (found._tag === "Left") {
        complete = false
        continue
      }
      for (const child of found.right.filter((c) => !settled(c, phase))) {
        const patched = yield* Effect.either(failChild(env, plural, child, phase, now))
        if (patched._tag === "Left" && patched.left._tag !== "K8sNotFound") {
          complete = false
          yield* Effect.logWarning(`cascade: could not fail ${plural}/${child.metadata.name}`, patched.left)
        }
      }
    }
    if (!complete) return { requeueAfter: Duration.seconds(5) } satisfies Reconciled
    // The gateway writes `Cancelled` itself: the transition is counted and audited here, once.
    if (phase === "Cancelled") {
      yield* env.metrics.transition(namespace, lastSeen ?? "Unknown", "Cancelled")
      yield* env.audit.emit({
        type: "orchestrator.lifecycle.cancelled",
        category: "orchestration",
        correlationId: rr.metadata.name,
        namespace,
        data: { rr_name: rr.metadata.name, namespace, from_phase: lastSeen ?? "Unknown", overall_phase: "Cancelled", message: rr.status?.message }
      })
    }
    const endedAt = Option.getOrElse(millisOf(rr.status?.completedAt), () => now)
    const until = endedAt + Duration.toMillis(env.config.retention)
    yield* patchStatus(env, rr, { retentionExpiryTime: iso(until), ...(rr.status?.completedAt === undefined ? { completedAt: iso(now) } : {}) })
    return { requeueAfter: Duration.millis(Math.max(0, until - now)) } satisfies Reconciled
  })
