/**
 * The InvestigationSession resources the gateway keeps for interactive investigations, following the agent's real
 * session state: one is created `Active` for the user once the agent accepted their start (never before, so a
 * refused start leaves no lock behind), and every agent answer about the session moves it on (`Completed`,
 * `Cancelled`, `Disconnected`, `Failed`). A resource that still reads `Active` for another user is checked against
 * the agent before it refuses anyone: when the agent no longer has that user driving the session, the resource is
 * settled to what the agent says and the caller is let in.
 *
 * Over MCP the same moments are audited as A2A audits its blocking investigation: `ka.delegated` when the agent
 * accepted the start (or takeover), `ka.result_received` and `session.completed` (with `duration_ms`) when the
 * agent's answer ends the session. A2A calls are left to A2A's own events (A2a/Investigate.ts), so none doubles.
 */
import { Clock, Effect } from "effect"
import { randomBytes } from "node:crypto"
import { K8s, type KubeObject } from "@kubemend/core/K8s"
import type { InvestigationSessionPhase } from "@kubemend/core/domain/InvestigationSession"
import { ToolError } from "@kubemend/core/ToolError"
import { GatewayAudit } from "../GatewayAudit.ts"
import type { ToolContext } from "../Mcp/Tool.ts"
import { k8sFailure, record, specOf, statusOf, str } from "./Common.ts"

/** The resource phase an agent answer stands for; undefined when it says nothing about the caller's session. */
export const phaseOfAgent = (answer: Record<string, unknown>): InvestigationSessionPhase | undefined => {
  switch ((str(answer.status) ?? "").toLowerCase()) {
    case "active":
    case "selected":
      return "Active"
    case "completed":
    case "completed_no_action":
    case "escalated":
      return "Completed"
    case "cancelled":
    case "canceled":
      return "Cancelled"
    case "disconnected":
      return "Disconnected"
    case "failed":
      return "Failed"
    default:
      return undefined
  }
}

const rrOf = (s: KubeObject) => str(record(specOf(s).remediationRequestRef).name)
const userOf = (s: KubeObject) => str(record(specOf(s).userIdentity).username)
const isActive = (s: KubeObject) => (str(statusOf(s).phase) ?? "Active") === "Active"

const viaMcp = (ctx: ToolContext) => ctx.caller.endpoint === "/mcp"

