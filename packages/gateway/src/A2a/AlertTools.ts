/**
 * The A2A agent's alert tools, registered only when severity triage is on with a metrics backend (the bridge then
 * has `svc_list_alerts`, whose fetching, filtering and redaction they reuse): `list_alerts` (redacted summaries),
 * `get_alert_details` (the matching alerts' labels and annotations) and `svc_investigate_alert` (checks the alert
 * exists and its namespace/cluster scope before creating the RemediationRequest). Severities are the bridge's,
 * which classifies those outside the four levels through severity triage (SeverityTriage.ts).
 */
import { Effect, Schema } from "effect"
import { ToolError } from "@kubemend/core/ToolError"
import type { ListedAlert } from "../Tools/Alerts.ts"
import { ToolRegistry } from "../Mcp/Registry.ts"
import { defineTool, type ToolContext, type ToolDef } from "../Mcp/Tool.ts"
import { ApiVersion, KindName, NamespaceName, optional, record, ResourceName, Text } from "../Tools/Common.ts"
import { createRemediation } from "./InternalTools.ts"

const summaryOf = (a: ListedAlert) => ({
  alert_name: a.labels["alertname"] ?? "",
  severity: a.severity,
  ...(a.severity_source === undefined ? {} : { severity_source: a.severity_source }),
  state: a.state,
  ...(a.labels["namespace"] === undefined ? {} : { namespace: a.labels["namespace"] }),
  active_at: a.active_at,
  summary: a.annotations["summary"] ?? a.annotations["description"] ?? ""
})

export const alertAgentTools = Effect.gen(function* () {
  const registry = yield* ToolRegistry
  const bridge = registry.definitions.find((d) => d.name === "list_alerts")
  if (bridge === undefined) return [] as ReadonlyArray<ToolDef>
  const create = yield* createRemediation

  const alerts = (ctx: ToolContext, filter: Record<string, string | undefined>) =>
    Effect.map(bridge.run(Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)), ctx), (result) => {
      const r = record(result)
      return { alerts: (Array.isArray(r.alerts) ? r.alerts : []) as ReadonlyArray<ListedAlert>, result: r }
    })

  const named = (name: string) => (a: ListedAlert) => a.labels["alertname"] === name

  return [
    defineTool({
      name: "list_alerts",
      description: "List firing and pending alerts as short summaries, optionally by namespace, severity or state.",
      input: Schema.Struct({ namespace: optional(NamespaceName), severity: optional(Text(32)), state: optional(Text(32)) }),
      listField: "alerts",
      run: (input, ctx) =>
        Effect.map(alerts(ctx, input), ({ alerts, result }) => ({
          alerts: alerts.map(summaryOf),
          count: alerts.length,
          total_count: result.total_count ?? alerts.length,
          truncated: result.truncated === true,
          prioritized: result.prioritized
        }))
    }),
    defineTool({
      name: "get_alert_details",
      description: "Get the labels and annotations (redacted) of the alerts with this name, optionally in one namespace.",
      input: Schema.Struct({ alert_name: Text(253), namespace: optional(NamespaceName) }),
      listField: "alerts",
      run: (input, ctx) =>
        Effect.flatMap(alerts(ctx, { namespace: input.namespace }), ({ alerts }) => {
          const matching = alerts.filter(named(input.alert_name))
          return matching.length === 0
            ? Effect.fail(new ToolError({ message: `no firing or pending alert named ${input.alert_name}`, code: "not_found" }))
            : Effect.succeed({
              alerts: matching.map((a) => ({ ...summaryOf(a), labels: a.labels, annotations: a.annotations })),
              count: matching.length
            })
        })
    }),
    defineTool({
      name: "investigate_alert",
      description:
        "Start a remediation for a firing alert on its target resource (alert_name, api_version, kind, name; namespace for namespaced targets). The alert must exist in that scope.",
      input: Schema.Struct({
        alert_name: Text(253),
        api_version: ApiVersion,
        kind: KindName,
        name: ResourceName,
        namespace: optional(NamespaceName)
      }),
      run: (input, ctx) =>
        Effect.gen(function* () {
          const { alerts: all } = yield* alerts(ctx, {})
          const matching = all.filter(named(input.alert_name))
          if (matching.length === 0) {
            return yield* new ToolError({ message: `no firing or pending alert named ${input.alert_name}`, code: "not_found" })
          }
          const inScope = matching.filter((a) =>
            input.namespace === undefined ? a.labels["namespace"] === undefined : a.labels["namespace"] === input.namespace
          )
          if (inScope.length === 0) {
            return yield* new ToolError({
              message: input.namespace === undefined
                ? `alert ${input.alert_name} is namespaced; give the namespace of the target`
                : `alert ${input.alert_name} is not firing in namespace ${input.namespace}`,
              code: "scope_mismatch"
            })
          }
          const alert = inScope[0]!
          return yield* create({
            apiVersion: input.api_version,
            kind: input.kind,
            name: input.name,
            namespace: input.namespace,
            signalName: input.alert_name,
            severity: alert.severity,
            signalType: "alert",
            signalLabels: alert.labels,
            description: alert.annotations["summary"] ?? alert.annotations["description"]
          }, ctx)
        })
    })
  ]
})
