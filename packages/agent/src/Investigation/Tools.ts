/**
 * The investigation's tool set and the guard every call passes: anomaly limits (calls per tool, calls in total,
 * consecutive failures of one tool), then the sanitisation of what the tool returned and the summarizer's size
 * budget. A call over a per-tool limit is refused and the model told why; a model that asks for tools after the
 * whole budget is spent (it was told to answer, and offered no tools) is escalated to a human.
 */
import { Effect } from "effect"
import type { ToolCall, ToolDefinition } from "@kubemend/core/Llm"
import { AgentConfig } from "../AgentConfig.ts"
import * as CatalogTools from "./CatalogTools.ts"
import * as ClusterTools from "./ClusterTools.ts"
import * as PrometheusTools from "./PrometheusTools.ts"
import * as WorkloadTools from "./WorkloadTools.ts"
import { addWarning, type Escalation, type RunState, type Toolset } from "./Run.ts"
import { clean } from "./Safety.ts"
import { Summarizer } from "./Summarizer.ts"
import type { Tool, ToolResult } from "./ToolKit.ts"

export interface Executed {
  readonly ok: boolean
  /** What the model reads: serialised, scrubbed, capped. */
  readonly content: string
  readonly escalate?: Escalation
  readonly injections: number
  readonly credentials: number
  /** Condensed by the summarizer, or cut at `maxToolOutputSize`. */
  readonly summarized: boolean
  readonly truncated: boolean
}

interface Refusal {
  readonly reason: string
  readonly escalate?: Escalation
}

export class Tools extends Effect.Service<Tools>()("@kubemend/agent/Tools", {
  effect: Effect.gen(function* () {
    const config = yield* AgentConfig
    const summarizer = yield* Summarizer
    const cluster = yield* ClusterTools.make
    const catalog = yield* CatalogTools.make
    const workload = yield* WorkloadTools.make
    const prometheus = yield* PrometheusTools.make
    // The one list of the investigation's tools; README "Agent tools" describes the same set.
    const all: ReadonlyArray<Tool> = [...cluster.tools, ...workload, ...prometheus, ...catalog]
    const byName = new Map(all.map((t) => [t.definition.name, t]))
    const definitions: ReadonlyArray<ToolDefinition> = all.map((t) => t.definition)
    const selection = new Set(["list_available_actions", "list_workflows", "get_workflow"])
    const byToolset: Record<Toolset, ReadonlyArray<ToolDefinition>> = {
      all: definitions,
      rca: definitions.filter((d) => !selection.has(d.name)),
      workflow: definitions.filter((d) => selection.has(d.name))
    }

    /** Why a call is refused before it runs, if it is. */
    const refusal = (run: RunState, name: string): Refusal | undefined => {
      if (run.totalToolCalls >= config.maxTotalToolCalls) {
        const reason = `the tool budget of ${config.maxTotalToolCalls} calls for this investigation is used up; give your final answer now`
        return {
          reason,
          escalate: {
            reason: "investigation_inconclusive",
            summary: `Anomaly limit: the model kept calling tools (${name}) after the budget of ${config.maxTotalToolCalls} ` +
              "tool calls was used up; the investigation needs a human."
          }
        }
      }
      if ((run.toolCalls.get(name) ?? 0) >= config.maxToolCallsPerTool) {
        return { reason: `${name} reached its limit of ${config.maxToolCallsPerTool} calls in this investigation; use what you have` }
      }
      if ((run.consecutiveFailures.get(name) ?? 0) >= config.maxRepeatedFailures) {
        return { reason: `${name} failed ${config.maxRepeatedFailures} times in a row and is disabled for this investigation` }
      }
      return undefined
    }

    const execute = Effect.fn("Tools.execute")(function* (call: ToolCall, run: RunState) {
      yield* Effect.annotateCurrentSpan({ tool: call.name })
      const t = byName.get(call.name)
      let result: ToolResult
      if (t === undefined) {
        result = { ok: false, content: { error: `unknown tool ${call.name}; available: ${[...byName.keys()].join(", ")}` } }
      } else if (call.rawArguments !== undefined) {
        result = { ok: false, content: { error: `the arguments of ${call.name} must be a JSON object` } }
      } else {
        const refused = refusal(run, call.name)
        if (refused !== undefined) {
          addWarning(run, `anomaly limit: ${refused.reason}`)
          yield* Effect.logWarning("tool call refused").pipe(Effect.annotateLogs({ tool: call.name, reason: refused.reason }))
          result = { ok: false, content: { error: refused.reason }, ...(refused.escalate === undefined ? {} : { escalate: refused.escalate }) }
        } else {
          run.totalToolCalls++
          run.toolCalls.set(call.name, (run.toolCalls.get(call.name) ?? 0) + 1)
          result = yield* t.run(call.arguments, run)
          run.consecutiveFailures.set(call.name, result.ok ? 0 : (run.consecutiveFailures.get(call.name) ?? 0) + 1)
        }
      }
      const cleaned = clean(result.content, config)
      if (cleaned.injections > 0) {
        addWarning(run, `instruction-like text was removed from the output of ${call.name}`)
        yield* Effect.logWarning("possible prompt injection in tool output").pipe(
          Effect.annotateLogs({ tool: call.name, matches: cleaned.injections })
        )
      }
      const fitted = yield* summarizer.fit(run, call.name, cleaned.text)
      return {
        ok: result.ok,
        content: fitted.text,
        injections: cleaned.injections,
        credentials: cleaned.credentials,
        summarized: fitted.summarized,
        truncated: fitted.truncated,
        ...(result.escalate === undefined ? {} : { escalate: result.escalate })
      } satisfies Executed as Executed
    })

    const budgetLeft = (run: RunState) => run.totalToolCalls < config.maxTotalToolCalls

    /** The tools offered in a phase (a call to another known tool still runs: models reach ahead). */
    const definitionsFor = (toolset: Toolset) => byToolset[toolset]

    return { definitions, definitionsFor, execute, budgetLeft, ownerChain: cluster.ownerChain } as const
  })
}) {}
