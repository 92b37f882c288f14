/**
 * The effectiveness monitor: one reconcile per EffectivenessAssessment, level-triggered, time from Effect's Clock.
 *
 *   Pending ─schedule─▶ WaitingForPropagation ─hash─▶ Stabilizing ─prometheusCheckAfter─▶ Assessing ─▶ Completed
 *                                                                                                     └▶ Failed
 * 1. Load the EA; a finished one is left alone.
 * 2. First sight: the timeline (`Timeline.ts`) goes to status; `effectiveness.assessment.scheduled`.
 * 3. Past `validityDeadline`: complete with what is known (`Expired`, or `AlertDecayTimeout` while an alert decays).
 * 4. Hash: the post-remediation hash once `hashComputeAfter` passed, then the current hash on every reconcile; a
 *    difference completes the assessment as `SpecDrift`; a target gone fails it as `Unrecoverable`.
 * 5. Assessing: health and metrics once, the alert from `alertManagerCheckAfter` (rechecked while it decays).
 * 6. All three decided: `Full` (or `Partial` when one could not be assessed). Requeue at the next due time, and at
 *    least every `recheckInterval` so drift is seen while waiting.
 * Status is written before the step's audit events are emitted, so a retried reconcile does not emit twice.
 */
import type { AssessmentReason, EffectivenessAssessmentStatus } from "@kubemend/core/domain/EffectivenessAssessment"
import { EffectivenessAssessment as EffectivenessAssessmentSchema } from "@kubemend/core/domain/EffectivenessAssessment"
import { parseGoDuration } from "@kubemend/core/Config"
import { K8s } from "@kubemend/core/K8s"
import { Duration, Effect, Option, Schema } from "effect"
import { splitKey, type Reconciled } from "../runtime/Workers.ts"
import { LifecycleAudit } from "../remediation/LifecycleAudit.ts"
import { getRaw, iso, load, millisOf, nowMillis } from "../remediation/Objects.ts"
import { PlatformSettings } from "../remediation/PlatformSettings.ts"
import { AlertCheck } from "./AlertCheck.ts"
import { MetricsCheck } from "./MetricsCheck.ts"
import { alertDecayTimeout, alertStep, type Event, healthStep, metricsStep, type Step } from "./Components.ts"
import { applyEffectivenessSpec, EffectivenessConfig } from "./EffectivenessConfig.ts"
import { emitEffectiveness } from "./EffectivenessAudit.ts"
import { EffectivenessMetrics } from "./EffectivenessMetrics.ts"
import { currentHash } from "./Hash.ts"
import { timelineOf } from "./Timeline.ts"
import { conditionReason, effectiveCondition } from "../remediation/Chain.ts"
import { failedComponents, scoreOf, verdictOf } from "../remediation/Verdict.ts"

const decodeEa = Schema.decodeUnknownOption(EffectivenessAssessmentSchema)
const plural = "effectivenessassessments"

