/**
 * The Anthropic messages wire: `anthropic` (`/v1/messages`, `x-api-key`) and `vertex_ai` (Claude on the Google cloud
 * AI platform: `rawPredict`/`streamRawPredict`, bearer token, `anthropic_version` in the body).
 */
import { Effect, Schema, Stream } from "effect"
import type { Adapter, AdapterContext } from "./Adapter.ts"
import { temperatureOf } from "./Adapter.ts"
import { bearerAuth, keyHeaderAuth } from "./Auth.ts"
import { compact } from "./Config.ts"
import { LlmUnavailable } from "./Errors.ts"
import { alternate, decodeAnswer, noUsage, reduceChunks, sseJson, ToolCallAssembler, toolCall, vertexModelUrl, withV1 } from "./Shared.ts"
import type { Target } from "./Target.ts"
import type { ChatRequest, FinishReason } from "./Types.ts"

const apiVersion = "2023-06-01"
const vertexVersion = "vertex-2023-10-16"
/** The messages API requires `max_tokens`; used when the request gives none. */
const defaultMaxTokens = 4096

type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string }
type Turn = { role: "user" | "assistant"; content: Array<Block> }

export const requestBody = (ctx: AdapterContext, target: Target, request: ChatRequest, stream: boolean) => {
  const system = request.messages.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n\n")
  const turns = alternate(request.messages.flatMap((m): Array<Turn> => {
    switch (m.role) {
      case "system":
        return []
      case "user":
        return [{ role: "user", content: m.content === "" ? [] : [{ type: "text", text: m.content }] }]
      case "assistant":
        return [{
          role: "assistant",
          content: [
            ...(m.content === "" ? [] : [{ type: "text", text: m.content } as const]),
            ...(m.toolCalls ?? []).map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.arguments } as const))
          ]
        }]
      case "tool":
        return [{
          role: "user",
          content: [{ type: "tool_result", tool_use_id: m.toolCallId, content: m.content }]
        }]
    }
  }))
  const tools = request.tools ?? []
  const vertex = target.provider === "vertex_ai"
  return compact({
    model: vertex ? undefined : target.model,
    anthropic_version: vertex ? vertexVersion : undefined,
    max_tokens: request.maxTokens ?? defaultMaxTokens,
    system: system === "" ? undefined : system,
    messages: turns,
    tools: tools.length === 0
      ? undefined
      : tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
    temperature: temperatureOf(ctx, request),
    stream: stream ? true : undefined
  })
}

const Answer = Schema.Struct({
  content: Schema.Array(Schema.Struct({
    type: Schema.String,
    text: Schema.optional(Schema.String),
    id: Schema.optional(Schema.String),
    name: Schema.optional(Schema.String),
    input: Schema.optional(Schema.Unknown)
  })),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Schema.Struct({ input_tokens: Schema.Number, output_tokens: Schema.Number })
})

const Event = Schema.Struct({
  type: Schema.String,
  index: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.Struct({
    usage: Schema.optional(Schema.Struct({
      input_tokens: Schema.optional(Schema.Number),
      output_tokens: Schema.optional(Schema.Number)
    }))
  })),
  content_block: Schema.optional(Schema.Struct({
    type: Schema.String,
    id: Schema.optional(Schema.String),
    name: Schema.optional(Schema.String),
    text: Schema.optional(Schema.String)
  })),
  delta: Schema.optional(Schema.Struct({
    type: Schema.optional(Schema.String),
    text: Schema.optional(Schema.String),
    partial_json: Schema.optional(Schema.String),
    stop_reason: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(Schema.Struct({
    input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
    output_tokens: Schema.optional(Schema.NullOr(Schema.Number))
  })),
  error: Schema.optional(Schema.Struct({ type: Schema.String, message: Schema.String }))
})

export const finishReason = (reason: string | null | undefined): FinishReason => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
    case null:
    case undefined:
      return "stop"
    case "tool_use":
      return "tool_calls"
    case "max_tokens":
      return "length"
    case "refusal":
      return "content_filter"
    default:
      return "other"
  }
}

const decodeMessage = decodeAnswer(Answer, "messages answer")
const decodeEvent = decodeAnswer(Event, "messages stream event")

export const make = (ctx: AdapterContext): Adapter => {
  const call = (target: Target, request: ChatRequest, stream: boolean) =>
    target.provider === "vertex_ai"
      ? {
        url: `${vertexModelUrl(ctx.settings, target, "anthropic", "us-east5")}:${stream ? "streamRawPredict" : "rawPredict"}`,
        body: requestBody(ctx, target, request, stream),
        auth: bearerAuth(ctx, target)
      }
      : {
        url: `${withV1(target.endpoint ?? "https://api.anthropic.com")}/messages`,
        body: requestBody(ctx, target, request, stream),
        auth: keyHeaderAuth(ctx, target, "x-api-key", { "anthropic-version": apiVersion })
      }

  return {
    chat: (target, request) =>
      ctx.transport.postJson(call(target, request, false)).pipe(
        Effect.flatMap(decodeMessage),
        Effect.map((answer) => ({
          text: answer.content.flatMap((b) => (b.type === "text" && b.text !== undefined ? [b.text] : [])).join(""),
          toolCalls: answer.content.flatMap((b) => b.type === "tool_use" ? [toolCall(b.id ?? "", b.name ?? "", b.input ?? {})] : []),
          finishReason: finishReason(answer.stop_reason),
          usage: { promptTokens: answer.usage.input_tokens, completionTokens: answer.usage.output_tokens }
        }))
      ),
    stream: (target, request) =>
      reduceChunks(
        sseJson(ctx.transport.postStream(call(target, request, true))).pipe(
          Stream.mapEffect((e) => decodeEvent(e.json)),
          Stream.mapEffect((e) =>
            e.type === "error"
              ? new LlmUnavailable({ message: `stream error: ${e.error?.type}: ${e.error?.message}` })
              : Effect.succeed(e)
          )
        ),
        () => ({ calls: new ToolCallAssembler(), stop: undefined as string | null | undefined, usage: noUsage }),
        (state, e) => {
          const usage = e.message?.usage ?? e.usage
          if (usage != null) {
            state.usage = {
              promptTokens: usage.input_tokens ?? state.usage.promptTokens,
              completionTokens: usage.output_tokens ?? state.usage.completionTokens
            }
          }
          if (e.delta?.stop_reason != null) state.stop = e.delta.stop_reason
          const index = e.index ?? 0
          if (e.type === "content_block_start" && e.content_block?.type === "tool_use") {
            return state.calls.add(index, { id: e.content_block.id, name: e.content_block.name })
          }
          if (e.type === "content_block_start" && e.content_block?.text) {
            return [{ _tag: "TextDelta", text: e.content_block.text }]
          }
          if (e.type === "content_block_delta" && e.delta?.type === "text_delta" && e.delta.text) {
            return [{ _tag: "TextDelta", text: e.delta.text }]
          }
          if (e.type === "content_block_delta" && e.delta?.type === "input_json_delta") {
            return state.calls.add(index, { args: e.delta.partial_json })
          }
          return []
        },
        (state) => [...state.calls.flush(), { _tag: "Finish", finishReason: finishReason(state.stop), usage: state.usage }]
      )
  }
}
