/**
 * The tool loop: ask the model, run the tools it asks for, feed the results back, until it answers in text. Every
 * step is published on the session's stream and, when the shadow agent is on, reviewed. Turns are bounded
 * (`maxTurns`); running past the bound ends the run `failed`.
 */
import { Effect, Ref } from "effect"
import { message } from "@kubemend/core/Llm"
import { AgentConfig } from "../AgentConfig.ts"
import { InvestigationFailed, type InvestigationPhase } from "../Sessions/Session.ts"
import { Alignment } from "./Alignment.ts"
import { Model } from "./Model.ts"
import type { Escalation, RunState } from "./Run.ts"
import { Tools } from "./Tools.ts"

export type TurnOutcome =
  | { readonly _tag: "Answer"; readonly text: string }
  | { readonly _tag: "Escalated"; readonly escalation: Escalation }

const discoveryTools = new Set(["list_available_actions", "list_workflows", "get_workflow"])
const eventPreview = 2000

export class Loop extends Effect.Service<Loop>()("@kubemend/agent/Loop", {
  effect: Effect.gen(function* () {
    const config = yield* AgentConfig
    const model = yield* Model
    const tools = yield* Tools
    const alignment = yield* Alignment

    const setPhase = (run: RunState, phase: InvestigationPhase) => Ref.update(run.session.state, (s) => ({ ...s, phase }))

    const escalated = (run: RunState): TurnOutcome | undefined => run.escalation === undefined ? undefined : { _tag: "Escalated", escalation: run.escalation }

    /** Runs turns until the model answers in text; `limit` is the highest turn number allowed. */
    const untilAnswer = Effect.fn("Loop.untilAnswer")(function* (run: RunState, limit: number) {
      let warnedBudget = false
      while (true) {
        if (run.turns >= limit) {
          return yield* new InvestigationFailed({
            reason: `exceeded maxTurns (${config.maxTurns}) tool-call turns without a final answer`
          })
        }
        const turn = ++run.turns
        const phase = (yield* Ref.get(run.session.state)).phase
        yield* Ref.update(run.session.state, (s) => ({ ...s, turn, progress: `turn ${turn}: waiting for the model` }))
        const withTools = tools.budgetLeft(run)
        if (!withTools && !warnedBudget) {
          warnedBudget = true
          run.messages.push(message.user("The tool budget for this investigation is used up. Give your final answer now."))
        }
        const response = yield* model.complete(run.session, turn, {
          messages: run.messages,
          ...(withTools ? { tools: tools.definitionsFor(run.toolset) } : {}),
          phase
        })
        run.messages.push(message.assistant(response.text, response.toolCalls))
        if (response.text.trim() !== "") {
          yield* alignment.review(run, { kind: "llm_reasoning", content: response.text })
          const stop = escalated(run)
          if (stop !== undefined) return stop
        }
        if (response.toolCalls.length === 0) return { _tag: "Answer", text: response.text } as TurnOutcome

        for (const call of response.toolCalls) {
          // Every call gets a result, so the conversation stays valid for a provider even when the run stops here.
          if (run.escalation !== undefined) {
            run.messages.push(message.tool(call.id, JSON.stringify({ error: "skipped: the investigation stopped" }), call.name))
            continue
          }
          if (discoveryTools.has(call.name) && phase === "rca") yield* setPhase(run, "workflow_discovery")
          yield* Ref.update(run.session.state, (s) => ({ ...s, progress: `turn ${turn}: running ${call.name}` }))
          yield* run.session.log.publish("tool_call", { turn, id: call.id, name: call.name, arguments: call.arguments })
          const executed = yield* tools.execute(call, run)
          yield* run.session.log.publish("tool_result", {
            turn,
            id: call.id,
            name: call.name,
            ok: executed.ok,
            ...(executed.summarized ? { summarized: true } : {}),
            ...(executed.truncated ? { truncated: true } : {}),
            content: executed.content.length > eventPreview ? `${executed.content.slice(0, eventPreview)}…` : executed.content
          })
          run.messages.push(message.tool(call.id, executed.content, call.name))
          if (executed.escalate !== undefined && run.escalation === undefined) run.escalation = executed.escalate
          yield* alignment.review(run, { kind: "tool_result", tool: call.name, content: executed.content })
        }
        const stop = escalated(run)
        if (stop !== undefined) return stop
      }
    })

    return { untilAnswer, setPhase } as const
  })
}) {}