export class EffectivenessReconciler extends Effect.Service<EffectivenessReconciler>()("@kubemend/operator/EffectivenessReconciler", {
  effect: Effect.gen(function* () {
    const k8s = yield* K8s
    const base = yield* EffectivenessConfig
    const platform = yield* PlatformSettings
    const audit = yield* LifecycleAudit
    const metrics = yield* EffectivenessMetrics
    const alerts = yield* AlertCheck
    const metricsCheck = yield* MetricsCheck

    const reconcile = (key: string) =>
      Effect.gen(function* () {
        // 1. Load.
        const raw = yield* getRaw(k8s, plural, splitKey(key).name)
        if (Option.isNone(raw)) return {} satisfies Reconciled
        const decoded = decodeEa(raw.value)
        if (Option.isNone(decoded)) {
          yield* Effect.logWarning(`skipping ${plural}/${raw.value.metadata.name}: it does not match the schema`)
          return {}
        }
        const ea = decoded.value
        // Every status write carries the resourceVersion read; a conflict reads the assessment again at once.
        const guard = { resourceVersion: raw.value.metadata.resourceVersion }
        const status: EffectivenessAssessmentStatus = ea.status ?? {}
        if (status.phase === "Completed" || status.phase === "Failed") return {}
        const settings = applyEffectivenessSpec(base, yield* platform.spec)
        const now = yield* nowMillis
        const namespace = ea.metadata.namespace ?? k8s.namespace
        const emit = (events: ReadonlyArray<Event>) => Effect.forEach(events, (e) => emitEffectiveness(audit, ea, namespace, e.type, e.data), { discard: true })

        // 2. Schedule.
        const deadline = millisOf(status.validityDeadline)
        if (Option.isNone(deadline)) {
          const t = timelineOf(ea.spec, now, settings)
          const waiting = t.hashComputeAfter > now
          yield* k8s.patchCrStatus(plural, ea.metadata.name, {
            phase: waiting ? "WaitingForPropagation" : "Stabilizing",
            hashComputeAfter: iso(t.hashComputeAfter),
            prometheusCheckAfter: iso(t.prometheusCheckAfter),
            alertManagerCheckAfter: iso(t.alertManagerCheckAfter),
            validityDeadline: iso(t.validityDeadline)
          }, guard)
          yield* emit([{
            type: "effectiveness.assessment.scheduled",
            data: {
              validity_deadline: iso(t.validityDeadline),
              prometheus_check_after: iso(t.prometheusCheckAfter),
              alertmanager_check_after: iso(t.alertManagerCheckAfter),
              ...(waiting ? { hash_compute_after: iso(t.hashComputeAfter), hash_compute_delay: ea.spec.config.hashComputeDelay } : {}),
              ...(ea.spec.config.alertCheckDelay === undefined ? {} : { alert_check_delay: ea.spec.config.alertCheckDelay }),
              stabilization_window: ea.spec.config.stabilizationWindow,
              validity_window: Duration.format(settings.validityWindow)
            }
          }])
          return { requeueAfter: Duration.zero }
        }
        const at = (s: string | undefined) => Option.getOrElse(millisOf(s), () => now)
        const hashAfter = at(status.hashComputeAfter)
        const checkAfter = at(status.prometheusCheckAfter)
        const alertAfter = at(status.alertManagerCheckAfter)
        // The remediation's time: the schedule was computed from it (restarts and resolved signals count after it).
        const stabilization = Option.getOrElse(parseGoDuration(ea.spec.config.stabilizationWindow), () => settings.stabilizationWindow)
        const since = checkAfter - Duration.toMillis(stabilization)
        const c = status.components ?? {}

        const finish = (phase: "Completed" | "Failed", reason: AssessmentReason, message: string, step: Step) =>
          Effect.gen(function* () {
            const components = { ...c, ...step.components }
            const verdict = verdictOf({ phase, assessmentReason: reason, components }, settings.healthyThreshold) ?? "undetermined"
            const failed = failedComponents(components, settings.healthyThreshold)
            yield* k8s.patchCrStatus(plural, ea.metadata.name, {
              phase,
              assessmentReason: reason,
              completedAt: iso(now),
              message,
              ...(Object.keys(step.components).length === 0 ? {} : { components: step.components }),
              conditions: [{
                type: effectiveCondition,
                status: verdict === "effective" ? "True" : verdict === "ineffective" ? "False" : "Unknown",
                reason: conditionReason[verdict],
                message: failed.length === 0 ? message : `not passed: ${failed.join(", ")}`,
                lastTransitionTime: iso(now)
              }]
            }, guard)
            yield* emit(step.events)
            const created = millisOf(ea.spec.remediationCreatedAt)
            yield* emit([{
              type: "effectiveness.assessment.completed",
              data: {
                reason,
                score: scoreOf(components, reason),
                signal_name: ea.spec.signalName,
                components_assessed: [
                  ...(components.healthAssessed === true ? ["health"] : []),
                  ...(components.hashComputed === true ? ["hash"] : []),
                  ...(components.alertAssessed === true ? ["alert"] : []),
                  ...(components.metricsAssessed === true ? ["metrics"] : [])
                ],
                completed_at: iso(now),
                assessment_duration_seconds: Option.match(created, { onNone: () => null, onSome: (t) => (now - t) / 1000 }),
                post_remediation_spec_hash: components.postRemediationSpecHash,
                details: message
              }
            }])
            yield* metrics.completed(reason)
            if (reason === "Expired") yield* metrics.expired
            yield* Effect.logInfo(`assessment ${ea.metadata.name}: ${phase} (${reason}) ${message}`)
            return {} satisfies Reconciled
          })

        // 3. Validity.
        if (now >= deadline.value) {
          if ((c.alertDecayRetries ?? 0) > 0 && c.alertAssessed === undefined) {
            return yield* finish(
              "Completed",
              "AlertDecayTimeout",
              "the alert did not resolve before the validity deadline",
              yield* alertDecayTimeout(metrics, c)
            )
          }
          return yield* finish("Completed", "Expired", "the validity deadline passed before every component was assessed", { components: {}, events: [] })
        }

        // 4. Hash.
        let step: { components: Record<string, unknown>; events: Array<Event> } = { components: {}, events: [] }
        const merge = (s: Step) => {
          step = { components: { ...step.components, ...s.components }, events: [...step.events, ...s.events] }
        }
        if (now >= hashAfter) {
          const hash = yield* currentHash(k8s, ea.spec.remediationTarget)
          if (Option.isNone(hash)) {
            return yield* finish(
              "Failed",
              "Unrecoverable",
              `${ea.spec.remediationTarget.kind} ${ea.spec.remediationTarget.name} could not be read (gone, or not readable by the operator)`,
              step
            )
          }
          if (c.hashComputed !== true) {
            const pre = ea.spec.preRemediationSpecHash
            merge({
              components: { hashComputed: true, postRemediationSpecHash: hash.value, currentSpecHash: hash.value },
              events: [{
                type: "effectiveness.hash.computed",
                data: {
                  assessed: true,
                  ...(pre === undefined ? {} : { pre_remediation_spec_hash: pre }),
                  post_remediation_spec_hash: hash.value,
                  hash_match: pre === undefined ? null : pre === hash.value,
                  details: pre === undefined
                    ? "no pre-remediation hash was captured"
                    : pre === hash.value
                    ? "the workflow left the spec unchanged"
                    : "the workflow changed the spec"
                }
              }]
            })
            yield* metrics.component("hash", "success")
          } else if (hash.value !== c.postRemediationSpecHash) {
            yield* metrics.component("hash", "failure")
            return yield* finish(
              "Completed",
              "SpecDrift",
              `${ea.spec.remediationTarget.kind} ${ea.spec.remediationTarget.name} was changed by someone else during the assessment`,
              {
                components: { currentSpecHash: hash.value },
                events: []
              }
            )
          }
        }
        const hashed = c.hashComputed === true || step.components["hashComputed"] === true

        // 5. Components.
        if (hashed && now >= checkAfter) {
          if (c.healthAssessed === undefined) merge(yield* healthStep(k8s, metrics, ea, since, settings.healthyThreshold))
          if (c.metricsAssessed === undefined) {
            merge(
              yield* metricsStep(metricsCheck, metrics, {
                target: ea.spec.signalTarget,
                windowSeconds: (now - since) / 1000,
                metricsUrl: settings.metricsUrl
              })
            )
          }
        }
        const known = { ...c, ...step.components }
        // A decaying alert is rechecked every recheckInterval after the first check (due times derive from the count).
        const interval = Duration.toMillis(settings.recheckInterval)
        const alertDue = alertAfter + (known.alertDecayRetries ?? 0) * interval
        if (hashed && now >= alertDue && known.alertAssessed === undefined) {
          const rr = yield* load(k8s, "remediationrequests", ea.spec.correlationID)
          const spec = Option.map(rr, (r) => r.spec)
          const healthy = known.healthAssessed !== true || (known.healthScore ?? 0) >= settings.healthyThreshold
          const outcome = yield* alertStep(
            alerts,
            metrics,
            {
              rrName: ea.spec.correlationID,
              signalName: ea.spec.signalName ?? Option.match(spec, { onNone: () => "", onSome: (s) => s.signalName }),
              signalType: Option.getOrUndefined(Option.flatMap(spec, (s) => Option.fromNullable(s.signalType))),
              signalLabels: Option.getOrElse(Option.flatMap(spec, (s) => Option.fromNullable(s.signalLabels)), () => ({})),
              target: ea.spec.signalTarget,
              since,
              metricsUrl: settings.metricsUrl
            },
            known,
            healthy,
            now
          )
          merge(outcome)
        }
        const done = { ...c, ...step.components }

        // 6. Complete, or write progress and requeue.
        if (done.healthAssessed !== undefined && done.metricsAssessed !== undefined && done.alertAssessed !== undefined) {
          const partial = done.healthAssessed === false || done.alertAssessed === false || done.metricsAssessed === false
          return yield* finish("Completed", partial ? "Partial" : "Full", "every component was assessed", step)
        }
        const phase = !hashed ? "WaitingForPropagation" : now < checkAfter ? "Stabilizing" : "Assessing"
        if (phase !== status.phase || Object.keys(step.components).length > 0) {
          yield* k8s.patchCrStatus(
            plural,
            ea.metadata.name,
            { phase, ...(Object.keys(step.components).length === 0 ? {} : { components: step.components }) },
            guard
          )
          yield* emit(step.events)
        }
        const decayed = { ...c, ...step.components }.alertDecayRetries ?? 0
        const next = [hashAfter, checkAfter, alertAfter + decayed * interval, deadline.value].filter((t) => t > now)
        const due = Math.min(now + interval, ...next)
        return { requeueAfter: Duration.millis(Math.max(0, due - now)) } satisfies Reconciled
      }).pipe(Effect.catchTag("K8sConflict", () => Effect.succeed<Reconciled>({ requeueAfter: Duration.zero })))

    return { reconcile } as const
  })
}) {}
