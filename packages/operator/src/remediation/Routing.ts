/**
 * The routing engine: whether an RR may go on, or is `Blocked` and why (spec document 1, "Block reasons"). Before
 * analysis: `UnmanagedResource`, `DuplicateInProgress`, `ConsecutiveFailures`, `IneffectiveChain`,
 * `ExponentialBackoff`; before execution: `ResourceBusy`, `RecentlyRemediated`. Decisions read the other RRs on the
 * same signal fingerprint and the WorkflowExecutions on the same target, so they follow the cluster's state after
 * a restart. Times are Clock milliseconds; `until` absent means no cooldown (rechecked or manual).
 */
import { backoffDelay, type BlockReason, isTerminalPhase } from "@kubemend/core/domain/Phases"
import type { TargetResource } from "@kubemend/core/domain/Meta"
import { formatTargetResource } from "@kubemend/core/domain/WorkflowExecution"
import { Duration, Effect, Option } from "effect"
import { chainLength, loadVerdicts } from "./Chain.ts"
import { describeTarget, isInteractive, loadAll, millisOf, phaseOf, type RemediationRequest } from "./Objects.ts"
import type { Env } from "./Transition.ts"

export interface Block {
  readonly reason: BlockReason
  readonly message: string
  /** Clock millis after which the RR is retried; absent: rechecked (or manual for `IneffectiveChain`). */
  readonly until?: number
  /** The active RR a `DuplicateInProgress` waits for. */
  readonly duplicateOf?: string
}

/** The resource a remediation acts on: the analysis' target when known, else the signal's. */
export const targetOf = (rr: RemediationRequest): TargetResource => rr.status?.remediationTarget ?? rr.spec.targetResource

const durationMillis = (d: Duration.DurationInput) => Duration.toMillis(Duration.decode(d))

const endedAt = (rr: RemediationRequest): number =>
  Option.getOrElse(
    Option.orElse(millisOf(rr.status?.completedAt), () => millisOf(rr.metadata.creationTimestamp)),
    () => 0
  )

/** Creation order; names break ties of the second-precision timestamps. */
const older = (a: RemediationRequest, b: RemediationRequest): boolean => {
  const ta = Option.getOrElse(millisOf(a.metadata.creationTimestamp), () => 0)
  const tb = Option.getOrElse(millisOf(b.metadata.creationTimestamp), () => 0)
  return ta !== tb ? ta < tb : a.metadata.name < b.metadata.name
}

const isFailure = (rr: RemediationRequest) => {
  const p = phaseOf(rr)
  return (p === "Failed" || p === "TimedOut") && rr.status?.duplicateOf === undefined
}
/** Failure phase names of a failed workflow: ours, and the original's and the demo data's spellings. */
const workflowPhases = new Set(["WorkflowExecution", "Execution", "Executing", "Running"])
const isWorkflowFailure = (rr: RemediationRequest) => workflowPhases.has(rr.status?.failurePhase ?? "") || rr.status?.timeoutPhase === "Running"

/** Finished RRs on the same fingerprint, newest first; cancelled and skipped ones say nothing about the signal. */
export const history = (rr: RemediationRequest, all: ReadonlyArray<RemediationRequest>) =>
  all
    .filter((o) =>
      o.metadata.name !== rr.metadata.name && o.spec.signalFingerprint === rr.spec.signalFingerprint &&
      isTerminalPhase(phaseOf(o)) && phaseOf(o) !== "Cancelled" && phaseOf(o) !== "Skipped"
    )
    .sort((a, b) => endedAt(b) - endedAt(a))

/** Leading failures of the history: how many, and when the latest ended. */
export const consecutiveFailures = (past: ReadonlyArray<RemediationRequest>) => {
  let count = 0
  for (const o of past) {
    if (isFailure(o)) count++
    else if (o.status?.duplicateOf === undefined) break
  }
  return { count, last: past.find(isFailure) }
}

/** The oldest active RR on the same fingerprint that is not itself waiting as a duplicate. */
export const activeOriginal = (rr: RemediationRequest, all: ReadonlyArray<RemediationRequest>) =>
  all
    .filter((o) =>
      o.metadata.name !== rr.metadata.name && o.spec.signalFingerprint === rr.spec.signalFingerprint &&
      !isTerminalPhase(phaseOf(o)) && o.status?.blockReason !== "DuplicateInProgress" && older(o, rr)
    )
    .sort((a, b) => (older(a, b) ? -1 : 1))[0]

