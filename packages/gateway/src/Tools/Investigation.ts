/**
 * Agent-backed tools: interactive investigations forwarded to the agent's MCP server as the acting user
 * (AgentSessionsClient.ts). `svc_investigate` on a target first creates the RemediationRequest through the K8s layer
 * (ServiceAccounts may not), and answers a structured `session_active` result when another user drives the RR's
 * investigation (the agent's lease says so; `join_mode: "takeover"` takes it over). It returns once the agent
 * accepted the start; the agent's live events reach the caller's MCP session as `notifications/message` over SSE,
 * during a call and, for a session the caller holds, after it (the session link follows it, AgentEvents.ts). Every
 * agent answer about a session moves its InvestigationSession resource on (SessionRecords.ts).
 */
import { Effect, Schema } from "effect"
import { isTerminalPhase } from "@kubemend/core/domain/Phases"
import { K8s } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"
import { defineTool, type ToolContext } from "../Mcp/Tool.ts"
import { ApiVersion, k8sFailure, KindName, NamespaceName, optional, record, ResourceName, specOf, statusOf, str, Text } from "./Common.ts"
import { sessionRecords } from "./SessionRecords.ts"
import { requestOnTarget } from "./Target.ts"

/** Longest `svc_message` text (spec document 1). */
export const maxMessageChars = 10_240

const RrAction = Schema.Struct({ rr_id: ResourceName, message: optional(Text(maxMessageChars)) })

const isServiceAccount = (ctx: ToolContext) =>
  ctx.caller.principal.tokenKind === "serviceaccount" || ctx.caller.principal.user.startsWith("system:serviceaccount:")

const acting = (ctx: ToolContext) => ({
  user: ctx.caller.principal.user,
  groups: ctx.caller.principal.groups,
  token: ctx.caller.token
})

