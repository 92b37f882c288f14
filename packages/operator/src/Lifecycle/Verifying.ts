/**
 * `Verifying`: an EffectivenessAssessment that calls the remediation effective once the stabilization window has
 * passed without the RR being moved elsewhere.
 */
import { formatGoDuration } from "@kubemend/core/Config"
import { formatTargetResource } from "@kubemend/core/domain/WorkflowExecution"
import { Duration, Effect, Option } from "effect"
import type { Reconciled } from "../Controller.ts"
import { childMeta, ensure, getRaw, iso, millisOf, names, namespaceOf, type RemediationRequest, rrRef, statusField } from "./Objects.ts"
import { targetOf } from "./Routing.ts"
import { type Env, transition } from "./Transition.ts"

const after = (millis: number): Reconciled => ({ requeueAfter: Duration.millis(Math.max(0, millis)) })

export const onVerifying = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const name = names.assessment(rr.metadata.name)
    const window = env.config.stabilizationWindow
    const existing = yield* getRaw(env.k8s, "effectivenessassessments", name)
    if (Option.isNone(existing) || statusField(existing.value, "assessAfter") === undefined) {
      if (Option.isNone(existing)) {
        const target = targetOf(rr)
        yield* ensure(env.k8s, "effectivenessassessments", {
          metadata: childMeta(rr, name, env.k8s.apiGroup, env.k8s.namespace),
          spec: {
            remediationRequestRef: rrRef(rr, env.k8s.apiGroup, env.k8s.namespace),
            workflowExecutionRef: { name: rr.status?.workflowExecutionRef?.name ?? names.execution(rr.metadata.name) },
            targetResource: target,
            stabilizationWindow: formatGoDuration(window)
          }
        })
        yield* env.metrics.childCreated(namespaceOf(rr, env.k8s.namespace), "EffectivenessAssessment")
      }
      yield* env.k8s.patchCrStatus("effectivenessassessments", name, { phase: "Assessing", assessAfter: iso(now + Duration.toMillis(window)) })
      return after(Duration.toMillis(window))
    }
    const due = Option.getOrElse(millisOf(statusField(existing.value, "assessAfter") as string), () => now)
    if (now < due) return after(due - now)
    yield* env.k8s.patchCrStatus("effectivenessassessments", name, {
      phase: "Completed",
      effective: true,
      reason: "StabilizationWindowElapsed",
      assessedAt: iso(now)
    })
    yield* transition(env, rr, now, "Completed", {
      outcome: "Remediated",
      message: `workflow ${rr.status?.selectedWorkflowRef?.workflowId ?? ""} remediated ${formatTargetResource(targetOf(rr))}`
    })
    return {}
  })