export const preAnalysis = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const r = env.config.routing
    const target = rr.spec.targetResource
    if (!(yield* env.targets.isManaged(target))) {
      return Option.some<Block>({
        reason: "UnmanagedResource",
        message: `${describeTarget(target)}: neither the namespace nor the resource has ${env.k8s.apiGroup}/managed=true`
      })
    }
    if (isInteractive(rr, env.k8s.apiGroup)) return Option.none<Block>()
    const all = yield* loadAll(env.k8s, "remediationrequests")
    const original = activeOriginal(rr, all)
    if (original !== undefined) {
      return Option.some<Block>({
        reason: "DuplicateInProgress",
        message: `remediation ${original.metadata.name} already handles this signal; this one inherits its outcome`,
        duplicateOf: original.metadata.name
      })
    }
    const past = history(rr, all)
    const failures = consecutiveFailures(past)
    if (failures.count >= r.consecutiveFailureThreshold && failures.last !== undefined) {
      const until = endedAt(failures.last) + durationMillis(r.consecutiveFailureCooldown)
      if (now < until) {
        return Option.some<Block>({
          reason: "ConsecutiveFailures",
          message: `${failures.count} consecutive failures on this signal; cooling down`,
          until
        })
      }
    }
    const chain = chainLength(past, yield* loadVerdicts(env.k8s), now - durationMillis(r.ineffectiveTimeWindow))
    if (chain >= r.ineffectiveChainThreshold) {
      return Option.some<Block>({
        reason: "IneffectiveChain",
        message: `${chain} remediations of this signal were ineffective or it kept coming back; escalated to manual review`
      })
    }
    if (failures.count > 0 && failures.last !== undefined && isWorkflowFailure(failures.last)) {
      const delay = backoffDelay(failures.count, r.exponentialBackoffBase, r.exponentialBackoffMax)
      const until = endedAt(failures.last) + durationMillis(delay)
      if (now < until) {
        return Option.some<Block>({
          reason: "ExponentialBackoff",
          message: `backing off after ${failures.count} workflow failure(s) on this signal`,
          until
        })
      }
    }
    return Option.none<Block>()
  })

/** Another RR's WorkflowExecution still running on `target`. */
export const busyWith = (env: Env, rr: RemediationRequest, target: TargetResource) =>
  Effect.map(loadAll(env.k8s, "workflowexecutions"), (wes) =>
    wes.find((we) =>
      we.spec.targetResource === formatTargetResource(target) &&
      we.spec.remediationRequestRef.name !== rr.metadata.name &&
      we.status?.phase !== "Completed" && we.status?.phase !== "Failed"
    ))

export const preExecution = (env: Env, rr: RemediationRequest, now: number, workflowId: string) =>
  Effect.gen(function* () {
    const target = targetOf(rr)
    const busy = yield* busyWith(env, rr, target)
    if (busy !== undefined) {
      return Option.some<Block>({
        reason: "ResourceBusy",
        message: `workflow execution ${busy.metadata.name} is running on ${describeTarget(target)}`
      })
    }
    const cooldown = durationMillis(env.config.routing.recentlyRemediatedCooldown)
    const recent = (yield* loadAll(env.k8s, "workflowexecutions"))
      .filter((we) =>
        we.spec.targetResource === formatTargetResource(target) && we.spec.workflowRef.workflowId === workflowId &&
        we.spec.remediationRequestRef.name !== rr.metadata.name && we.status?.phase === "Completed"
      )
      .map((we) => Option.getOrElse(millisOf(we.status?.completionTime), () => 0))
      .filter((at) => now < at + cooldown)
      .sort((a, b) => b - a)[0]
    if (recent !== undefined) {
      return Option.some<Block>({
        reason: "RecentlyRemediated",
        message: `workflow ${workflowId} ran on ${describeTarget(target)} recently`,
        until: recent + cooldown
      })
    }
    return Option.none<Block>()
  })
