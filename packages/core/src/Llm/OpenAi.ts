/**
 * The OpenAI chat-completions wire: openai, openai_compatible, mistral, huggingface (`{origin}/v1/chat/completions`,
 * bearer key) and azure (deployment URL, `api-key` header).
 */
import { Effect, Schema, Stream } from "effect"
import type { Adapter, AdapterContext } from "./Adapter.ts"
import { temperatureOf } from "./Adapter.ts"
import { bearerAuth, keyHeaderAuth } from "./Auth.ts"
import { compact } from "./Config.ts"
import { decodeAnswer, noUsage, reduceChunks, sseJson, ToolCallAssembler, toolCall, trimSlash, withV1 } from "./Shared.ts"
import type { Target } from "./Target.ts"
import type { ChatRequest, FinishReason, Message, Usage } from "./Types.ts"

const defaultOrigin: Partial<Record<Target["provider"], string>> = {
  huggingface: "https://router.huggingface.co",
  mistral: "https://api.mistral.ai"
}

const chatUrl = (ctx: AdapterContext, target: Target) => {
  const origin = target.endpoint ?? defaultOrigin[target.provider] ?? ""
  return target.provider === "azure"
    ? `${trimSlash(origin)}/openai/deployments/${encodeURIComponent(target.model)}/chat/completions?api-version=${
      encodeURIComponent(ctx.settings.azureApiVersion)
    }`
    : `${withV1(origin)}/chat/completions`
}

const wireMessage = (m: Message) => {
  switch (m.role) {
    case "system":
    case "user":
      return { role: m.role, content: m.content }
    case "assistant":
      return m.toolCalls === undefined || m.toolCalls.length === 0
        ? { role: "assistant", content: m.content }
        : {
          role: "assistant",
          content: m.content === "" ? null : m.content,
          tool_calls: m.toolCalls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.rawArguments ?? JSON.stringify(c.arguments) }
          }))
        }
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content }
  }
}

/** Mistral rejects `stream_options`; it sends usage in the last chunk anyway. */
const supportsStreamOptions = (target: Target) => target.provider !== "mistral"

export const requestBody = (ctx: AdapterContext, target: Target, request: ChatRequest, stream: boolean) => {
  const tools = request.tools ?? []
  return compact({
    model: target.model,
    messages: request.messages.map(wireMessage),
    tools: tools.length === 0
      ? undefined
      : tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })),
    tool_choice: tools.length === 0 ? undefined : "auto",
    max_tokens: request.maxTokens,
    temperature: temperatureOf(ctx, request),
    stream: stream ? true : undefined,
    stream_options: stream && supportsStreamOptions(target) ? { include_usage: true } : undefined
  })
}

const WireUsage = Schema.Struct({ prompt_tokens: Schema.Number, completion_tokens: Schema.Number })
const optionalNull = <S extends Schema.Schema.Any>(s: S) => Schema.optional(Schema.NullOr(s))

const Completion = Schema.Struct({
  choices: Schema.NonEmptyArray(Schema.Struct({
    message: Schema.Struct({
      content: optionalNull(Schema.String),
      tool_calls: optionalNull(Schema.Array(Schema.Struct({
        id: Schema.optional(Schema.String),
        function: Schema.Struct({ name: Schema.String, arguments: Schema.optional(Schema.Unknown) })
      })))
    }),
    finish_reason: optionalNull(Schema.String)
  })),
  usage: optionalNull(WireUsage)
})

const Chunk = Schema.Struct({
  choices: optionalNull(Schema.Array(Schema.Struct({
    delta: optionalNull(Schema.Struct({
      content: optionalNull(Schema.String),
      tool_calls: optionalNull(Schema.Array(Schema.Struct({
        index: Schema.optional(Schema.Number),
        id: optionalNull(Schema.String),
        function: optionalNull(Schema.Struct({ name: optionalNull(Schema.String), arguments: optionalNull(Schema.String) }))
      })))
    })),
    finish_reason: optionalNull(Schema.String)
  }))),
  usage: optionalNull(WireUsage)
})

export const finishReason = (reason: string | null | undefined, hasToolCalls: boolean): FinishReason => {
  if (hasToolCalls) return "tool_calls"
  switch (reason) {
    case "stop":
    case "length":
    case "content_filter":
    case "tool_calls":
      return reason
    case "function_call":
      return "tool_calls"
    case null:
    case undefined:
      return "stop"
    default:
      return "other"
  }
}

const usageOf = (u: typeof WireUsage.Type | null | undefined): Usage =>
  u == null ? noUsage : { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens }

const decodeCompletion = decodeAnswer(Completion, "chat completion")
const decodeChunk = decodeAnswer(Chunk, "chat completion chunk")

export const make = (ctx: AdapterContext): Adapter => {
  const call = (target: Target, request: ChatRequest, stream: boolean) => ({
    url: chatUrl(ctx, target),
    body: requestBody(ctx, target, request, stream),
    auth: target.provider === "azure" ? keyHeaderAuth(ctx, target, "api-key") : bearerAuth(ctx, target)
  })

  return {
    chat: (target, request) =>
      ctx.transport.postJson(call(target, request, false)).pipe(
        Effect.flatMap(decodeCompletion),
        Effect.map((answer) => {
          const choice = answer.choices[0]
          const toolCalls = (choice.message.tool_calls ?? []).map((c, i) => toolCall(c.id ?? `call_${i}`, c.function.name, c.function.arguments))
          return {
            text: choice.message.content ?? "",
            toolCalls,
            finishReason: finishReason(choice.finish_reason, toolCalls.length > 0),
            usage: usageOf(answer.usage)
          }
        })
      ),
    stream: (target, request) =>
      reduceChunks(
        sseJson(ctx.transport.postStream(call(target, request, true))).pipe(
          Stream.mapEffect((e) => decodeChunk(e.json))
        ),
        () => ({ calls: new ToolCallAssembler(), finish: undefined as string | undefined, usage: noUsage }),
        (state, chunk) => {
          if (chunk.usage != null) state.usage = usageOf(chunk.usage)
          return (chunk.choices ?? []).flatMap((choice) => {
            if (choice.finish_reason != null) state.finish = choice.finish_reason
            const text = choice.delta?.content
            return [
              ...(text ? [{ _tag: "TextDelta", text } as const] : []),
              ...(choice.delta?.tool_calls ?? []).flatMap((c, i) =>
                state.calls.add(c.index ?? i, {
                  id: c.id ?? undefined,
                  name: c.function?.name ?? undefined,
                  args: c.function?.arguments ?? undefined
                })
              )
            ]
          })
        },
        (state) => {
          const hasCalls = state.calls.size > 0
          return [
            ...state.calls.flush(),
            { _tag: "Finish", finishReason: finishReason(state.finish, hasCalls), usage: state.usage }
          ]
        }
      )
  }
}