export const sessionRecords = Effect.gen(function* () {
  const k8s = yield* K8s
  const audit = yield* GatewayAudit
  const unavailable = k8sFailure("investigation sessions")
  const now = Effect.map(Clock.currentTimeMillis, (t) => new Date(t).toISOString())

  const activeOn = (rr: string) =>
    k8s.listCr("investigationsessions").pipe(
      Effect.mapError(unavailable),
      Effect.map((list) => list.items.filter((s) => rrOf(s) === rr && isActive(s)))
    )

  /** Moves `sessions` to `phase` (best effort: the agent's state is the truth, the resource its record). */
  const settle = (sessions: ReadonlyArray<KubeObject>, phase: InvestigationSessionPhase, message?: string) =>
    Effect.flatMap(now, (at) =>
      Effect.forEach(sessions, (s) =>
        k8s.patchCrStatus("investigationsessions", s.metadata.name, {
          phase,
          ...(phase === "Disconnected" ? { disconnectedAt: at, connectionState: "Disconnected" } : { completedAt: at }),
          ...(message === undefined ? {} : { message })
        }).pipe(Effect.catchAll((e) => Effect.logWarning("could not update an InvestigationSession", e))), { discard: true }))

  /** `user`'s Active session on `rr` exists (created once the agent accepted the start). */
  const ensure = (rr: string, ctx: ToolContext, sessionId: string | undefined, takeover: boolean) =>
    Effect.gen(function* () {
      const user = ctx.caller.principal.user
      const active = yield* activeOn(rr)
      // A takeover abandons the previous holder's session (document 1): their record is no longer Active.
      if (takeover) yield* settle(active.filter((s) => userOf(s) !== user), "Disconnected", `taken over by ${user}`)
      if (active.some((s) => userOf(s) === user)) return
      const name = `${rr}-${randomBytes(3).toString("hex")}`.slice(0, 253)
      yield* k8s.createCr("investigationsessions", {
        apiVersion: `${k8s.apiGroup}/v1alpha1`,
        kind: "InvestigationSession",
        metadata: { name, namespace: k8s.namespace, labels: { [`${k8s.apiGroup}/remediation-request`]: rr.slice(0, 63) } },
        spec: {
          remediationRequestRef: { name: rr, namespace: k8s.namespace },
          userIdentity: { username: user, groups: [...ctx.caller.principal.groups] },
          joinMode: takeover ? "takeover" : "start",
          ...(ctx.sessionId === undefined ? {} : { a2aTaskID: ctx.sessionId })
        }
      }).pipe(Effect.mapError((e) =>
        e._tag === "K8sConflict"
          ? new ToolError({ message: "investigation session already exists, please retry", code: "conflict" })
          : unavailable(e)
      ))
      const at = yield* now
      // Status is a subresource: the create ignores it.
      yield* k8s.patchCrStatus("investigationsessions", name, {
        phase: "Active",
        startedAt: at,
        leaseHolder: user,
        leaseAcquiredAt: at,
        connectionState: "Connected",
        ...(sessionId === undefined || sessionId === "" ? {} : { kaCorrelationID: sessionId })
      }).pipe(Effect.ignore)
      if (viaMcp(ctx)) {
        yield* audit.emit({
          type: "ka.delegated",
          outcome: "success",
          userId: user,
          clientIp: ctx.caller.clientIp,
          correlationId: rr,
          data: { session_id: sessionId ?? "", rr_id: rr, mcp_session_id: ctx.sessionId ?? "", join_mode: takeover ? "takeover" : "start" }
        })
      }
    })

  /** The audit of `user`'s MCP session ending in `phase` as the agent answered. */
  const ended = (rr: string, ctx: ToolContext, session: KubeObject, phase: InvestigationSessionPhase, answer: Record<string, unknown>) =>
    Effect.gen(function* () {
      const end = yield* Clock.currentTimeMillis
      const started = Date.parse(str(statusOf(session).startedAt) ?? "")
      const durationMs = Number.isNaN(started) ? 0 : Math.max(0, end - started)
      const sessionId = str(answer.session_id) ?? str(statusOf(session).kaCorrelationID) ?? ""
      const status = str(answer.status) ?? phase.toLowerCase()
      const base = { userId: ctx.caller.principal.user, clientIp: ctx.caller.clientIp, correlationId: rr }
      yield* audit.emit({
        ...base,
        type: "ka.result_received",
        outcome: phase === "Failed" ? "failure" : "success",
        data: { session_id: sessionId, rr_id: rr, status }
      })
      yield* audit.emit({
        ...base,
        type: "session.completed",
        outcome: phase === "Completed" ? "success" : "failure",
        durationMs,
        data: {
          session_id: sessionId,
          rr_id: rr,
          terminal_phase: status,
          duration_ms: durationMs,
          join_mode: str(specOf(session).joinMode) ?? "start",
          user_identity: ctx.caller.principal.user,
          mcp_session_id: ctx.sessionId ?? ""
        }
      })
    })

  /** Records what the agent answered about `user`'s session on `rr`. */
  const follow = (rr: string, ctx: ToolContext, answer: Record<string, unknown>, takeover = false) =>
    Effect.gen(function* () {
      const phase = phaseOfAgent(answer)
      if (phase === undefined) return
      const holder = str(answer.holder)
      const user = ctx.caller.principal.user
      if (phase === "Active") {
        // A status read by someone who is not driving says nothing about a session of theirs.
        if (holder !== undefined && holder !== user) return
        return yield* ensure(rr, ctx, str(answer.session_id), takeover)
      }
      const mine = (yield* activeOn(rr)).filter((s) => userOf(s) === user)
      yield* settle(mine, phase, str(answer.message))
      // Once per session: the record is no longer Active after this.
      if (viaMcp(ctx) && phase !== "Disconnected") yield* Effect.forEach(mine, (s) => ended(rr, ctx, s, phase, answer), { discard: true })
    }).pipe(Effect.catchAll((e) => Effect.logWarning("could not record the investigation session", e)))

  /**
   * Another user's Active session on `rr` that the agent confirms (`agentStatus` answers the session's state);
   * resources the agent contradicts are settled on the way.
   */
  const activeOfOther = <E>(rr: string, user: string, agentStatus: Effect.Effect<Record<string, unknown>, E>) =>
    Effect.gen(function* () {
      const others = (yield* activeOn(rr)).filter((s) => userOf(s) !== user)
      if (others.length === 0) return undefined
      // The agent unreachable: the record stands (refusing is the safe side).
      const real = yield* Effect.option(agentStatus)
      if (real._tag === "None") return others[0]
      const status = str(real.value.status)
      const holder = str(real.value.holder)
      const live = others.filter((s) => status === "active" && (holder === undefined || holder === userOf(s)))
      const stale = others.filter((s) => !live.includes(s))
      const ended = phaseOfAgent(real.value)
      if (stale.length > 0) {
        yield* settle(stale, ended === undefined || ended === "Active" ? "Disconnected" : ended, "the agent no longer has this user driving the session")
      }
      return live[0]
    })

  return { ensure, follow, activeOfOther } as const
})
