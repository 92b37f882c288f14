/**
 * The A2A agent's alert tools, registered only when severity triage is on with a metrics backend (the bridge then
 * has `svc_list_alerts`, whose fetching, filtering and redaction they reuse): `list_alerts` (redacted summaries),
 * `get_alert_details` (the matching alerts' labels and annotations) and `svc_investigate_alert` (checks the alert
 * exists and its namespace/cluster scope before creating the RemediationRequest). Severities outside the four
 * levels go through severity triage (Triage.ts).
 */
import { Effect, Schema } from "effect"
import { classifySeverity } from "@kubemend/core/domain/Severity"
import type { AlertView } from "../Tools/Alerts.ts"
import { ToolRegistry } from "../Mcp/Registry.ts"
import { defineTool, type ToolContext, type ToolDef, ToolError } from "../Mcp/Tool.ts"
import { ApiVersion, KindName, NamespaceName, optional, record, ResourceName, Text } from "../Tools/Common.ts"
import { createRemediation } from "./InternalTools.ts"
import { SeverityTriage } from "./Triage.ts"

const summaryOf = (a: AlertView) => ({
  alert_name: a.labels["alertname"] ?? "",
  severity: classifySeverity(a.labels["severity"]),
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
  const triage = yield* SeverityTriage

  const who = (ctx: ToolContext) => ({ userId: ctx.caller.principal.user, clientIp: ctx.caller.clientIp })
  const triaged = (ctx: ToolContext, a: AlertView) =>
    Effect.map(triage.classify(a, who(ctx)), (t) => ({
      ...summaryOf(a),
      severity: t.severity,
      ...(t.source === "label" ? {} : { severity_source: t.source })
    }))
  const summaries = (ctx: ToolContext, alerts: ReadonlyArray<AlertView>) =>
    Effect.forEach(alerts, (a) => triaged(ctx, a), { concurrency: 4 })

  const alerts = (ctx: ToolContext, filter: Record<string, string | undefined>) =>
    Effect.map(bridge.run(Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)), ctx), (result) => {
      const r = record(result)
      return { alerts: (Array.isArray(r.alerts) ? r.alerts : []) as ReadonlyArray<AlertView>, result: r }
    })

  const named = (name: string) => (a: AlertView) => a.labels["alertname"] === name

  return [
    defineTool({
      name: "list_alerts",
      description: "List firing and pending alerts as short summaries, optionally by namespace, severity or state.",
      input: Schema.Struct({ namespace: optional(NamespaceName), severity: optional(Text(32)), state: optional(Text(32)) }),
      listField: "alerts",
      run: (input, ctx) =>
        Effect.flatMap(alerts(ctx, input), ({ alerts, result }) =>
          Effect.map(summaries(ctx, alerts), (views) => ({
            alerts: views,
            count: views.length,
            total_count: result.total_count ?? views.length,
            truncated: result.truncated === true,
            prioritized: result.prioritized
          })))
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
            : Effect.map(
              Effect.forEach(matching, (a) => Effect.map(triaged(ctx, a), (view) => ({ ...view, labels: a.labels, annotations: a.annotations }))),
              (views) => ({ alerts: views, count: views.length })
            )
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
          const { severity } = yield* triage.classify(alert, who(ctx))
          return yield* create({
            apiVersion: input.api_version, kind: input.kind, name: input.name, namespace: input.namespace,
            signalName: input.alert_name, severity, signalType: "alert",
            signalLabels: alert.labels, description: alert.annotations["summary"] ?? alert.annotations["description"]
          }, ctx)
        })
    })
  ]
})
