/**
 * `Blocked` RRs: entering the phase with `blockReason`, `blockMessage` and `blockedUntil`, and leaving it. Cooldown
 * reasons resume once `blockedUntil` has passed; `DuplicateInProgress`, `ResourceBusy` and `UnmanagedResource` are
 * rechecked every `recheckInterval`; `IneffectiveChain` waits for people. A duplicate whose original finished
 * inherits its outcome. Resuming goes back to `Approved` when the RR already has its analysis and workflow (blocked
 * before execution), otherwise to `Pending`, which runs the routing checks again.
 */
import type { Reconciled } from "../runtime/Workers.ts"
import { Duration, Effect, Option } from "effect"
import { notify } from "./Escalation.ts"
import { iso, load, millisOf, namespaceOf, phaseOf, type RemediationRequest } from "../remediation/Objects.ts"
import { type Block, busyWith, targetOf } from "../remediation/Routing.ts"
import { type Env, patchStatus, type StatusPatch, transition } from "../remediation/Transition.ts"

const after = (millis: number): Reconciled => ({ requeueAfter: Duration.millis(Math.max(0, millis)) })

export const block = (env: Env, rr: RemediationRequest, now: number, b: Block, extra: StatusPatch = {}) =>
  Effect.gen(function* () {
    const namespace = namespaceOf(rr, env.k8s.namespace)
    const notifications = b.reason === "IneffectiveChain"
      ? {
        notificationRequestRefs: yield* notify(env, rr, now, {
          kind: "ineffective-chain",
          reason: "IneffectiveChain",
          subject: `Remediations of ${rr.spec.signalName} are not effective (${rr.metadata.name})`,
          body: b.message
        }),
        requiresManualReview: true
      }
      : {}
    const moved = yield* transition(env, rr, now, "Blocked", {
      ...extra,
      ...notifications,
      blockReason: b.reason,
      blockMessage: b.message,
      blockedUntil: b.until === undefined ? null : iso(b.until),
      ...(b.duplicateOf === undefined ? {} : { duplicateOf: b.duplicateOf })
    })
    if (!moved) return {}
    yield* env.metrics.blocked(namespace, b.reason)
    yield* env.audit.emit({
      type: "orchestrator.routing.blocked",
      category: "orchestration",
      correlationId: rr.metadata.name,
      namespace,
      data: {
        rr_name: rr.metadata.name,
        block_reason: b.reason,
        block_message: b.message,
        blocked_until: b.until === undefined ? undefined : iso(b.until),
        duplicate_of: b.duplicateOf
      }
    })
    if (b.duplicateOf !== undefined) yield* countOccurrence(env, b.duplicateOf, now)
    return b.until !== undefined
      ? after(b.until - now)
      : b.reason === "IneffectiveChain"
      ? {}
      : { requeueAfter: env.config.routing.recheckInterval }
  })

/** The original RR saw its signal once more (`status.deduplication`, what the gateway shows). */
const countOccurrence = (env: Env, original: string, now: number) =>
  Effect.gen(function* () {
    const found = yield* load(env.k8s, "remediationrequests", original)
    if (Option.isNone(found)) return
    const d = found.value.status?.deduplication
    yield* patchStatus(env, found.value, {
      deduplication: {
        firstSeenAt: d?.firstSeenAt ?? found.value.status?.startTime ?? found.value.metadata.creationTimestamp ?? iso(now),
        lastSeenAt: iso(now),
        occurrenceCount: (d?.occurrenceCount ?? 1) + 1
      }
    })
  }).pipe(Effect.catchAll((e) => Effect.logWarning(`could not count the occurrence on ${original}`, e)))

const resumePhase = (rr: RemediationRequest) =>
  rr.status?.selectedWorkflowRef !== undefined && rr.status?.aiAnalysisRef?.name !== undefined ? "Approved" : "Pending"

export const resume = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.as(transition(env, rr, now, resumePhase(rr), {}), { requeueAfter: Duration.zero } satisfies Reconciled)

/** A duplicate takes the finished original's outcome. */
const inherit = (env: Env, rr: RemediationRequest, original: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const namespace = namespaceOf(rr, env.k8s.namespace)
    const phase = phaseOf(original)
    const name = original.metadata.name
    if (phase === "Cancelled" || phase === "Skipped") return yield* resume(env, rr, now)
    const moved = phase === "Completed"
      ? yield* transition(env, rr, now, "Completed", {
        ...(original.status?.outcome === undefined ? {} : { outcome: original.status.outcome }),
        message: `inherited the outcome of ${name}`
      })
      : yield* transition(env, rr, now, "Failed", {
        failurePhase: original.status?.failurePhase ?? "Deduplication",
        failureReason: `inherited the failure of ${name}: ${original.status?.failureReason ?? phase}`
      })
    if (moved) yield* env.metrics.duplicateSkipped(namespace, "DuplicateInProgress")
    return {}
  })

export const onBlocked = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const recheck: Reconciled = { requeueAfter: env.config.routing.recheckInterval }
    switch (rr.status?.blockReason) {
      case "IneffectiveChain":
        return {}
      case "UnmanagedResource":
        return (yield* env.targets.isManaged(rr.spec.targetResource)) ? yield* resume(env, rr, now) : recheck
      case "ResourceBusy":
        return (yield* busyWith(env, rr, targetOf(rr))) === undefined ? yield* resume(env, rr, now) : recheck
      case "DuplicateInProgress": {
        const name = rr.status?.duplicateOf
        const original = name === undefined ? Option.none() : yield* load(env.k8s, "remediationrequests", name)
        if (Option.isNone(original)) return yield* resume(env, rr, now)
        const phase = phaseOf(original.value)
        if (phase === "Completed" || phase === "Failed" || phase === "TimedOut" || phase === "Cancelled" || phase === "Skipped") {
          return yield* inherit(env, rr, original.value, now)
        }
        return recheck
      }
      default: {
        const until = millisOf(rr.status?.blockedUntil)
        if (Option.isNone(until) || now >= until.value) return yield* resume(env, rr, now)
        return after(until.value - now)
      }
    }
  })
