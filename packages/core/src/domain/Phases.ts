/**
 * RemediationRequest phases, outcomes and block reasons (spec document 1, "States and transitions").
 *
 * The spec's phase list wins over the original CRD: it has `Approved` and `Running` where the original had
 * `Executing`. `Skipped` (a phase the original's routing engine writes for skipped duplicates) is accepted on input
 * so such objects still decode; `Executing` is read as `Running`.
 */
import { Duration, Schema } from "effect"
import { Enum } from "./Common.ts"

export const RRPhaseValues = [
  "Pending",
  "Processing",
  "Analyzing",
  "AwaitingApproval",
  "Approved",
  "Running",
  "Verifying",
  "Blocked",
  "Completed",
  "Failed",
  "TimedOut",
  "Cancelled",
  "Skipped"
] as const

/** Every phase a RemediationRequest can be in (the spec's twelve plus the tolerated `Skipped`). */
export const RRPhase = Enum(...RRPhaseValues)
export type RRPhase = typeof RRPhase.Type

/**
 * `status.overallPhase` as read from the cluster: also accepts the original's `Executing`, decoded as `Running`
 * (and encoded back as `Running`).
 */
export const RRPhaseInput = Schema.transform(Enum(...RRPhaseValues, "Executing"), RRPhase, {
  strict: true,
  decode: (p) => (p === "Executing" ? "Running" : p),
  encode: (p) => p
})

/** Phases after which nothing moves any more; the status stream sends `final: true` for them. */
export const TerminalPhases: ReadonlySet<RRPhase> = new Set<RRPhase>([
  "Completed",
  "Failed",
  "TimedOut",
  "Cancelled",
  "Skipped"
])

/**
 * The phases the spec names for refusing `svc_cancel_remediation` ("phase is Completed, Failed or Cancelled").
 * `TimedOut` and `Skipped` are terminal too, and cancelling them would rewrite a final outcome and re-run the
 * terminal cascade, so `canCancel` refuses every terminal phase; this set is what error messages name.
 */
export const NonCancellablePhases: ReadonlySet<RRPhase> = new Set<RRPhase>(["Completed", "Failed", "Cancelled"])

export const isTerminalPhase = (phase: string): boolean => TerminalPhases.has(phase as RRPhase)

/** Whether `svc_cancel_remediation` may move an RR in `phase` to `Cancelled`: only non-terminal phases. */
export const canCancel = (phase: string): boolean => !isTerminalPhase(phase)

/** `status.outcome` of a finished RR; `DryRun` when dry-run mode stopped the pipeline after analysis. */
export const RROutcome = Enum(
  "Remediated",
  "NoActionRequired",
  "ManualReviewRequired",
  "VerificationTimedOut",
  "Inconclusive",
  "DryRun"
)
export type RROutcome = typeof RROutcome.Type

export const BlockReasonValues = [
  "ConsecutiveFailures",
  "DuplicateInProgress",
  "ResourceBusy",
  "RecentlyRemediated",
  "ExponentialBackoff",
  "UnmanagedResource",
  "IneffectiveChain"
] as const

/** `status.blockReason` of a `Blocked` RR. */
export const BlockReason = Enum(...BlockReasonValues)
export type BlockReason = typeof BlockReason.Type

/** How long a block lasts before the routing engine looks again. */
export type BlockTiming =
  | { readonly _tag: "Cooldown"; readonly cooldown: Duration.Duration; readonly threshold?: number }
  | { readonly _tag: "Recheck"; readonly interval: Duration.Duration }
  | { readonly _tag: "Backoff"; readonly base: Duration.Duration; readonly max: Duration.Duration }
  | { readonly _tag: "UntilLabeled" }
  | { readonly _tag: "None" }

/** The spec's block table: meaning and timing of each reason (defaults; the platform CR's routing block tunes them). */
export const BlockTimings: { readonly [R in BlockReason]: BlockTiming } = {
  /** 3 or more consecutive failures on the same fingerprint: cooldown 1 hour. */
  ConsecutiveFailures: { _tag: "Cooldown", cooldown: Duration.hours(1), threshold: 3 },
  /** Another active RR handles the same signal; rechecked every 30 s, inherits the outcome. */
  DuplicateInProgress: { _tag: "Recheck", interval: Duration.seconds(30) },
  /** A WorkflowExecution already runs on the same target; rechecked every 30 s. */
  ResourceBusy: { _tag: "Recheck", interval: Duration.seconds(30) },
  /** Same workflow and target executed recently: cooldown 5 minutes. */
  RecentlyRemediated: { _tag: "Cooldown", cooldown: Duration.minutes(5) },
  /** Progressive delay after a workflow failure: 1 minute growing to 10 minutes. */
  ExponentialBackoff: { _tag: "Backoff", base: Duration.minutes(1), max: Duration.minutes(10) },
  /** Target lacks the `{api_group}/managed=true` label: blocked until labeled. */
  UnmanagedResource: { _tag: "UntilLabeled" },
  /** Consecutive ineffective remediations: escalated to manual review, no automatic retry. */
  IneffectiveChain: { _tag: "None" }
}

/**
 * Delay before the `attempt`-th retry (1-based) under exponential backoff: base doubled per attempt, capped at max
 * (1m, 2m, 4m, 8m, 10m, 10m … with the defaults).
 */
export const backoffDelay = (
  attempt: number,
  base: Duration.DurationInput = Duration.minutes(1),
  max: Duration.DurationInput = Duration.minutes(10)
): Duration.Duration => {
  const exponent = Math.max(0, Math.floor(attempt) - 1)
  const raw = Duration.times(Duration.decode(base), 2 ** Math.min(exponent, 30))
  return Duration.min(raw, Duration.decode(max))
}
