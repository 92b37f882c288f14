/**
 * The local platform's stand-in for a workflow engine (enabled by `lifecycle.simulator.enabled`): a new
 * WorkflowExecution goes `Running`, and after `completeAfter` it is `Completed`, or `Failed` when it carries the
 * `{api_group}/simulate-failure` annotation (copied from its RR, so a person can ask for a failure). Nothing is run.
 */
import { formatGoDuration } from "@kubemend/core/Config"
import { K8s } from "@kubemend/core/K8s"
import { Duration, Effect, Option } from "effect"
import { splitKey, type Reconciled } from "../Controller.ts"
import { LifecycleConfig } from "./LifecycleConfig.ts"
import { LifecycleMetrics } from "./LifecycleMetrics.ts"
import { iso, load, millisOf, nowMillis, simulateFailureAnnotation } from "./Objects.ts"

export class ExecutionSimulator extends Effect.Service<ExecutionSimulator>()("@kubemend/operator/ExecutionSimulator", {
  effect: Effect.gen(function* () {
    const k8s = yield* K8s
    const config = yield* LifecycleConfig
    const metrics = yield* LifecycleMetrics
    const runFor = config.simulator.completeAfter

    const reconcile = (key: string) =>
      Effect.gen(function* () {
        const found = yield* load(k8s, "workflowexecutions", splitKey(key).name)
        if (Option.isNone(found)) return {} satisfies Reconciled
        const we = found.value
        const status = we.status
        if (status?.phase === "Completed" || status?.phase === "Failed") return {}
        const now = yield* nowMillis
        const started = millisOf(status?.startTime)
        if (status?.phase !== "Running" || Option.isNone(started)) {
          yield* k8s.patchCrStatus("workflowexecutions", we.metadata.name, {
            phase: "Running",
            startTime: iso(now),
            executionEngine: "simulator",
            executionRef: { name: `sim-${we.metadata.name}` }
          })
          return { requeueAfter: runFor } satisfies Reconciled
        }
        const due = started.value + Duration.toMillis(runFor)
        if (now < due) return { requeueAfter: Duration.millis(due - now) } satisfies Reconciled
        const failure = we.metadata.annotations?.[simulateFailureAnnotation(k8s.apiGroup)]
        const duration = formatGoDuration(Duration.millis(now - started.value))
        yield* k8s.patchCrStatus("workflowexecutions", we.metadata.name, failure === undefined
          ? { phase: "Completed", completionTime: iso(now), duration }
          : { phase: "Failed", completionTime: iso(now), duration, failureReason: failure === "" || failure === "true" ? "simulated failure" : failure })
        yield* metrics.executionFinished(failure === undefined ? "success" : "failure")
        return {}
      })

    return { reconcile } as const
  })
}) {}
