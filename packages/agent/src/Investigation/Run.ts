/**
 * The working state of one investigation run (or one interactive conversation): the conversation, tool budgets,
 * corrections given, validation attempts and what owner resolution found. One fiber owns it, so it is a plain
 * mutable object.
 */
import type { HumanReviewReason } from "@kubemend/core/domain/AIAnalysis"
import type { Message } from "@kubemend/core/Llm"
import type { Session } from "../Sessions/Session.ts"

export interface TargetRef {
  readonly apiVersion?: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string
}

export interface Escalation {
  readonly reason: HumanReviewReason
  readonly summary: string
}

export interface ValidationRecord {
  readonly attempt: number
  readonly workflow_id?: string
  readonly is_valid: boolean
  readonly errors: ReadonlyArray<string>
  readonly timestamp: string
}

export interface Finding {
  readonly step_index: number
  readonly step_kind: "llm_reasoning" | "tool_result" | "signal_input"
  readonly tool?: string
  readonly explanation: string
}

export interface WorkflowSeen {
  readonly workflowId: string
  readonly name: string
  readonly actionType: string
  readonly version?: string
  readonly executionBundle?: string
}

/** Which tools the model is offered: the root-cause phase's, the workflow phase's, or all (interactive). */
export type Toolset = "rca" | "workflow" | "all"

export interface RunState {
  readonly session: Session
  toolset: Toolset
  readonly messages: Array<Message>
  turns: number
  readonly toolCalls: Map<string, number>
  totalToolCalls: number
  readonly consecutiveFailures: Map<string, number>
  ambiguousOmissions: number
  readonly warnings: Array<string>
  readonly validations: Array<ValidationRecord>
  remediationTarget: TargetRef | undefined
  ownerChain: ReadonlyArray<TargetRef>
  /** Workflows the catalog showed during this run, by id. */
  readonly discovered: Map<string, WorkflowSeen>
  /** Shadow agent: steps reviewed and the suspicious ones. */
  alignmentSteps: number
  readonly findings: Array<Finding>
  /** Set by a tool or the shadow agent: stop and hand the investigation to a human. */
  escalation: Escalation | undefined
  circuitBreakerActivated: boolean
}

export const makeRun = (session: Session, messages: ReadonlyArray<Message>): RunState => ({
  session,
  toolset: "all",
  messages: [...messages],
  turns: 0,
  toolCalls: new Map(),
  totalToolCalls: 0,
  consecutiveFailures: new Map(),
  ambiguousOmissions: 0,
  warnings: [],
  validations: [],
  remediationTarget: undefined,
  ownerChain: [],
  discovered: new Map(),
  alignmentSteps: 0,
  findings: [],
  escalation: undefined,
  circuitBreakerActivated: false
})

export const addWarning = (run: RunState, warning: string) => {
  if (!run.warnings.includes(warning)) run.warnings.push(warning)
}
