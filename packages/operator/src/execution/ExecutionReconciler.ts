/**
 * The WorkflowExecution reconciler (sample-controller shape):
 * 1. load the execution; gone: remove what it started; finished: stop a run still going (a cancelled or timed-out
 *    request fails its execution through the cascade, and the Job or PipelineRun must not go on);
 * 2. not started: read the workflow from the catalog, refuse an engine that is not enabled or parameters the
 *    workflow's schema rejects, wait while the target is busy or cooling down, capture the target's spec hash, start;
 * 3. running: read the run back and write phase, times, execution status or failure details; a run past its
 *    executing deadline is stopped and fails `DeadlineExceeded`.
 */
import { parseGoDuration } from "@kubemend/core/Config"
import { K8s } from "@kubemend/core/K8s"
import { Storage } from "@kubemend/core/Storage"
import type { RemediationWorkflow } from "@kubemend/core/StorageApi"
import { Clock, Duration, Effect, Either, Option } from "effect"
import { splitKey, type Reconciled } from "../runtime/Workers.ts"
import { LifecycleAudit } from "../remediation/LifecycleAudit.ts"
import { describeTarget, iso, load, millisOf, type WorkflowExecution } from "../remediation/Objects.ts"
import { PlatformSettings } from "../remediation/PlatformSettings.ts"
import { EngineRejected, type Run, type RunContext } from "../clients/Engine.ts"
import { Engines } from "./Engines.ts"
import { applyExecutionSpec, ExecutionConfig } from "../remediation/ExecutionConfig.ts"
import { ExecutionMetrics, type ReconcileOutcome } from "./ExecutionMetrics.ts"
import { failed, type Failure, started, succeeded, waiting } from "./ExecutionStatus.ts"
import { parameterSchema, validateParameters } from "./Parameters.ts"
import { holdOn, targetOfExecution, targetSpecHash } from "./TargetLock.ts"

