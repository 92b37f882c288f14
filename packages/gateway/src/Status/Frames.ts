/**
 * The status stream's wire format (document 1 "Events"; reference facts §1): each event is an SSE block
 * `event: <method>` + `data: <JSON-RPC notification>`, keepalives are comment lines. Frames are encoded once and the
 * same bytes go to every subscriber of an RR.
 */
import { isTerminalPhase } from "@kubemend/core/domain/Phases"
import { notification } from "@kubemend/core/JsonRpc"
import type { KubeObject } from "@kubemend/core/K8s"
import type { InvestigationEvent } from "../AgentEvents.ts"

const encoder = new TextEncoder()

const record = (u: unknown): Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : {}

const text = (u: unknown): string | undefined => (typeof u === "string" && u !== "" ? u : undefined)

/** `status.overallPhase`, `Pending` until the orchestrator sets one; the original's `Executing` reads as `Running`. */
export const phaseOf = (rr: KubeObject): string => {
  const phase = text(record(rr.status).overallPhase) ?? "Pending"
  return phase === "Executing" ? "Running" : phase
}

const compact = (o: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => e[1] !== undefined))

/** The phase's metadata: target identity always, then what the phase is about (reference facts §1). */
export const phaseMetadata = (rr: KubeObject, phase: string): Record<string, string> => {
  const spec = record(rr.spec)
  const status = record(rr.status)
  const target = record(spec.targetResource)
  const base = {
    namespace: text(target.namespace),
    target: text(target.name),
    kind: text(target.kind),
    alert_name: text(spec.signalName)
  }
  switch (phase) {
    case "Running":
      return compact({
        ...base,
        workflow_id: text(record(status.selectedWorkflowRef).workflowId),
        started_at: text(status.executingStartTime)
      })
    case "Verifying":
      return compact({ ...base, verification_deadline: text(status.verificationDeadline), started_at: text(status.executingStartTime) })
    case "Blocked":
      return compact({
        ...base,
        blocked_until: text(status.blockedUntil),
        block_reason: text(status.blockReason),
        block_message: text(status.blockMessage)
      })
    case "AwaitingApproval":
      return compact({ ...base, approval_request_name: `rar-${rr.metadata.name}` })
    case "Completed":
      return compact({ ...base, outcome: text(status.outcome) })
    case "Failed":
      return compact({ ...base, failure_reason: text(status.failureReason), failure_phase: text(status.failurePhase) })
    case "TimedOut":
      return compact({ ...base, failure_phase: text(status.timeoutPhase) ?? text(status.failurePhase) })
    case "Skipped":
      return compact({ ...base, skip_reason: text(status.skipReason) })
    default:
      return compact(base)
  }
}

/** RFC 3339 UTC without fractions, as the original sends. */
export const timestampOf = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

const block = (method: string, params: unknown): Uint8Array => encoder.encode(`event: ${method}\ndata: ${JSON.stringify(notification(method, params))}\n\n`)

export interface UpdateFrame {
  readonly phase: string
  readonly final: boolean
  readonly bytes: Uint8Array
}

export const updateFrame = (rr: KubeObject, nowMillis: number): UpdateFrame => {
  const phase = phaseOf(rr)
  const final = isTerminalPhase(phase)
  const metadata = phaseMetadata(rr, phase)
  return {
    phase,
    final,
    bytes: block("status/update", {
      rr_id: rr.metadata.name,
      phase,
      timestamp: timestampOf(nowMillis),
      final,
      ...(Object.keys(metadata).length === 0 ? {} : { metadata })
    })
  }
}

/**
 * An investigation event of the RR (AgentEvents.ts): what happened in one line, and for `interactive_state` who
 * holds the session and where its analysis is. The event's other fields (tool arguments, output) stay with the
 * holder's MCP session.
 */
export const investigationFrame = (e: InvestigationEvent): Uint8Array => {
  // When the agent recorded it.
  const at = typeof e["timestamp"] === "string" ? Date.parse(e["timestamp"]) : Number.NaN
  return block("status/investigation", {
    rr_id: e.rr_id,
    session_id: e.session_id,
    seq: e.seq,
    event: e.event,
    message: e.message,
    ...(Number.isFinite(at) ? { timestamp: timestampOf(at) } : {}),
    ...(typeof e["holder"] === "string" ? { holder: e["holder"] } : {}),
    ...(typeof e["analysis"] === "string" ? { analysis: e["analysis"] } : {})
  })
}

/** Why a stream is closed by the gateway; clients reconnect (with a fresh token for `token_expiry`). */
export type ClosingReason = "token_expiry" | "shutdown"

export const closingFrame = (reason: ClosingReason): Uint8Array => block("status/closing", { reason, reconnect: true })

export const keepaliveFrame: Uint8Array = encoder.encode(": keepalive\n\n")
