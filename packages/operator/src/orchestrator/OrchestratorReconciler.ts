/**
 * The remediation orchestrator: one reconcile per RemediationRequest moves it along
 * `Pending -> Processing -> Analyzing -> (AwaitingApproval ->) Approved -> Running -> Verifying -> Completed`, with
 * `Blocked` detours from the routing engine, per-phase and global timeouts (`TimedOut`), and the cascade and
 * garbage collection of terminal RRs. Level-triggered: every step reads the RR and its children afresh, so a
 * reconcile can run any number of times, after a restart too. Time is Effect's Clock.
 */
import { parseGoDuration } from "@kubemend/core/Config"
import { isTerminalPhase, type RRPhase } from "@kubemend/core/domain/Phases"
import { K8s } from "@kubemend/core/K8s"
import { Storage } from "@kubemend/core/Storage"
import { storageCatalog } from "@kubemend/core/WorkflowOverride"
import { Duration, Effect, Option } from "effect"
import { splitKey, type Reconciled } from "../runtime/Workers.ts"
import { onAwaitingApproval } from "./Approval.ts"
import { onBlocked } from "./Blocking.ts"
import { onTerminal } from "./Cascade.ts"
import { onApproved, onRunning } from "./Execution.ts"
import { onVerifying } from "./Verifying.ts"
import { LifecycleAudit } from "../remediation/LifecycleAudit.ts"
import { LifecycleConfig, type PhaseTimeouts } from "../remediation/LifecycleConfig.ts"
import { LifecycleMetrics } from "../remediation/LifecycleMetrics.ts"
import { isInteractive, iso, load, millisOf, namespaceOf, nowMillis, phaseOf, type RemediationRequest } from "../remediation/Objects.ts"
import { onAnalyzing, onPending, onProcessing } from "./Pipeline.ts"
import { PlatformSettings } from "../remediation/PlatformSettings.ts"
import { ManagedTargets } from "../remediation/Targets.ts"
import { type Env, transition, type WriteError } from "../remediation/Transition.ts"

interface Deadline {
  /** `timeouts_total` label and `timeoutPhase` context. */
  readonly label: string
  readonly at: number
  readonly limit: Duration.Duration
}

const latest = (...times: ReadonlyArray<string | undefined>): Option.Option<number> => {
  const known = times.flatMap((t) => Option.toArray(millisOf(t)))
  return known.length === 0 ? Option.none() : Option.some(Math.max(...known))
}

/** The RR's own `status.timeoutConfig` (written at its start, editable per RR) over the configured timeouts. */
const timeoutsOf = (base: PhaseTimeouts, rr: RemediationRequest): PhaseTimeouts => {
  const own = rr.status?.timeoutConfig ?? {}
  const pick = (key: keyof PhaseTimeouts) => {
    const text = own[key]
    return text === undefined ? base[key] : Option.getOrElse(parseGoDuration(text), () => base[key])
  }
  return {
    global: pick("global"),
    processing: pick("processing"),
    analyzing: pick("analyzing"),
    executing: pick("executing"),
    awaitingApproval: pick("awaitingApproval"),
    verifying: pick("verifying")
  }
}

/** The earliest deadline the RR is under in its current phase; none while blocked, awaiting approval or unstarted. */
const deadlineOf = (env: Env, rr: RemediationRequest): Option.Option<Deadline> => {
  const t = timeoutsOf(env.config.timeouts, rr)
  const s = rr.status
  const phase = phaseOf(rr)
  const candidates: Array<Deadline> = []
  const add = (label: string, since: Option.Option<number>, limit: Duration.Duration) => {
    if (Option.isSome(since)) candidates.push({ label, at: since.value + Duration.toMillis(limit), limit })
  }
  if (phase === "Blocked" || phase === "AwaitingApproval" || phase === "Pending") return Option.none()
  // A retry after a block starts the global clock again at its new processing start.
  add("Global", latest(s?.startTime, s?.processingStartTime), t.global)
  switch (phase) {
    case "Processing":
      add("Processing", millisOf(s?.processingStartTime), t.processing)
      break
    case "Analyzing":
      // A person drives an interactive investigation: only the global limit applies.
      if (!isInteractive(rr, env.k8s.apiGroup)) add("Analyzing", millisOf(s?.analyzingStartTime), t.analyzing)
      break
    case "Running":
      add("Executing", millisOf(s?.executingStartTime), t.executing)
      break
    case "Verifying": {
      const deadline = millisOf(s?.verificationDeadline)
      if (Option.isSome(deadline)) candidates.push({ label: "Verifying", at: deadline.value, limit: t.verifying })
      break
    }
  }
  return Option.fromNullable(candidates.sort((a, b) => a.at - b.at)[0])
}

