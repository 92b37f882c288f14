/**
 * The WorkflowExecution status bodies the controller writes (merge patches of the status subresource), with the
 * `Ready` condition the reference CRD's printer column reads its reason from.
 */
import { formatGoDuration } from "@kubemend/core/Config"
import { Duration, Option } from "effect"
import { iso, millisOf, type WorkflowExecution } from "../remediation/Objects.ts"
import { mergeConditions } from "../runtime/Conditions.ts"
import type { FailureReason, Observation } from "../clients/Engine.ts"

const ready = (we: WorkflowExecution, now: number, status: "True" | "False" | "Unknown", reason: string, message: string) =>
  mergeConditions(we.status?.conditions, [{ type: "Ready", status, reason, message }], iso(now), we.metadata.generation)

const elapsed = (we: WorkflowExecution, now: number) =>
  Option.map(millisOf(we.status?.startTime), (start) => formatGoDuration(Duration.millis(Math.max(0, now - start))))

/** Waiting before the run: the target is held by another execution, or cooling down. */
export const waiting = (we: WorkflowExecution, now: number, reason: "ResourceBusy" | "RecentlyRemediated", message: string) => ({
  phase: "Pending",
  conditions: ready(we, now, "Unknown", reason, message)
})

export const started = (
  we: WorkflowExecution,
  now: number,
  fields: { readonly engine: string; readonly ref: string; readonly serviceAccountName?: string; readonly preRemediationSpecHash?: string }
) => ({
  phase: "Running",
  startTime: iso(now),
  executionEngine: fields.engine,
  executionRef: { name: fields.ref },
  executionStatus: { status: "Unknown", reason: "Running" },
  ...(fields.serviceAccountName === undefined ? {} : { serviceAccountName: fields.serviceAccountName }),
  ...(fields.preRemediationSpecHash === undefined ? {} : { preRemediationSpecHash: fields.preRemediationSpecHash }),
  conditions: ready(we, now, "Unknown", "Running", `${fields.engine} ${fields.ref} started`)
})

export const succeeded = (we: WorkflowExecution, now: number, o: Extract<Observation, { _tag: "Succeeded" }>) => ({
  phase: "Completed",
  completionTime: iso(now),
  ...Option.match(elapsed(we, now), { onNone: () => ({}), onSome: (duration) => ({ duration }) }),
  executionStatus: {
    status: "True",
    reason: o.reason,
    message: o.message,
    ...(o.completedTasks === undefined ? {} : { completedTasks: o.completedTasks }),
    ...(o.totalTasks === undefined ? {} : { totalTasks: o.totalTasks })
  },
  conditions: ready(we, now, "True", "Succeeded", o.message)
})

export interface Failure {
  readonly reason: FailureReason
  readonly message: string
  readonly engineReason?: string
  readonly taskName?: string
  readonly exitCode?: number
  readonly logTail?: string
  /** True when the workflow ran (the target may have been changed). */
  readonly wasExecutionFailure: boolean
}

export const failed = (we: WorkflowExecution, now: number, f: Failure) => {
  const took = elapsed(we, now)
  const workflow = we.spec.workflowRef.workflowName ?? we.spec.workflowRef.workflowId
  return {
    phase: "Failed",
    completionTime: iso(now),
    ...Option.match(took, { onNone: () => ({}), onSome: (duration) => ({ duration }) }),
    failureReason: f.message,
    failureDetails: {
      failedAt: iso(now),
      failedTaskIndex: 0,
      failedTaskName: f.taskName ?? "",
      reason: f.reason,
      message: f.message,
      naturalLanguageSummary: `Workflow ${workflow} on ${we.spec.targetResource} ${
        f.wasExecutionFailure ? "failed while running" : "did not run"
      }: ${f.message}`,
      wasExecutionFailure: f.wasExecutionFailure,
      ...(f.exitCode === undefined ? {} : { exitCode: f.exitCode }),
      ...Option.match(took, { onNone: () => ({}), onSome: (d) => ({ executionTimeBeforeFailure: d }) }),
      ...(f.logTail === undefined ? {} : { logTail: f.logTail })
    },
    ...(f.engineReason === undefined ? {} : { executionStatus: { status: "False", reason: f.engineReason, message: f.message } }),
    conditions: ready(we, now, "False", f.reason, f.message)
  }
}
