/**
 * `vertex`: Gemini on the Google cloud AI platform (`generateContent`, `streamGenerateContent?alt=sse`), bearer
 * token from oauth2 or the API key.
 */
import { Effect, Schema, Stream } from "effect"
import type { Adapter, AdapterContext } from "./Adapter.ts"
import { temperatureOf } from "./Adapter.ts"
import { bearerAuth } from "./Auth.ts"
import { compact } from "./Config.ts"
import { alternate, decodeAnswer, idSequence, reduceChunks, sseJson, toolCall, toolNames, vertexModelUrl } from "./Shared.ts"
import type { Target } from "./Target.ts"
import type { ChatDelta, ChatRequest, FinishReason, ToolCall, Usage } from "./Types.ts"

type Part =
  | { text: string }
  | { functionCall: { name: string; args: unknown }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: { content: string } } }

/** Keywords of JSON Schema the platform's OpenAPI-subset `Schema` rejects. */
const unsupported = new Set(["$schema", "$id", "additionalProperties"])

export const sanitizeSchema = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sanitizeSchema)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).filter(([k]) => !unsupported.has(k)).map(([k, v]) => [k, sanitizeSchema(v)]))
    : value

export const requestBody = (ctx: AdapterContext, request: ChatRequest) => {
  const nameOf = toolNames(request.messages)
  const system = request.messages.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n\n")
  const contents = alternate(request.messages.flatMap((m): Array<{ role: "user" | "assistant"; content: Array<Part> }> => {
    switch (m.role) {
      case "system":
        return []
      case "user":
        return [{ role: "user", content: m.content === "" ? [] : [{ text: m.content }] }]
      case "assistant":
        return [{
          role: "assistant",
          content: [
            ...(m.content === "" ? [] : [{ text: m.content }]),
            ...(m.toolCalls ?? []).map((c) => ({
              functionCall: { name: c.name, args: c.arguments },
              ...(c.signature === undefined ? {} : { thoughtSignature: c.signature })
            }))
          ]
        }]
      case "tool":
        return [{ role: "user", content: [{ functionResponse: { name: nameOf(m), response: { content: m.content } } }] }]
    }
  })).map((turn) => ({ role: turn.role === "assistant" ? "model" : "user", parts: turn.content }))
  const tools = request.tools ?? []
  const generationConfig = compact({ temperature: temperatureOf(ctx, request), maxOutputTokens: request.maxTokens })
  return compact({
    contents,
    systemInstruction: system === "" ? undefined : { parts: [{ text: system }] },
    tools: tools.length === 0
      ? undefined
      : [{
        functionDeclarations: tools.map((t) => ({
          name: t.name,
          description: t.description,
          parameters: sanitizeSchema(t.parameters)
        }))
      }],
    generationConfig: Object.keys(generationConfig).length === 0 ? undefined : generationConfig
  })
}

const Answer = Schema.Struct({
  candidates: Schema.optional(Schema.Array(Schema.Struct({
    content: Schema.optional(Schema.Struct({
      parts: Schema.optional(Schema.Array(Schema.Struct({
        text: Schema.optional(Schema.String),
        thought: Schema.optional(Schema.Boolean),
        thoughtSignature: Schema.optional(Schema.String),
        functionCall: Schema.optional(Schema.Struct({
          id: Schema.optional(Schema.String),
          name: Schema.String,
          args: Schema.optional(Schema.Unknown)
        }))
      })))
    })),
    finishReason: Schema.optional(Schema.String)
  }))),
  usageMetadata: Schema.optional(Schema.Struct({
    promptTokenCount: Schema.optional(Schema.Number),
    candidatesTokenCount: Schema.optional(Schema.Number)
  }))
})
type Answer = typeof Answer.Type

export const finishReason = (reason: string | undefined, hasToolCalls: boolean, blocked: boolean): FinishReason => {
  if (hasToolCalls) return "tool_calls"
  if (blocked) return "content_filter"
  switch (reason) {
    case undefined:
    case "STOP":
      return "stop"
    case "MAX_TOKENS":
      return "length"
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
      return "content_filter"
    default:
      return "other"
  }
}

/** Text and tool calls of one answer (or one stream chunk); `nextId` numbers calls Gemini gave no id. */
const partsOf = (answer: Answer, nextId: () => string) => {
  const parts = answer.candidates?.[0]?.content?.parts ?? []
  return {
    text: parts.flatMap((p) => (p.text !== undefined && p.thought !== true ? [p.text] : [])).join(""),
    toolCalls: parts.flatMap((p): Array<ToolCall> =>
      p.functionCall === undefined ? [] : [{
        ...toolCall(p.functionCall.id ?? nextId(), p.functionCall.name, p.functionCall.args ?? {}),
        ...(p.thoughtSignature === undefined ? {} : { signature: p.thoughtSignature })
      }]
    )
  }
}

const usageOf = (answer: Answer, previous: Usage): Usage =>
  answer.usageMetadata === undefined ? previous : {
    promptTokens: answer.usageMetadata.promptTokenCount ?? previous.promptTokens,
    completionTokens: answer.usageMetadata.candidatesTokenCount ?? previous.completionTokens
  }

const decode = decodeAnswer(Answer, "generateContent answer")

export const make = (ctx: AdapterContext): Adapter => {
  const call = (target: Target, request: ChatRequest, stream: boolean) => ({
    url: `${vertexModelUrl(ctx.settings, target, "google", "us-central1")}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
    body: requestBody(ctx, request),
    auth: bearerAuth(ctx, target)
  })

  return {
    chat: (target, request) =>
      ctx.transport.postJson(call(target, request, false)).pipe(
        Effect.flatMap(decode),
        Effect.map((answer) => {
          const { text, toolCalls } = partsOf(answer, idSequence(request.messages))
          const candidate = answer.candidates?.[0]
          return {
            text,
            toolCalls,
            finishReason: finishReason(candidate?.finishReason, toolCalls.length > 0, candidate === undefined),
            usage: usageOf(answer, { promptTokens: 0, completionTokens: 0 })
          }
        })
      ),
    stream: (target, request) =>
      reduceChunks(
        sseJson(ctx.transport.postStream(call(target, request, true))).pipe(Stream.mapEffect((e) => decode(e.json))),
        () => ({
          nextId: idSequence(request.messages),
          calls: 0,
          finish: undefined as string | undefined,
          usage: { promptTokens: 0, completionTokens: 0 } as Usage
        }),
        (state, answer): ReadonlyArray<ChatDelta> => {
          const { text, toolCalls } = partsOf(answer, state.nextId)
          state.usage = usageOf(answer, state.usage)
          state.finish = answer.candidates?.[0]?.finishReason ?? state.finish
          state.calls += toolCalls.length
          // Gemini sends each function call whole, so start and completion go out together.
          return [
            ...(text === "" ? [] : [{ _tag: "TextDelta", text } as const]),
            ...toolCalls.flatMap((c) => [
              { _tag: "ToolCallStart", id: c.id, name: c.name } as const,
              { _tag: "ToolCallDone", toolCall: c } as const
            ])
          ]
        },
        (state) => [{ _tag: "Finish", finishReason: finishReason(state.finish, state.calls > 0, false), usage: state.usage }]
      )
  }
}
