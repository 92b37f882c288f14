/**
 * The workflow execution controller's `job` engine against the dev API server and the real storage catalog: the Job
 * it creates, success, failure with a redacted log tail, the executing deadline (TestClock), a workflow whose
 * engine is not enabled, parameters the schema refuses, a busy target, the cooldown (TestClock), cancellation.
 */
import { describe, expect, it } from "@effect/vitest"
import { specHash } from "@kubemend/core/SpecHash"
import { Effect, TestClock } from "effect"
import { sample } from "./LifecycleHarness.ts"
import { apiGroup, deployment, execution, remediationRequest, shop, workflowDoc, workflows, world } from "./ExecutionHarness.ts"

/** TestClock starts at 0; the dev API server stamps real times. */
const realTime = TestClock.setTime(Date.now())

describe("workflow execution: job engine", () => {
  it.scoped("creates the Job exactly as specified, then reads its success back", () =>
    Effect.gen(function* () {
      yield* realTime
      const w = yield* world()
      const id = yield* w.register(workflowDoc({ name: "rollback" }))
      yield* w.create(remediationRequest("rr-a", "checkout"))
      yield* w.create(execution("we-rr-a", "rr-a", "checkout", id))
      yield* w.reconcile("we-rr-a")

      const job = w.job("we-rr-a")!
      expect(job.metadata.labels).toMatchObject({
        [`${apiGroup}/remediation-request`]: "rr-a",
        [`${apiGroup}/workflow-execution`]: "we-rr-a",
        [`${apiGroup}/workflow-id`]: id
      })
      expect(job.metadata.annotations).toMatchObject({ [`${apiGroup}/remediation-request`]: "kubemend-system/rr-a" })
      expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 600 })
      const pod = job.spec.template.spec
      expect(pod).toMatchObject({ restartPolicy: "Never", serviceAccountName: "rollback-runner" })
      expect(pod.containers[0].image).toBe(`ghcr.io/kubemend/rollback@sha256:${"ab".repeat(32)}`)
      expect(pod.containers[0].env).toEqual([
        { name: "TARGET_NAME", value: "checkout" },
        { name: "TARGET_NAMESPACE", value: shop },
        { name: "TO_REVISION", value: "1" },
        { name: "ACTION_TYPE", value: "RollbackDeployment" }
      ])
      expect(w.we("we-rr-a")!.status).toMatchObject({
        phase: "Running",
        executionEngine: "job",
        executionRef: { name: "we-rr-a" },
        serviceAccountName: "rollback-runner",
        preRemediationSpecHash: specHash(deployment("checkout").spec)
      })

      yield* TestClock.adjust("42 seconds")
      w.finishJob("we-rr-a", 0)
      yield* w.reconcile("we-rr-a")
      expect(w.we("we-rr-a")!.status).toMatchObject({
        phase: "Completed",
        duration: "42s",
        executionStatus: { status: "True", reason: "Completed" },
        conditions: [expect.objectContaining({ type: "Ready", status: "True", reason: "Succeeded" })]
      })
      // The reference's workflow events, with what storage's success rate and durations read.
      const events = (yield* w.audit).filter((e) => e.event_type.startsWith("workflowexecution.workflow."))
      expect(events.map((e) => e.event_type)).toEqual(["workflowexecution.workflow.started", "workflowexecution.workflow.completed"])
      expect(events[1]).toMatchObject({
        correlation_id: "rr-a",
        event_data: { workflow_id: id, execution_ref: "we-rr-a", duration: "42s", phase: "Completed", execution_name: "we-rr-a" }
      })
      const { completed_at, started_at } = events[1]!.event_data as { started_at: string; completed_at: string }
      expect(Date.parse(completed_at) - Date.parse(started_at)).toBe(42_000)
      const metrics = yield* w.metrics
      expect(sample(metrics, "workflowexecution_reconciler_total", { outcome: "started" })).toBe(1)
      expect(sample(metrics, "workflowexecution_reconciler_total", { outcome: "completed" })).toBe(1)
      expect(metrics).toContain("workflowexecution_reconciler_duration_seconds_count{outcome=\"completed\"} 1")
    }), { timeout: 90_000 })

  it.scoped("a failed pod fails the execution with its exit code and a redacted log tail; bad parameters never run", () =>
    Effect.gen(function* () {
      yield* realTime
      const w = yield* world()
      const id = yield* w.register(workflowDoc({ name: "rollback" }))
      yield* w.create(execution("we-fail", "rr-fail", "checkout", id))
      yield* w.reconcile("we-fail")
      w.finishJob("we-fail", 3, "rolling back checkout\nlogin with password=hunter2 refused\nerror: deployments.apps \"checkout\" is forbidden")
      yield* w.reconcile("we-fail")
      const status = w.we("we-fail")!.status!
      expect(status).toMatchObject({
        phase: "Failed",
        failureDetails: { reason: "TaskFailed", exitCode: 3, wasExecutionFailure: true, failedTaskName: "we-fail" },
        executionStatus: { status: "False", reason: "BackoffLimitExceeded" }
      })
      expect(status["failureDetails"].logTail).toContain("forbidden")
      expect(status["failureDetails"].logTail).toContain("password=[REDACTED]")
      expect(status["failureDetails"].logTail).not.toContain("hunter2")
      expect((yield* w.audit).find((e) => e.event_type === "workflowexecution.workflow.failed")).toMatchObject({
        correlation_id: "rr-fail",
        event_outcome: "failure",
        event_data: { failure_reason: "TaskFailed", was_execution_failure: true }
      })

      yield* w.create(execution("we-bad", "rr-bad", "cart", id, { TO_REVISION: "two", EXTRA: "x" }))
      yield* w.reconcile("we-bad")
      expect(w.we("we-bad")!.status).toMatchObject({
        phase: "Failed",
        failureDetails: { reason: "ConfigurationError", wasExecutionFailure: false }
      })
      expect(w.we("we-bad")!.status!["failureReason"]).toBe(
        "parameters rejected: EXTRA is not a parameter of this workflow; TO_REVISION must be an integer, got \"two\""
      )
      expect(w.job("we-bad")).toBeUndefined()
    }), { timeout: 90_000 })

  it.scoped("a run past the executing timeout is stopped and fails DeadlineExceeded", () =>
    Effect.gen(function* () {
      yield* realTime
      const w = yield* world()
      const id = yield* w.register(workflowDoc({ name: "rollback" }))
      yield* w.create(execution("we-slow", "rr-slow", "checkout", id))
      yield* w.reconcile("we-slow")
      expect(w.job("we-slow")).toBeDefined()
      yield* TestClock.adjust("9 minutes")
      yield* w.reconcile("we-slow")
      expect(w.we("we-slow")!.status!["phase"]).toBe("Running")
      yield* TestClock.adjust("1 minute")
      yield* w.reconcile("we-slow")
      expect(w.we("we-slow")!.status).toMatchObject({ phase: "Failed", duration: "10m", failureDetails: { reason: "DeadlineExceeded" } })
      expect(w.job("we-slow")).toBeUndefined()
    }), { timeout: 90_000 })

  it.scoped("an engine that is not enabled fails at once and says which", () =>
    Effect.gen(function* () {
      yield* realTime
      const w = yield* world()
      for (const engine of ["tekton", "ansible"]) {
        const id = yield* w.register(workflowDoc({ name: `via-${engine}`, engine }))
        yield* w.create(execution(`we-${engine}`, `rr-${engine}`, "checkout", id))
        yield* w.reconcile(`we-${engine}`)
        expect(w.we(`we-${engine}`)!.status).toMatchObject({ phase: "Failed", failureDetails: { reason: "UnsupportedEngine", wasExecutionFailure: false } })
        expect(w.we(`we-${engine}`)!.status!["failureReason"]).toContain(`execution engine ${engine} is not enabled`)
      }
      expect(w.kube.list("batch/v1", "Job", workflows)).toHaveLength(0)
    }), { timeout: 90_000 })

  it.scoped("one running execution per target; the same workflow cools down after it completed there", () =>
    Effect.gen(function* () {
      yield* realTime
      const w = yield* world()
      const id = yield* w.register(workflowDoc({ name: "rollback" }))
      yield* w.create(execution("we-first", "rr-first", "checkout", id))
      yield* w.reconcile("we-first")
      yield* w.create(execution("we-second", "rr-second", "checkout", id))
      yield* w.reconcile("we-second")
      expect(w.we("we-second")!.status).toMatchObject({
        phase: "Pending",
        conditions: [
          expect.objectContaining({ type: "Ready", reason: "ResourceBusy", message: "workflow execution we-first is running on shop/Deployment/checkout" })
        ]
      })
      expect(w.job("we-second")).toBeUndefined()

      w.finishJob("we-first", 0)
      yield* w.reconcile("we-first")
      yield* w.reconcile("we-second")
      expect(w.we("we-second")!.status!["conditions"][0]).toMatchObject({ reason: "RecentlyRemediated" })
      expect(w.job("we-second")).toBeUndefined()
      yield* TestClock.adjust("5 minutes")
      yield* w.reconcile("we-second")
      expect(w.we("we-second")!.status!["phase"]).toBe("Running")
      expect(w.job("we-second")).toBeDefined()
    }), { timeout: 90_000 })

  it.scoped("cancellation: an execution failed by its request's cascade deletes its Job", () =>
    Effect.gen(function* () {
      yield* realTime
      const w = yield* world()
      const id = yield* w.register(workflowDoc({ name: "rollback" }))
      yield* w.create(execution("we-cancel", "rr-cancel", "checkout", id))
      yield* w.reconcile("we-cancel")
      expect(w.job("we-cancel")).toBeDefined()
      const we = w.we("we-cancel")!
      w.kube.put({ ...we, status: { ...we.status, phase: "Failed", failureReason: "parent remediation Cancelled" } })
      yield* w.reconcile("we-cancel")
      expect(w.job("we-cancel")).toBeUndefined()
      expect(w.we("we-cancel")!.status!["phase"]).toBe("Failed")
    }), { timeout: 90_000 })
})