export const investigationTools = Effect.gen(function* () {
  const k8s = yield* K8s
  const onTarget = yield* requestOnTarget
  const records = yield* sessionRecords

  const requireRr = (id: string) => k8s.getCr("remediationrequests", id).pipe(Effect.mapError(k8sFailure(`remediation request ${id}`)))

  /** A session the MCP caller holds is followed from where the answer left it, so later events reach them. */
  const followHeld = (rrId: string, ctx: ToolContext, answer: Record<string, unknown>) => {
    const sessionId = str(answer.session_id)
    const user = ctx.caller.principal.user
    const holds = ["active", "selected"].includes(str(answer.status) ?? "") && str(answer.holder) === user
    return ctx.caller.endpoint !== "/mcp" || sessionId === undefined || !holds
      ? Effect.void
      : ctx.agent.follow(rrId, sessionId, typeof answer.event_seq === "number" ? answer.event_seq : 0, user)
  }

  /** An agent call about the RR's session; its answer is recorded on the caller's InvestigationSession. */
  const recorded = (rrId: string, ctx: ToolContext, call: Effect.Effect<unknown, ToolError>, takeover = false) =>
    Effect.tap(Effect.map(call, record), (answer) => Effect.zipRight(records.follow(rrId, ctx, answer, takeover), followHeld(rrId, ctx, answer)))

  const agentAction = (action: string, extra: Record<string, unknown> = {}) => (input: { rr_id: string; message?: string | undefined }, ctx: ToolContext) =>
    recorded(
      input.rr_id,
      ctx,
      ctx.agent.call("investigate", {
        rr_id: input.rr_id,
        action,
        ...(input.message === undefined ? {} : { message: input.message }),
        ...extra
      }, acting(ctx))
    )

  const sessionActive = (rrId: string, ctx: ToolContext, activeUser: string, sessionId: string) => ({
    status: "session_active",
    rr_id: rrId,
    session_id: sessionId,
    active_user: activeUser,
    message:
      `${activeUser} is driving the investigation of ${rrId}; call ${ctx.tool} again after they finish, or with join_mode "takeover" to take it over (their investigation is abandoned)`
  })

  const action = (name: string, agentAct: string, description: string) =>
    defineTool({ name, description, input: RrAction, sessionDependent: true, run: agentAction(agentAct) })

  return [
    defineTool({
      name: "investigate",
      description:
        "Start an interactive investigation: on an existing remediation (rr_id), or on a target (api_version, namespace, kind, name) which creates the remediation request.",
      input: Schema.Struct({
        rr_id: optional(ResourceName),
        api_version: optional(ApiVersion),
        namespace: optional(NamespaceName),
        kind: optional(KindName),
        name: optional(ResourceName),
        cluster_id: optional(Text(253)),
        interaction_mode: optional(Schema.Literal("interactive", "full_remediation", "full_remediation_autonomous")),
        confirmed_signal_name: optional(Text(253)),
        join_mode: optional(Schema.Literal("start", "takeover"))
      }),
      sessionDependent: true,
      run: (input, ctx) =>
        Effect.gen(function* () {
          let rrId = input.rr_id
          if (rrId === undefined) {
            if (input.kind === undefined || input.name === undefined) {
              return yield* new ToolError({
                message: "give rr_id, or api_version, namespace, kind and name of the target",
                code: "invalid_arguments"
              })
            }
            if (input.api_version === undefined) {
              return yield* new ToolError({
                message: "api_version is required when starting an investigation on a target",
                code: "invalid_arguments"
              })
            }
            if (isServiceAccount(ctx)) {
              return yield* new ToolError({
                message: "service accounts cannot start interactive investigations on a target",
                code: "forbidden"
              })
            }
            rrId = (yield* onTarget({
              door: "interactive",
              target: {
                apiVersion: input.api_version,
                kind: input.kind,
                name: input.name,
                ...(input.namespace === undefined ? {} : { namespace: input.namespace })
              },
              signalName: input.confirmed_signal_name ?? "InteractiveInvestigation",
              signalType: "interactive",
              description: `interactive investigation started by ${ctx.caller.principal.user}`
            }, ctx)).name
          } else {
            const rr = yield* requireRr(rrId)
            const phase = str(statusOf(rr).overallPhase) ?? "Pending"
            if (isTerminalPhase(phase)) {
              return yield* new ToolError({ message: `remediation ${rrId} is already ${phase}`, code: "terminal_phase" })
            }
          }
          const takeover = input.join_mode === "takeover"
          if (!takeover) {
            const id = rrId
            const other = yield* records.activeOfOther(
              id,
              ctx.caller.principal.user,
              Effect.map(ctx.agent.call("investigate", { rr_id: id, action: "status" }, acting(ctx)), record)
            )
            if (other !== undefined) {
              return sessionActive(
                rrId,
                ctx,
                str(record(specOf(other).userIdentity).username) ?? "",
                str(statusOf(other).kaCorrelationID) ?? other.metadata.name
              )
            }
          }
          const args = {
            rr_id: rrId,
            action: takeover ? "takeover" : "start",
            ...(input.interaction_mode === undefined ? {} : { interaction_mode: input.interaction_mode })
          }
          const started = yield* recorded(rrId, ctx, ctx.agent.call("investigate", args, acting(ctx)), takeover)
          // The agent's lease is the real lock: its holder is told, as for a recorded session.
          if (started.status === "session_active") return sessionActive(rrId, ctx, str(started.holder) ?? "", str(started.session_id) ?? "")
          return {
            ...started,
            session_id: str(started.session_id) ?? "",
            status: str(started.status) ?? "started",
            summary: str(started.summary) ?? str(started.message) ?? "",
            rr_id: rrId
          }
        })
    }),
    defineTool({
      name: "message",
      description: `Send a message (at most ${maxMessageChars} characters) to the active investigation session of a remediation.`,
      input: Schema.Struct({ rr_id: ResourceName, message: Text(maxMessageChars) }),
      sessionDependent: true,
      run: agentAction("message")
    }),
    action("complete", "complete", "Complete the investigation session once a workflow was selected (starts the remediation)."),
    action("cancel", "cancel", "Cancel the active investigation session and release it."),
    action("status", "status", "Get the state of the investigation session: active, completed or disconnected."),
    action("reconnect", "reconnect", "Reconnect to a disconnected investigation session."),
    defineTool({
      name: "complete_no_action",
      description: "Complete an investigation without selecting a workflow: dismiss it, or escalate to a human team with escalation_reason.",
      input: Schema.Struct({ rr_id: ResourceName, reason: optional(Text(4096)), escalation_reason: optional(Text(4096)) }),
      sessionDependent: true,
      run: (input, ctx) => recorded(input.rr_id, ctx, ctx.agent.call("complete_no_action", { ...input }, acting(ctx)))
    }),
    defineTool({
      name: "discover_workflows",
      description: "Discover the workflows that fit the active investigation, with parameter schemas populated from it (optionally one workflow_id or kind).",
      input: Schema.Struct({ rr_id: ResourceName, workflow_id: optional(Text(253)), kind: optional(KindName) }),
      sessionDependent: true,
      listField: "workflows",
      run: (input, ctx) =>
        Effect.map(agentAction("discover_workflows")({ rr_id: input.rr_id }, ctx), (result) => {
          const r = record(result)
          const all = Array.isArray(r.workflows) ? r.workflows.map(record) : []
          const workflows = all.filter((w) =>
            (input.workflow_id === undefined || w.workflow_id === input.workflow_id) &&
            (input.kind === undefined || String(w.kind ?? "").toLowerCase() === input.kind.toLowerCase())
          )
          return { ...r, workflows, count: workflows.length }
        })
    }),
    defineTool({
      name: "select_workflow",
      description: "Select a workflow returned by discover_workflows for the investigation, with its parameters.",
      input: Schema.Struct({
        rr_id: ResourceName,
        workflow_id: Text(253),
        kind: optional(KindName),
        name: optional(ResourceName),
        namespace: optional(NamespaceName),
        parameters: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
      }),
      sessionDependent: true,
      run: (input, ctx) => ctx.agent.call("select_workflow", { ...input }, acting(ctx))
    })
  ]
})
