/**
 * What the local platform's scripted model answers, per demo signal (the agent's incident prompt names it as
 * `signal_name: …`): each investigation looks at the cluster, then selects a workflow of the demo catalog by its real
 * id with parameters its schema accepts, at a confidence that decides the route. `HighLatencyP99` stays below the
 * 0.8 auto-approval threshold (a RAR appears for the approver persona), `PersistentVolumeFillingUp` has no fitting
 * workflow (manual review), the others run on their own. Interactive investigations get a conversational answer.
 */
import type { Script, ScriptedTurn } from "@kubemend/devkit/ScriptedLlm"
import { workflowIdOf } from "./Demo.ts"

/** A signal whose investigation needs a human approval (confidence below the threshold). */
export const approvalSignal = "HighLatencyP99"
/** A signal whose investigation is approved automatically (confidence above the threshold). */
export const autonomousSignal = "KubePodCrashLooping"
/** The confidences the two routes get. */
export const approvalConfidence = 0.65
export const autonomousConfidence = 0.92

const look: ReadonlyArray<ScriptedTurn> = [
  {
    text: "Listing pods in the affected namespace.",
    toolCalls: [{ name: "cluster_list", arguments: { kind: "Pod", api_version: "v1", namespace: "{{resource_namespace|default}}" } }]
  },
  {
    toolCalls: [{
      name: "cluster_get",
      arguments: {
        kind: "{{resource_kind|Deployment}}",
        api_version: "{{resource_api_version|apps/v1}}",
        namespace: "{{resource_namespace|default}}",
        name: "{{resource_name|unknown}}"
      }
    }]
  }
]

interface Finding {
  readonly signal?: string
  readonly rootCause: string
  readonly factors: ReadonlyArray<string>
  readonly confidence: number
  /** A demo catalog workflow, or none (the answer then asks for a human review). */
  readonly workflow?: string
  readonly rationale?: string
}

const investigation = (f: Finding): Script => ({
  name: `local-${f.signal ?? "default"}`,
  ...(f.signal === undefined ? {} : { match: `signal_name: ${f.signal}` }),
  turns: [
    ...look,
    {
      json: {
        root_cause: f.rootCause,
        root_cause_analysis: { summary: f.rootCause, severity: "{{severity|high}}", contributing_factors: f.factors },
        confidence: f.confidence,
        ...(f.workflow === undefined
          ? {
            investigation_outcome: "inconclusive",
            actionable: true,
            selected_workflow: null,
            needs_human_review: true,
            human_review_reason: "no_matching_workflows"
          }
          : {
            investigation_outcome: "workflow_selected",
            actionable: true,
            selected_workflow: {
              workflow_id: workflowIdOf(f.workflow),
              confidence: f.confidence,
              rationale: f.rationale ?? "",
              parameters: { TARGET_NAME: "{{resource_name|unknown}}", TARGET_NAMESPACE: "{{resource_namespace|default}}" }
            }
          })
      }
    }
  ]
})

const interactive: Script = {
  name: "local-interactive",
  match: "signal_name: InteractiveInvestigation",
  turns: [
    look[1]!,
    {
      text: "{{resource_kind|The workload}} {{resource_namespace|default}}/{{resource_name|unknown}}: its pods restart after " +
        "running out of memory (OOMKilled, exit 137). Raising the memory limit is the lasting fix; restarting the pods " +
        "only buys time. Discover the workflows to pick one."
    }
  ]
}

/** What an A2A chat asks to get an investigation: the gateway's model then investigates the named workload. */
export const a2aInvestigationAsk = "Investigate this workload and tell me its root cause"

/**
 * The gateway's A2A model for a chat that asks for an investigation (`<ask> api_version: …, namespace: …, kind: …,
 * name: …`): it calls `svc_investigate` on the target, which waits for the agent's analysis, then answers.
 */
const a2aChat: Script = {
  name: "local-a2a-chat",
  match: a2aInvestigationAsk,
  turns: [
    {
      text: "Starting an investigation of the workload.",
      toolCalls: [{
        name: "svc_investigate",
        arguments: { api_version: "{{api_version|apps/v1}}", namespace: "{{namespace|default}}", kind: "{{kind|Deployment}}", name: "{{name|unknown}}" }
      }]
    },
    {
      text:
        "The investigation of {{kind|the workload}} {{namespace|default}}/{{name|unknown}} has finished; the agent's root cause analysis is in the investigation's events above."
    }
  ]
}

export const localScripts: ReadonlyArray<Script> = [
  interactive,
  a2aChat,
  investigation({
    signal: autonomousSignal,
    rootCause: "{{resource_name|the workload}} is OOMKilled: its memory limit is below the working set",
    factors: ["memory limit reached", "repeated restarts (exit 137)"],
    confidence: autonomousConfidence,
    workflow: "increase-memory-limit",
    rationale: "raise the limit above the observed working set"
  }),
  investigation({
    signal: approvalSignal,
    rootCause: "{{resource_name|the workload}} latency regressed with its latest rollout",
    factors: ["p99 latency above 2s since the last rollout", "no resource pressure on the nodes"],
    confidence: approvalConfidence,
    workflow: "rollback-deployment",
    rationale: "the regression started with the last revision; rolling back is reversible"
  }),
  investigation({
    signal: "KubeDeploymentReplicasMismatch",
    rootCause: "{{resource_name|the workload}} pods are stuck after a node drain",
    factors: ["replicas unavailable", "pods pending on a cordoned node"],
    confidence: 0.86,
    workflow: "restart-pod",
    rationale: "recreating the pods lets the scheduler place them"
  }),
  investigation({
    signal: "PersistentVolumeFillingUp",
    rootCause: "{{resource_name|the volume}} fills with write-ahead logs that are never archived",
    factors: ["volume 92% full", "WAL archiving disabled"],
    confidence: 0.7
  }),
  investigation({
    rootCause: "{{resource_name|the workload}} is unhealthy; a restart clears its bad state",
    factors: ["failing readiness probe"],
    confidence: 0.85,
    workflow: "restart-pod",
    rationale: "a restart is the least invasive fix"
  })
]
