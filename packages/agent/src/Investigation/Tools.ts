/**
 * The investigation's tool set and the guard every call passes: anomaly limits (calls per tool, calls in total,
 * consecutive failures of one tool) and the sanitisation of what the tool returned.
 */
import { Effect } from "effect"
import type { ToolCall, ToolDefinition } from "@kubemend/core/Llm"
import { AgentConfig } from "../AgentConfig.ts"
import * as CatalogTools from "./CatalogTools.ts"
import * as ClusterTools from "./ClusterTools.ts"
import { addWarning, type Escalation, type RunState } from "./Run.ts"
import { sanitize } from "./Safety.ts"
import type { Tool, ToolResult } from "./ToolKit.ts"

export interface Executed {
  readonly ok: boolean
  /** What the model reads: serialised, scrubbed, capped. */
  readonly content: string
  readonly escalate?: Escalation
  readonly injections: number
  readonly credentials: number
}

export class Tools extends Effect.Service<Tools>()("@kubemend/agent/Tools", {
  effect: Effect.gen(function* () {
    const config = yield* AgentConfig
    const cluster = yield* ClusterTools.make
    const catalog = yield* CatalogTools.make
    const all: ReadonlyArray<Tool> = [...cluster.tools, ...catalog]
    const byName = new Map(all.map((t) => [t.definition.name, t]))
    const definitions: ReadonlyArray<ToolDefinition> = all.map((t) => t.definition)

    /** Why a call is refused before it runs, if it is. */
    const refusal = (run: RunState, name: string): string | undefined => {
      if (run.totalToolCalls >= config.maxTotalToolCalls) {
        return `the tool budget of ${config.maxTotalToolCalls} calls for this investigation is used up; give your final answer now`
      }
      if ((run.toolCalls.get(name) ?? 0) >= config.maxToolCallsPerTool) {
        return `${name} reached its limit of ${config.maxToolCallsPerTool} calls in this investigation; use what you have`
      }
      if ((run.consecutiveFailures.get(name) ?? 0) >= config.maxRepeatedFailures) {
        return `${name} failed ${config.maxRepeatedFailures} times in a row and is disabled for this investigation`
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
          addWarning(run, `anomaly limit: ${refused}`)
          yield* Effect.logWarning("tool call refused").pipe(Effect.annotateLogs({ tool: call.name, reason: refused }))
          result = { ok: false, content: { error: refused } }
        } else {
          run.totalToolCalls++
          run.toolCalls.set(call.name, (run.toolCalls.get(call.name) ?? 0) + 1)
          result = yield* t.run(call.arguments, run)
          run.consecutiveFailures.set(call.name, result.ok ? 0 : (run.consecutiveFailures.get(call.name) ?? 0) + 1)
        }
      }
      const clean = sanitize(result.content, config)
      if (clean.injections > 0) {
        addWarning(run, `instruction-like text was removed from the output of ${call.name}`)
        yield* Effect.logWarning("possible prompt injection in tool output").pipe(
          Effect.annotateLogs({ tool: call.name, matches: clean.injections })
        )
      }
      return {
        ok: result.ok,
        content: clean.text,
        injections: clean.injections,
        credentials: clean.credentials,
        ...(result.escalate === undefined ? {} : { escalate: result.escalate })
      } satisfies Executed as Executed
    })

    const budgetLeft = (run: RunState) => run.totalToolCalls < config.maxTotalToolCalls

    return { definitions, execute, budgetLeft, ownerChain: cluster.ownerChain } as const
  })
}) {}
