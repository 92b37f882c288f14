/**
 * `ollama`: the native `/api/chat` wire (NDJSON streaming, tools). A bearer key is sent when configured (proxies).
 */
import { Effect, Schema, Stream } from "effect"
import type { Adapter, AdapterContext } from "./Adapter.ts"
import { temperatureOf } from "./Adapter.ts"
import { bearerAuth } from "./Auth.ts"
import { compact } from "./Config.ts"
import { LlmUnavailable } from "./Errors.ts"
import { decodeAnswer, idSequence, ndjson, reduceChunks, toolCall, toolNames, trimSlash } from "./Shared.ts"
import type { Target } from "./Target.ts"
import type { ChatDelta, ChatRequest, FinishReason, Message, Usage } from "./Types.ts"

export const requestBody = (ctx: AdapterContext, target: Target, request: ChatRequest, stream: boolean) => {
  const nameOf = toolNames(request.messages)
  const wire = (m: Message) => {
    switch (m.role) {
      case "system":
      case "user":
        return { role: m.role, content: m.content }
      case "assistant":
        return compact({
          role: "assistant",
          content: m.content,
          tool_calls: m.toolCalls === undefined || m.toolCalls.length === 0
            ? undefined
            : m.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } }))
        })
      case "tool":
        return { role: "tool", content: m.content, tool_name: nameOf(m) }
    }
  }
  const tools = request.tools ?? []
  const options = compact({ temperature: temperatureOf(ctx, request), num_predict: request.maxTokens })
  return compact({
    model: target.model,
    messages: request.messages.map(wire),
    tools: tools.length === 0
      ? undefined
      : tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })),
    stream,
    options: Object.keys(options).length === 0 ? undefined : options
  })
}

const Answer = Schema.Struct({
  message: Schema.optional(Schema.Struct({
    content: Schema.optional(Schema.String),
    tool_calls: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
      id: Schema.optional(Schema.String),
      function: Schema.Struct({ name: Schema.String, arguments: Schema.optional(Schema.Unknown) })
    }))))
  })),
  done: Schema.optional(Schema.Boolean),
  done_reason: Schema.optional(Schema.String),
  prompt_eval_count: Schema.optional(Schema.Number),
  eval_count: Schema.optional(Schema.Number),
  error: Schema.optional(Schema.String)
})
type Answer = typeof Answer.Type

const finishReason = (reason: string | undefined, hasToolCalls: boolean): FinishReason =>
  hasToolCalls ? "tool_calls" : reason === "length" ? "length" : reason === undefined || reason === "stop" ? "stop" : "other"

const usageOf = (a: Answer, previous: Usage): Usage => ({
  promptTokens: a.prompt_eval_count ?? previous.promptTokens,
  completionTokens: a.eval_count ?? previous.completionTokens
})

const callsOf = (a: Answer, nextId: () => string) =>
  (a.message?.tool_calls ?? []).map((c) => toolCall(c.id ?? nextId(), c.function.name, c.function.arguments ?? {}))

const decode = decodeAnswer(Answer, "ollama answer")
const failOnError = (a: Answer) => a.error === undefined ? Effect.succeed(a) : Effect.fail(new LlmUnavailable({ message: `ollama: ${a.error}` }))

export const make = (ctx: AdapterContext): Adapter => {
  const call = (target: Target, request: ChatRequest, stream: boolean) => ({
    url: `${trimSlash(target.endpoint ?? "")}/api/chat`,
    body: requestBody(ctx, target, request, stream),
    auth: bearerAuth(ctx, target)
  })

  return {
    chat: (target, request) =>
      ctx.transport.postJson(call(target, request, false)).pipe(
        Effect.flatMap(decode),
        Effect.flatMap(failOnError),
        Effect.map((a) => {
          const toolCalls = callsOf(a, idSequence(request.messages))
          return {
            text: a.message?.content ?? "",
            toolCalls,
            finishReason: finishReason(a.done_reason, toolCalls.length > 0),
            usage: usageOf(a, { promptTokens: 0, completionTokens: 0 })
          }
        })
      ),
    stream: (target, request) =>
      reduceChunks(
        ndjson(ctx.transport.postStream(call(target, request, true))).pipe(
          Stream.mapEffect(decode),
          Stream.mapEffect(failOnError)
        ),
        () => ({ nextId: idSequence(request.messages), calls: 0, reason: undefined as string | undefined, usage: { promptTokens: 0, completionTokens: 0 } }),
        (state, a): ReadonlyArray<ChatDelta> => {
          const toolCalls = callsOf(a, state.nextId)
          state.calls += toolCalls.length
          if (a.done === true) {
            state.usage = usageOf(a, state.usage)
            state.reason = a.done_reason ?? state.reason
          }
          const text = a.message?.content ?? ""
          return [
            ...(text === "" ? [] : [{ _tag: "TextDelta", text } as const]),
            ...toolCalls.flatMap((c) => [
              { _tag: "ToolCallStart", id: c.id, name: c.name } as const,
              { _tag: "ToolCallDone", toolCall: c } as const
            ])
          ]
        },
        (state) => [{ _tag: "Finish", finishReason: finishReason(state.reason, state.calls > 0), usage: state.usage }]
      )
  }
}
