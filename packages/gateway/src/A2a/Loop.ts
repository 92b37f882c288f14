/**
 * The A2A agent loop: the model (Llm layer, the agent block's settings) answers the caller's message, calling the
 * SAR-gated tools it is given until it has a final answer or `maxTurns` is reached. Progress goes to the task as
 * `reasoning` (the model's text before tool calls) and `status` (tool calls) events; while a model or tool call
 * runs longer than `keepaliveInterval`, `keepalive` events keep idle-timeout proxies from cutting the stream.
 */
import { Effect } from "effect"
import { type LlmError, type LlmService, type Message, message, type ToolDefinition } from "@kubemend/core/Llm"
import type { A2aSettings } from "./Config.ts"
import type { Task } from "./Model.ts"

/** One tool the loop may call; `call` runs the full SAR, rate-limit, timeout and audit pipeline. */
export interface LoopTool {
  readonly definition: ToolDefinition
  readonly call: (args: Record<string, unknown>) => Effect.Effect<ToolOutcome>
}

export interface ToolOutcome {
  /** What the model reads: the JSON result, or the (redacted) error message. */
  readonly text: string
  readonly isError: boolean
  /** The RemediationRequest the call created or started an investigation on, if any. */
  readonly rrId?: string
}

export interface LoopInput {
  readonly task: Task
  /** Earlier exchanges of the conversation (user and final agent messages). */
  readonly history: ReadonlyArray<Message>
  readonly text: string
  readonly persona: string
  readonly user: string
  readonly tools: ReadonlyArray<LoopTool>
}

export interface LoopResult {
  readonly answer: string
  /** RemediationRequests created or investigated during the task (for `triage.completed`). */
  readonly rrIds: ReadonlyArray<string>
}

/** The model exhausted `maxTurns` without a final answer. */
export class TurnLimitReached {
  readonly _tag = "TurnLimitReached"
  constructor(readonly turns: number) {}
}

export const systemPrompt = (persona: string, user: string, toolNames: ReadonlyArray<string>) =>
  [
    "You are kubemend, an assistant for Kubernetes incident triage and remediation.",
    `You are talking to ${user} (persona: ${persona}). Every tool runs with their permissions: when a tool answers`,
    "that permission is denied, tell them which tool they lack access to instead of trying to work around it.",
    "Use the tools to look at the cluster, remediations, alerts and investigations before answering; never invent",
    "resource names, phases or results. Approving remediations is a human decision and is not available to you.",
    "Create a remediation only when the user asks for one or the evidence clearly calls for it, and say so.",
    "Answer concisely: what you found, why, and what happens next.",
    `Tools available: ${toolNames.join(", ") || "none"}.`
  ].join(" ")

export const runLoop = (
  input: LoopInput,
  llm: LlmService,
  config: A2aSettings
): Effect.Effect<LoopResult, LlmError | TurnLimitReached> =>
  Effect.gen(function* () {
    const { task } = input
    const byName = new Map(input.tools.map((t) => [t.definition.name, t] as const))
    const definitions = input.tools.map((t) => t.definition)
    const messages: Array<Message> = [
      message.system(systemPrompt(input.persona, input.user, [...byName.keys()])),
      ...input.history,
      message.user(input.text)
    ]
    const rrIds: Array<string> = []

    // Races the work with a ticker that never finishes: the ticker is interrupted as soon as the work ends.
    const withKeepalive = <A, E, R>(work: Effect.Effect<A, E, R>) =>
      Effect.raceFirst(
        work,
        Effect.sleep(config.keepaliveInterval).pipe(Effect.zipRight(task.progress("keepalive")), Effect.forever)
      )

    yield* task.progress("status", "Working on your request.")
    for (let turn = 0; turn < config.maxTurns; turn++) {
      const response = yield* withKeepalive(llm.chat({ messages, ...(definitions.length === 0 ? {} : { tools: definitions }) }))
      if (response.toolCalls.length === 0) return { answer: response.text.trim(), rrIds }
      if (response.text.trim() !== "") yield* task.progress("reasoning", response.text.trim())
      messages.push(message.assistant(response.text, response.toolCalls))
      for (const call of response.toolCalls) {
        const tool = byName.get(call.name)
        yield* task.progress("status", `Calling ${call.name}.`, { tool: call.name })
        const outcome: ToolOutcome = tool === undefined
          ? { text: `unknown tool ${call.name}: it is not available to this agent`, isError: true }
          : call.rawArguments !== undefined
          ? { text: "the arguments are not a JSON object; call the tool again with valid JSON arguments", isError: true }
          : yield* withKeepalive(tool.call(call.arguments))
        if (outcome.rrId !== undefined && !rrIds.includes(outcome.rrId)) rrIds.push(outcome.rrId)
        yield* task.progress(
          "status",
          outcome.isError ? `${call.name} failed: ${outcome.text}` : `${call.name} finished.`,
          { tool: call.name, outcome: outcome.isError ? "failure" : "success" }
        )
        messages.push(message.tool(call.id, outcome.text, call.name))
      }
    }
    return yield* Effect.fail(new TurnLimitReached(config.maxTurns))
  })
