/**
 * A scripted turn in the OpenAI chat-completions wire format: one completion object, or the SSE chunks of a stream.
 */
import type { ScriptedTurn, WireMessage } from "./Scripts.ts"

export interface Played {
  readonly text: string
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
  readonly usage: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number }
}

/** Deterministic token counts: about four characters per token. */
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4))

export const play = (turn: ScriptedTurn, index: number, messages: ReadonlyArray<WireMessage>): Played => {
  const text = "json" in turn ? JSON.stringify(turn.json) : turn.text ?? ""
  const toolCalls = "toolCalls" in turn
    ? turn.toolCalls.map((c, i) => ({ id: `call_${index}_${i}`, name: c.name, arguments: JSON.stringify(c.arguments) }))
    : []
  const prompt = tokens(JSON.stringify(messages))
  const completion = tokens(text + toolCalls.map((c) => c.name + c.arguments).join(""))
  return {
    text,
    toolCalls,
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  }
}

const finishReason = (p: Played) => (p.toolCalls.length > 0 ? "tool_calls" : "stop")

export const completion = (p: Played, model: string, id: string) => ({
  id,
  object: "chat.completion",
  created: 0,
  model,
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: p.text === "" && p.toolCalls.length > 0 ? null : p.text,
      ...(p.toolCalls.length === 0 ? {} : {
        tool_calls: p.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }))
      })
    },
    finish_reason: finishReason(p)
  }],
  usage: p.usage
})

/** Splits text into pieces so clients see (and must assemble) several deltas. */
const pieces = (text: string, size: number) => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

/** The `data:` payloads of a streamed answer (without the final `[DONE]`). */
export const chunks = (p: Played, model: string, id: string, includeUsage: boolean): ReadonlyArray<unknown> => {
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }]
  })
  return [
    chunk({ role: "assistant", content: "" }),
    ...pieces(p.text, 16).map((content) => chunk({ content })),
    ...p.toolCalls.flatMap((c, index) => [
      chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }),
      ...pieces(c.arguments, 24).map((args) => chunk({ tool_calls: [{ index, function: { arguments: args } }] }))
    ]),
    chunk({}, finishReason(p)),
    ...(includeUsage ? [{ id, object: "chat.completion.chunk", created: 0, model, choices: [], usage: p.usage }] : [])
  ]
}
