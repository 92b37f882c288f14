/**
 * Storage-backed tools: the workflow catalog, remediation history (Go-duration `since`, default 24h), workflow
 * effectiveness and the audit trail of an RR. Calls go through the storage circuit breaker: with storage down the
 * tools answer an error result at once.
 */
import { Effect, Option, Schema } from "effect"
import { parseGoDuration } from "@kubemend/core/Config"
import { ToolError } from "@kubemend/core/ToolError"
import { Breakers } from "../Breakers.ts"
import { GatewayStorage, type StorageFailure } from "../GatewayStorage.ts"
import { defineTool } from "../Mcp/Tool.ts"
import { compact, KindName, NamespaceName, optional, record, ResourceName, Text } from "./Common.ts"

export const storageTools = Effect.gen(function* () {
  const storage = yield* GatewayStorage
  const { storage: breaker } = yield* Breakers

  const guarded = <A>(call: Effect.Effect<A, StorageFailure>) =>
    breaker.run(call, (e) => e.kind === "unavailable").pipe(
      Effect.mapError((e) =>
        e._tag === "DependencyUnavailable" || e.kind === "unavailable"
          ? new ToolError({ message: "the storage service is unavailable, please retry later", code: "storage_unavailable" })
          : new ToolError({ message: e.message, code: e.kind })
      )
    )

  return [
    defineTool({
      name: "list_workflows",
      description: "List the active remediation workflows of the catalog, optionally those for one resource kind.",
      input: Schema.Struct({ kind: optional(KindName) }),
      listField: "workflows",
      run: (input) =>
        Effect.map(guarded(storage.listWorkflows({ status: "Active", limit: 1000 })), (res) => {
          const kind = input.kind?.toLowerCase()
          const workflows = res.workflows
            .filter((w) => kind === undefined || w.labels.component.some((c) => c === "*" || c.toLowerCase() === kind))
            .map((w) => ({
              id: w.workflowId,
              name: w.workflowName,
              description: w.description.what,
              kind: w.labels.component.join(","),
              action_type: w.actionType,
              version: w.version
            }))
          return { workflows, count: workflows.length }
        })
    }),
    defineTool({
      name: "get_remediation_history",
      description: "Get the remediation history of a target resource (namespace, kind, name) within since, a Go duration such as 24h (default) or 720h.",
      input: Schema.Struct({
        namespace: optional(NamespaceName),
        kind: optional(KindName),
        name: optional(ResourceName),
        since: optional(Text(32)),
        spec_hash: optional(Text(128))
      }),
      listField: "remediations",
      run: (input) =>
        Effect.gen(function* () {
          if (input.namespace === undefined || input.kind === undefined || input.name === undefined) {
            return yield* new ToolError({ message: "namespace, kind and name of the target are required", code: "invalid_arguments" })
          }
          const since = input.since ?? "24h"
          if (Option.isNone(parseGoDuration(since))) {
            return yield* new ToolError({ message: `since must be a Go duration such as 24h or 90m (got "${since}")`, code: "invalid_arguments" })
          }
          const ctx = yield* guarded(storage.remediationHistory(compact({
            targetKind: input.kind,
            targetName: input.name,
            targetNamespace: input.namespace,
            tier1Window: since,
            currentSpecHash: input.spec_hash
          })))
          const remediations = ctx.tier1.chain.map((e) => ({
            id: e.remediationUID,
            namespace: input.namespace,
            phase: e.outcome ?? "",
            created_at: e.completedAt,
            workflow: e.actionType ?? ""
          }))
          return { remediations, count: remediations.length, regression_detected: ctx.regressionDetected, window: ctx.tier1.window }
        })
    }),
    defineTool({
      name: "get_effectiveness",
      description: "Get the effectiveness of a workflow (success rate, average duration, sample size), optionally in one namespace.",
      input: Schema.Struct({ workflow_id: optional(Text(253)), namespace: optional(NamespaceName) }),
      run: (input) =>
        Effect.gen(function* () {
          if (input.workflow_id === undefined || input.workflow_id === "") {
            return yield* new ToolError({ message: "workflow_id is required", code: "invalid_arguments" })
          }
          const e = yield* guarded(storage.workflowEffectiveness(compact({ workflow_id: input.workflow_id, namespace: input.namespace })))
          return compact({
            workflow_id: e.workflow_id,
            namespace: e.namespace,
            success_rate: e.success_rate,
            avg_duration: e.avg_duration,
            sample_size: e.sample_size
          })
        })
    }),
    defineTool({
      name: "get_audit_trail",
      description:
        "Get the audit trail of a remediation (rr_id), optionally only one event_type; with verify_chain, also storage's hash-chain verification of its events.",
      input: Schema.Struct({ rr_id: ResourceName, event_type: optional(Text(100)), verify_chain: optional(Schema.Boolean) }),
      listField: "events",
      run: (input) =>
        Effect.gen(function* () {
          const res = yield* guarded(storage.auditEvents(compact({ correlation_id: input.rr_id, event_type: input.event_type, limit: 1000 })))
          const events = [...res.data]
            .sort((a, b) => a.event_timestamp.localeCompare(b.event_timestamp))
            .map((e) => {
              const { event_type: _t, ...detail } = record(e.event_data)
              return { timestamp: e.event_timestamp, event_type: e.event_type, actor: e.actor_id ?? "", detail }
            })
          const chain = input.verify_chain === true ? yield* guarded(storage.verifyChain(input.rr_id)) : undefined
          return compact({
            events,
            count: events.length,
            total: res.pagination.total,
            chain: chain === undefined ? undefined : compact({
              valid: chain.is_valid,
              total_events: chain.total_events,
              verified_events: chain.verified_events,
              first_tampered_event_id: chain.first_tampered_event_id,
              message: chain.message,
              verified_at: chain.verification_time
            })
          })
        })
    })
  ]
})
