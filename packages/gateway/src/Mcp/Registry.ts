/**
 * The MCP bridge's tool registry: the 23 tools under the configured prefix, minus the 11 session-dependent ones
 * when interactive investigations are off, and `list_alerts` only with severity triage and a metrics backend.
 * `tools/list` shows all registered tools regardless of the caller's permissions (authorization is per call).
 * The A2A agent and agent card reuse `definitions` / `listed`.
 */
import { Effect, JSONSchema } from "effect"
import { GatewayConfig, prefixed } from "../GatewayConfig.ts"
import { alertTools } from "../Tools/Alerts.ts"
import { approvalTools } from "../Tools/Approvals.ts"
import { investigationTools } from "../Tools/Investigation.ts"
import { presentTools } from "../Tools/Present.ts"
import { remediationTools } from "../Tools/Remediations.ts"
import { storageTools } from "../Tools/StorageTools.ts"
import { watchTools } from "../Tools/Watch.ts"
import { sessionDependentTools, type ToolDef } from "./Tool.ts"

export interface ListedTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: { readonly type: "object"; readonly [key: string]: unknown }
}

/** Spec document 1's table order. */
const order = [
  "list_remediations",
  "get_remediation",
  "cancel_remediation",
  "watch",
  "list_approval_requests",
  "get_approval_request",
  "approve",
  "investigate",
  "await_session",
  "message",
  "complete",
  "cancel",
  "status",
  "reconnect",
  "complete_no_action",
  "discover_workflows",
  "select_workflow",
  "list_workflows",
  "get_remediation_history",
  "get_effectiveness",
  "get_audit_trail",
  "present_decision",
  "list_alerts"
]

/** Drops what Effect's generator adds for its own use (`$id`s of built-ins, `maxLength(10)`-style titles). */
const tidy = (u: unknown): unknown => {
  if (Array.isArray(u)) return u.map(tidy)
  if (typeof u !== "object" || u === null) return u
  return Object.fromEntries(
    Object.entries(u)
      .filter(([k, v]) => k !== "$id" && k !== "$schema" && !(k === "title" && typeof v === "string" && /^[A-Za-z]+\(/.test(v)))
      .map(([k, v]) => [k, tidy(v)])
  )
}

/** The tool's input as a flat JSON Schema object (no `$schema`, no `$ref`s). */
export const inputSchemaOf = (def: ToolDef): ListedTool["inputSchema"] => ({
  ...(tidy(JSONSchema.make(def.input)) as Record<string, unknown>),
  type: "object"
})

export class ToolRegistry extends Effect.Service<ToolRegistry>()("@kubemend/gateway/ToolRegistry", {
  // Scoped: the metrics backend's HTTP agent (its CA) lives as long as the tools.
  scoped: Effect.gen(function* () {
    const config = yield* GatewayConfig
    const groups = yield* Effect.all([
      remediationTools,
      approvalTools,
      watchTools,
      investigationTools,
      storageTools,
      presentTools,
      alertTools
    ])
    const definitions = groups
      .flat()
      // Document 1's table: 23 tools, 11 session-dependent, so 12 stay when interactive is off (11 without list_alerts);
      // its prose "12 tools (13 with svc_list_alerts)" is off by one against that table, and the table wins.
      .filter((t) => config.interactiveEnabled || !sessionDependentTools.has(t.name))
      .sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name))
    const byName = new Map(definitions.map((t) => [prefixed(config, t.name), t] as const))
    const listed: ReadonlyArray<ListedTool> = definitions.map((t) => ({
      name: prefixed(config, t.name),
      description: t.description,
      inputSchema: inputSchemaOf(t)
    }))
    return {
      /** Registered definitions, in the spec's order. */
      definitions,
      /** What `tools/list` answers. */
      listed,
      /** The definition behind a full tool name. */
      lookup: (name: string): ToolDef | undefined => byName.get(name)
    } as const
  })
}) {}