const timeOut = (env: Env, rr: RemediationRequest, now: number, d: Deadline) =>
  Effect.gen(function* () {
    const phase = phaseOf(rr)
    const message = `${d.label.toLowerCase()} timeout (${Duration.format(d.limit)}) exceeded in phase ${phase}`
    // The workflow ran; only its assessment did not finish in time: the RR completes as VerificationTimedOut.
    const moved = phase === "Verifying" && d.label === "Verifying"
      ? yield* transition(env, rr, now, "Completed", { outcome: "VerificationTimedOut", timeoutPhase: phase, timeoutTime: iso(now), message })
      : yield* transition(env, rr, now, "TimedOut", {
        timeoutPhase: phase,
        timeoutTime: iso(now),
        message,
        ...(phase === "Verifying" ? { outcome: "VerificationTimedOut" } : {})
      })
    if (moved) yield* env.metrics.timeout(namespaceOf(rr, env.k8s.namespace), d.label)
    return { requeueAfter: Duration.zero } satisfies Reconciled
  })

const step = (env: Env, rr: RemediationRequest, now: number, phase: RRPhase): Effect.Effect<Reconciled, WriteError> => {
  switch (phase) {
    case "Pending":
      return onPending(env, rr, now)
    case "Processing":
      return onProcessing(env, rr, now)
    case "Analyzing":
      return onAnalyzing(env, rr, now)
    case "AwaitingApproval":
      return onAwaitingApproval(env, rr, now)
    case "Approved":
      return onApproved(env, rr, now)
    case "Running":
      return onRunning(env, rr, now)
    case "Verifying":
      return onVerifying(env, rr, now)
    case "Blocked":
      return onBlocked(env, rr, now)
    default:
      return Effect.succeed({})
  }
}

/** The shorter of a step's requeue and the time left before the phase deadline. */
const capped = (r: Reconciled, deadline: Option.Option<Deadline>, now: number): Reconciled =>
  Option.match(deadline, {
    onNone: () => r,
    onSome: (d) => {
      const left = Duration.millis(Math.max(0, d.at - now) + 1)
      return { requeueAfter: r.requeueAfter === undefined ? left : Duration.min(r.requeueAfter, left) }
    }
  })

export class OrchestratorReconciler extends Effect.Service<OrchestratorReconciler>()(
  "@kubemend/operator/OrchestratorReconciler",
  {
    effect: Effect.gen(function* () {
      const storage = yield* Effect.serviceOption(Storage)
      const base: Env = {
        k8s: yield* K8s,
        config: yield* LifecycleConfig,
        metrics: yield* LifecycleMetrics,
        audit: yield* LifecycleAudit,
        targets: yield* ManagedTargets,
        ...Option.match(storage, { onNone: () => ({}), onSome: (s) => ({ catalog: storageCatalog(s) }) })
      }
      const platform = yield* PlatformSettings
      // Last phase seen per RR: the `from_phase` of transitions made by others (the gateway's cancel).
      const lastSeen = new Map<string, RRPhase>()

      const reconcile = (key: string) =>
        Effect.gen(function* () {
          const env: Env = { ...base, config: yield* platform.current }
          // 1. Load the RR; a deleted one is forgotten.
          const name = splitKey(key).name
          const found = yield* load(env.k8s, "remediationrequests", name)
          if (Option.isNone(found)) {
            lastSeen.delete(name)
            yield* env.metrics.setBlocked(env.k8s.namespace, name, false)
            return {} satisfies Reconciled
          }
          const rr = found.value
          const phase = phaseOf(rr)
          const previous = lastSeen.get(name)
          if (!isTerminalPhase(phase)) lastSeen.set(name, phase)
          const now = yield* nowMillis
          const namespace = namespaceOf(rr, env.k8s.namespace)
          // 2. Terminal: cascade, then garbage collection.
          if (isTerminalPhase(phase)) return yield* onTerminal(env, rr, now, previous)
          yield* env.metrics.setBlocked(namespace, name, phase === "Blocked")
          // 3. A phase past its deadline times out before anything else happens in it.
          const deadline = deadlineOf(env, rr)
          if (Option.isSome(deadline) && now >= deadline.value.at) return yield* timeOut(env, rr, now, deadline.value)
          // 4. The phase's own step, requeued no later than its deadline.
          const result = yield* step(env, rr, now, phase)
          yield* env.metrics.reconciled(namespace, phase, ((yield* nowMillis) - now) / 1000)
          return capped(result, deadline, now)
        })

      return { reconcile } as const
    })
  }
) {}
