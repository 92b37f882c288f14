/**
 * `svc_investigate` in A2A mode (document 1, behaviour rule 4): the bridge's tool starts the investigation, then
 * the call blocks until the investigation produced its result and answers with the RCA summary. The agent keeps an
 * interactive session `active` after its analysis answered (the user may go on: message, discover, select,
 * complete), so "finished" is the agent's `analysis` reading `answered` (or `failed`/`stopped`), or the session
 * ending. The wait is the agent's `follow` action, which also carries the live events to the task through the
 * link's notifications (`investigation` events); bounded by `investigationTimeout`. Audited as `ka.delegated`,
 * `ka.result_received` and `session.completed` (the investigation's, not the interactive session's, completion).
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { K8s } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"
import { GatewayAudit } from "../GatewayAudit.ts"
import type { ToolContext, ToolDef } from "../Mcp/Tool.ts"
import { record, specOf, statusOf, str } from "../Tools/Common.ts"
import { A2aConfig } from "./Config.ts"

/** Agent session states after which nothing more happens. */
const finished = new Set(["completed", "failed", "cancelled", "canceled", "completed_no_action", "escalated", "disconnected", "error", "timeout"])

/** The investigation produced its result: the session ended, or its analysis is no longer running. */
const settled = (r: Record<string, unknown>) => {
  const analysis = str(r.analysis)
  return finished.has((str(r.status) ?? "").toLowerCase()) || (analysis !== undefined && analysis !== "running")
}

/** What the A2A caller is told: `completed` with the RCA, else why there is none. */
const outcomeOf = (r: Record<string, unknown>) => {
  const status = (str(r.status) ?? "completed").toLowerCase()
  const analysis = str(r.analysis)
  return status === "active" ? (analysis === "answered" ? "completed" : analysis === "failed" ? "failed" : "cancelled") : status
}

const summaryOf = (r: Record<string, unknown>): string | undefined =>
  str(r.summary) ?? str(record(r.root_cause_analysis).summary) ?? str(record(r.rca).summary) ?? str(r.root_cause) ?? str(r.message)

class StillRunning {
  readonly _tag = "StillRunning"
}

export const blockingInvestigate = (bridge: ToolDef) =>
  Effect.gen(function* () {
    const config = yield* A2aConfig
    const k8s = yield* K8s
    const audit = yield* GatewayAudit

    /** The RCA the analysis wrote, when the agent's answer carries no summary. */
    const rcaOf = (rrId: string) =>
      k8s.listCr("aianalyses").pipe(
        Effect.map((list) => list.items.find((a) => str(record(specOf(a).remediationRequestRef).name) === rrId)),
        Effect.map((a) => {
          const rca = a === undefined ? undefined : statusOf(a).rootCauseAnalysis
          return typeof rca === "string" ? rca : rca === undefined ? undefined : summaryOf(record(rca)) ?? JSON.stringify(rca)
        }),
        Effect.orElseSucceed(() => undefined)
      )

    const waitFor = (rrId: string, ctx: ToolContext) => {
      const acting = { user: ctx.caller.principal.user, groups: ctx.caller.principal.groups, token: ctx.caller.token }
      // `follow` answers when the analysis settles (or at the agent's own bound); the spacing only paces retries.
      const poll = ctx.agent.call("investigate", { rr_id: rrId, action: "follow" }, acting, config.investigationTimeout).pipe(
        Effect.map(record),
        Effect.flatMap((r) => (settled(r) ? Effect.succeed(r) : Effect.fail(new StillRunning())))
      )
      return poll.pipe(
        Effect.retry({ while: (e) => e instanceof StillRunning, schedule: Schedule.spaced(config.investigationPollInterval) }),
        Effect.timeoutFail({
          duration: config.investigationTimeout,
          onTimeout: () =>
            new ToolError({
              message: `the investigation of ${rrId} did not finish within ${Duration.format(config.investigationTimeout)}`,
              kind: "timeout",
              code: "timeout"
            })
        }),
        Effect.catchIf((e): e is StillRunning => e instanceof StillRunning, () => Effect.die("unreachable"))
      )
    }

    const run = (input: unknown, ctx: ToolContext) =>
      Effect.gen(function* () {
        const started = record(yield* bridge.run(input, ctx))
        const rrId = str(started.rr_id)
        if (rrId === undefined || started.status === "session_active") return started
        if (str(started.analysis) === undefined) started.analysis = "running"
        const sessionId = str(started.session_id) ?? ""
        const begin = yield* Clock.currentTimeMillis
        const base = { userId: ctx.caller.principal.user, clientIp: ctx.caller.clientIp, correlationId: rrId }
        yield* audit.emit({
          ...base,
          type: "ka.delegated",
          outcome: "success",
          data: { session_id: sessionId, rr_id: rrId, a2a_context_id: ctx.sessionId ?? "" }
        })
        const result = settled(started) ?
          started :
          yield* waitFor(rrId, ctx).pipe(
            Effect.tapError((e) =>
              audit.emit({ ...base, type: "ka.result_received", outcome: "failure", data: { session_id: sessionId, rr_id: rrId, error: e.message } })
            )
          )
        const status = outcomeOf(result)
        const summary = summaryOf(result) ?? (yield* rcaOf(rrId)) ?? ""
        const durationMs = (yield* Clock.currentTimeMillis) - begin
        yield* audit.emit({ ...base, type: "ka.result_received", outcome: "success", data: { session_id: sessionId, rr_id: rrId, status } })
        yield* audit.emit({
          ...base,
          type: "session.completed",
          outcome: status === "completed" ? "success" : "failure",
          durationMs,
          data: {
            session_id: sessionId,
            rr_id: rrId,
            terminal_phase: status,
            duration_ms: durationMs,
            join_mode: "a2a",
            user_identity: ctx.caller.principal.user
          }
        })
        return {
          session_id: str(result.session_id) ?? sessionId,
          status,
          summary,
          rr_id: rrId,
          // Still `active` after an answered analysis: the user can select a workflow and complete, or cancel.
          session_status: str(result.status) ?? status
        }
      })

    return {
      ...bridge,
      description: `${bridge.description} In this agent the call waits until the investigation has finished and answers its root-cause summary.`,
      // The pipeline's deadline must not cut the wait short.
      timeout: Duration.sum(config.investigationTimeout, Duration.seconds(30)),
      run
    } satisfies ToolDef
  })
