/**
 * The A2A agent's tool set: the bridge's registered tools except `svc_approve` (the human consent gate is
 * structurally absent), `svc_complete_no_action` and `svc_list_workflows`; `svc_investigate` in its blocking form;
 * the five internal tools; and the three alert tools when severity triage has a metrics backend. Session tools
 * are already absent from the registry when interactive investigations are off. Every tool runs through the
 * bridge's call pipeline (ToolCalls): SAR as the caller, per-user rate limit, deadline, audit.
 */
import { Effect } from "effect"
import type { ToolDefinition } from "@kubemend/core/Llm"
import { GatewayConfig, prefixed } from "../GatewayConfig.ts"
import { type CallContext, ToolCalls } from "../Mcp/Call.ts"
import { inputSchemaOf, ToolRegistry } from "../Mcp/Registry.ts"
import type { ToolDef } from "../Mcp/Tool.ts"
import { alertAgentTools } from "./AlertTools.ts"
import { agentToolName, internalTools } from "./InternalTools.ts"
import { blockingInvestigate } from "./Investigate.ts"
import type { LoopTool } from "./Loop.ts"

/** Bridge tools the agent never gets (document 1, behaviour rule 6). */
export const bridgeOnly: ReadonlySet<string> = new Set(["approve", "complete_no_action", "list_workflows"])

/** Tools whose result names a RemediationRequest the task created or investigated. */
const creating: ReadonlySet<string> = new Set(["remediate", "investigate_alert", "investigate"])

export interface AgentTool {
  /** Full name, as called and reviewed (`svc_list_remediations`, `cluster_get`). */
  readonly name: string
  readonly def: ToolDef
  readonly definition: ToolDefinition
}

export class AgentTools extends Effect.Service<AgentTools>()("@kubemend/gateway/A2aAgentTools", {
  effect: Effect.gen(function* () {
    const config = yield* GatewayConfig
    const registry = yield* ToolRegistry
    const calls = yield* ToolCalls
    const bridge = yield* Effect.forEach(
      registry.definitions.filter((d) => !bridgeOnly.has(d.name)),
      (d) => (d.name === "investigate" ? blockingInvestigate(d) : Effect.succeed(d))
    )
    const bridged = bridge.map((def) => ({ name: prefixed(config, def.name), def }))
    const own = [...(yield* internalTools), ...(yield* alertAgentTools)].map((def) => ({ name: agentToolName(config.toolPrefix, def.name), def }))
    const tools: ReadonlyArray<AgentTool> = [...bridged, ...own].map(({ name, def }) => ({
      name,
      def,
      definition: { name, description: def.description, parameters: inputSchemaOf(def) }
    }))

    /** The tools as the loop calls them, for one task's context (caller, session, agent link, notifications). */
    const forTask = (ctx: Omit<CallContext, "tool">): ReadonlyArray<LoopTool> =>
      tools.map((t) => ({
        definition: t.definition,
        call: (args) =>
          Effect.map(calls.call(t.def, args, { ...ctx, tool: t.name }), (result) => {
            const text = result.content.map((c) => c.text).join("\n")
            const isError = result.isError === true
            const rrId = !isError && creating.has(t.def.name) ? rrIdOf(text) : undefined
            return { text, isError, ...(rrId === undefined ? {} : { rrId }) }
          })
      }))

    return { tools, forTask } as const
  })
}) {}

const rrIdOf = (text: string): string | undefined => {
  try {
    const r = JSON.parse(text) as { rr_id?: unknown; status?: unknown }
    return typeof r.rr_id === "string" && r.status !== "session_active" ? r.rr_id : undefined
  } catch {
    return undefined
  }
}