export class ExecutionReconciler extends Effect.Service<ExecutionReconciler>()("@kubemend/operator/ExecutionReconciler", {
  effect: Effect.gen(function* () {
    const k8s = yield* K8s
    const storage = yield* Storage
    const base = yield* ExecutionConfig
    const platform = yield* PlatformSettings
    const audit = yield* LifecycleAudit
    const metrics = yield* ExecutionMetrics
    const engines = yield* Engines
    // Check-then-start of one target must not interleave between workers.
    const startLock = yield* Effect.makeSemaphore(1)
    const apiGroup = k8s.apiGroup

    const settingsNow = Effect.map(platform.spec, (spec) => applyExecutionSpec(base, spec))
    const timeoutOf = (we: WorkflowExecution) =>
      Effect.map(
        platform.current,
        (lifecycle) =>
          Option.getOrElse(Option.flatMap(Option.fromNullable(we.spec.executionConfig?.timeout), parseGoDuration), () => lifecycle.timeouts.executing)
      )

    const write = (we: WorkflowExecution, status: Record<string, unknown>) => k8s.patchCrStatus("workflowexecutions", we.metadata.name, status)

    // The reference's WorkflowExecutionAuditPayload (workflowexecution.workflow.*): storage's success rate and
    // durations read these, from started_at/completed_at.
    const emit = (we: WorkflowExecution, outcome: "started" | "completed" | "failed", data: Record<string, unknown>, now: number) =>
      audit.emit({
        type: `workflowexecution.workflow.${outcome}`,
        category: "workflowexecution",
        outcome: outcome === "completed" ? "success" : outcome === "started" ? "pending" : "failure",
        correlationId: we.spec.remediationRequestRef.name ?? we.metadata.name,
        ...(we.metadata.namespace === undefined ? {} : { namespace: we.metadata.namespace }),
        actor: { type: "service", id: "workflowexecution-controller" },
        resource: { type: "WorkflowExecution", id: we.metadata.name },
        data: {
          rr_name: we.spec.remediationRequestRef.name,
          execution_name: we.metadata.name,
          workflow_id: we.spec.workflowRef.workflowId,
          ...(we.spec.workflowRef.version === undefined ? {} : { workflow_version: we.spec.workflowRef.version }),
          ...(we.spec.workflowRef.executionBundle === undefined ? {} : { container_image: we.spec.workflowRef.executionBundle }),
          target: we.spec.targetResource,
          target_resource: we.spec.targetResource,
          phase: outcome === "started" ? "Running" : outcome === "completed" ? "Completed" : "Failed",
          started_at: outcome === "started" ? iso(now) : we.status?.startTime ?? iso(now),
          ...(outcome === "started" ? {} : { completed_at: iso(now) }),
          ...data
        }
      })

    const fail = (we: WorkflowExecution, now: number, f: Failure) =>
      Effect.gen(function* () {
        const status = failed(we, now, f)
        yield* write(we, status)
        yield* emit(we, "failed", {
          engine: we.status?.executionEngine,
          execution_ref: we.status?.executionRef?.name,
          failure_reason: f.reason,
          message: f.message,
          was_execution_failure: f.wasExecutionFailure,
          ...(status.duration === undefined ? {} : { duration: status.duration })
        }, now)
        return "failed" as const
      })

    /** 2. Not started yet. */
    const start = (we: WorkflowExecution, now: number) =>
      Effect.gen(function* () {
        const settings = yield* settingsNow
        const found = yield* Effect.either(storage.getWorkflow(we.spec.workflowRef.workflowId))
        if (Either.isLeft(found)) {
          if (found.left._tag !== "NotFound") return yield* found.left
          return [
            yield* fail(we, now, {
              reason: "ConfigurationError",
              message: `workflow ${we.spec.workflowRef.workflowId} is not in the catalog`,
              wasExecutionFailure: false
            }),
            undefined
          ] as const
        }
        const workflow: RemediationWorkflow = found.right
        if (workflow.status !== "Active") {
          return [
            yield* fail(we, now, {
              reason: "ConfigurationError",
              message: `workflow ${workflow.workflowName} ${workflow.version} is ${workflow.status} in the catalog`,
              wasExecutionFailure: false
            }),
            undefined
          ] as const
        }
        const engineName = workflow.executionEngine === "" ? "job" : workflow.executionEngine
        const engine = engines.enabled(engineName, settings)
        if (Either.isLeft(engine)) {
          return [yield* fail(we, now, { reason: "UnsupportedEngine", message: engine.left, wasExecutionFailure: false }), undefined] as const
        }
        const parameters = validateParameters(parameterSchema(workflow.parameters), (we.spec.parameters ?? {}) as Record<string, unknown>)
        if (Either.isLeft(parameters)) {
          return [
            yield* fail(we, now, { reason: "ConfigurationError", message: `parameters rejected: ${parameters.left.join("; ")}`, wasExecutionFailure: false }),
            undefined
          ] as const
        }
        const run: Run = { we, workflow, parameters: parameters.right, settings, timeout: yield* timeoutOf(we), apiGroup }
        return yield* startLock.withPermits(1)(Effect.gen(function* () {
          const hold = yield* holdOn(k8s, we, now, settings.cooldownPeriod)
          const target = describeTarget(
            Option.getOrElse(Option.fromNullable(yield* targetOfExecution(k8s, we)), () => ({ kind: "?", name: we.spec.targetResource }))
          )
          if (hold._tag === "Busy") {
            yield* write(we, waiting(we, now, "ResourceBusy", `workflow execution ${hold.by} is running on ${target}`))
            return ["busy", settings.busyRecheck] as const
          }
          if (hold._tag === "CoolingDown") {
            yield* write(we, waiting(we, now, "RecentlyRemediated", `workflow ${workflow.workflowName} completed on ${target} (${hold.after}); cooling down`))
            return ["cooldown", Duration.millis(hold.until - now)] as const
          }
          const hash = yield* targetSpecHash(k8s, yield* targetOfExecution(k8s, we))
          const ref = yield* Effect.either(engine.right.start(run))
          if (Either.isLeft(ref)) {
            if (ref.left instanceof EngineRejected) {
              return [yield* fail(we, now, { reason: ref.left.reason, message: ref.left.message, wasExecutionFailure: false }), undefined] as const
            }
            return yield* ref.left
          }
          yield* write(
            we,
            started(we, now, {
              engine: engine.right.name,
              ref: ref.right,
              ...(workflow.serviceAccountName === undefined ? {} : { serviceAccountName: workflow.serviceAccountName }),
              ...Option.match(hash, { onNone: () => ({}), onSome: (h) => ({ preRemediationSpecHash: h }) })
            })
          )
          yield* emit(we, "started", { engine: engine.right.name, execution_ref: ref.right }, now)
          yield* Effect.logInfo(`started ${engine.right.name} ${ref.right} for ${we.metadata.name} on ${target}`)
          return ["started", settings.pollInterval] as const
        }))
      })

    /** 3. Running. */
    const follow = (we: WorkflowExecution, ref: string, now: number) =>
      Effect.gen(function* () {
        const settings = yield* settingsNow
        const engine = engines.byName(we.status?.executionEngine ?? "job")
        const context: RunContext = { we, settings, apiGroup }
        const seen = yield* engine.observe(context, ref)
        const startedAt = Option.getOrElse(millisOf(we.status?.startTime), () => now)
        const deadline = startedAt + Duration.toMillis(yield* timeoutOf(we))
        switch (seen._tag) {
          case "Running": {
            if (now < deadline) return ["running", Duration.min(settings.pollInterval, Duration.millis(deadline - now))] as const
            yield* engine.cancel(context, ref)
            return [
              yield* fail(we, now, {
                reason: "DeadlineExceeded",
                engineReason: "DeadlineExceeded",
                message: `${engine.name} ${ref} ran past the executing timeout and was stopped`,
                taskName: ref,
                wasExecutionFailure: true
              }),
              undefined
            ] as const
          }
          case "Succeeded": {
            const status = succeeded(we, now, seen)
            yield* write(we, status)
            yield* emit(
              we,
              "completed",
              { engine: engine.name, execution_ref: ref, ...(status.duration === undefined ? {} : { duration: status.duration }) },
              now
            )
            return ["completed", undefined] as const
          }
          case "Failed":
            return [yield* fail(we, now, seen), undefined] as const
          case "Gone":
            return [
              yield* fail(we, now, {
                reason: "Unknown",
                message: `${engine.name} ${ref} was deleted before it finished`,
                taskName: ref,
                wasExecutionFailure: true
              }),
              undefined
            ] as const
        }
      })

    /** 1b. Finished: a run still going (the request was cancelled or timed out) is stopped. */
    const stopIfRunning = (we: WorkflowExecution, ref: string) =>
      Effect.gen(function* () {
        const engine = engines.byName(we.status?.executionEngine ?? "job")
        const context: RunContext = { we, settings: yield* settingsNow, apiGroup }
        const seen = yield* engine.observe(context, ref)
        if (seen._tag !== "Running") return "idle" as const
        yield* engine.cancel(context, ref)
        yield* Effect.logInfo(`stopped ${engine.name} ${ref}: ${we.metadata.name} is ${we.status?.phase}`)
        return "stopped" as const
      })

    const reconcile = (key: string) =>
      Effect.gen(function* () {
        const t0 = yield* Clock.currentTimeMillis
        const { name } = splitKey(key)
        const outcome = yield* Effect.gen(function* () {
          // 1. Load.
          const found = yield* load(k8s, "workflowexecutions", name)
          if (Option.isNone(found)) {
            yield* engines.removeOrphans(name, yield* settingsNow)
            return ["idle", undefined] as const
          }
          const we = found.value
          const ref = we.status?.executionRef?.name
          const phase = we.status?.phase
          if (phase === "Completed" || phase === "Failed") {
            return [ref === undefined ? "idle" : yield* stopIfRunning(we, ref), undefined] as const
          }
          if (ref === undefined || phase !== "Running") return yield* start(we, t0)
          return yield* follow(we, ref, t0)
        }).pipe(Effect.tapError(() => Effect.flatMap(Clock.currentTimeMillis, (t) => metrics.reconciled("error", (t - t0) / 1000))))
        const [result, after] = outcome as readonly [ReconcileOutcome, Duration.Duration | undefined]
        yield* metrics.reconciled(result, ((yield* Clock.currentTimeMillis) - t0) / 1000)
        return (after === undefined ? {} : { requeueAfter: after }) satisfies Reconciled
      })

    return { reconcile } as const
  })
}) {}
