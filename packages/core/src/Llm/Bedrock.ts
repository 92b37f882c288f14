/**
 * `bedrock`: the Converse API (`POST /model/{modelId}/converse`), bearer API key or SigV4.
 * `stream` calls `converse` and replays the answer as deltas: `converse-stream` frames its events in the binary AWS
 * event-stream encoding, which is not worth a decoder for one provider.
 */
import { Clock, Effect, Option, Redacted, Schema, Stream } from "effect"
import type { Adapter, AdapterContext } from "./Adapter.ts"
import { temperatureOf } from "./Adapter.ts"
import { bearerAuth } from "./Auth.ts"
import { compact } from "./Config.ts"
import type { Auth } from "./Transport.ts"
import { alternate, decodeAnswer, responseDeltas, toolCall, trimSlash } from "./Shared.ts"
import { signV4 } from "./SigV4.ts"
import type { Target } from "./Target.ts"
import type { ChatRequest, FinishReason } from "./Types.ts"

const defaultRegion = "us-east-1"

type Block =
  | { text: string }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: ReadonlyArray<{ text: string }> } }

export const requestBody = (ctx: AdapterContext, request: ChatRequest) => {
  const system = request.messages.flatMap((m) => (m.role === "system" ? [{ text: m.content }] : []))
  const messages = alternate(request.messages.flatMap((m): Array<{ role: "user" | "assistant"; content: Array<Block> }> => {
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
            ...(m.toolCalls ?? []).map((c) => ({ toolUse: { toolUseId: c.id, name: c.name, input: c.arguments } }))
          ]
        }]
      case "tool":
        return [{ role: "user", content: [{ toolResult: { toolUseId: m.toolCallId, content: [{ text: m.content }] } }] }]
    }
  }))
  const tools = request.tools ?? []
  const inference = compact({ maxTokens: request.maxTokens, temperature: temperatureOf(ctx, request) })
  return compact({
    messages,
    system: system.length === 0 ? undefined : system,
    inferenceConfig: Object.keys(inference).length === 0 ? undefined : inference,
    toolConfig: tools.length === 0 ? undefined : {
      tools: tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters } } }))
    }
  })
}

const Answer = Schema.Struct({
  output: Schema.Struct({
    message: Schema.Struct({
      content: Schema.Array(Schema.Struct({
        text: Schema.optional(Schema.String),
        toolUse: Schema.optional(Schema.Struct({
          toolUseId: Schema.String,
          name: Schema.String,
          input: Schema.optional(Schema.Unknown)
        }))
      }))
    })
  }),
  stopReason: Schema.optional(Schema.String),
  usage: Schema.optional(Schema.Struct({ inputTokens: Schema.Number, outputTokens: Schema.Number }))
})

export const finishReason = (reason: string | undefined): FinishReason => {
  switch (reason) {
    case undefined:
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "tool_use":
      return "tool_calls"
    case "max_tokens":
      return "length"
    case "guardrail_intervened":
    case "content_filtered":
      return "content_filter"
    default:
      return "other"
  }
}

const sigV4Auth = (ctx: AdapterContext, region: string): Auth => (url, body) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.promise(() =>
      signV4({
        method: "POST",
        url,
        headers: { "content-type": "application/json", accept: "application/json" },
        body,
        region,
        service: "bedrock",
        credentials: compact({
          accessKeyId: ctx.settings.awsAccessKeyId ?? "",
          secretAccessKey: Redacted.value(ctx.settings.awsSecretAccessKey ?? Redacted.make("")),
          sessionToken: ctx.settings.awsSessionToken === undefined ? undefined : Redacted.value(ctx.settings.awsSessionToken)
        }),
        now: new Date(now)
      })
    ))

const decode = decodeAnswer(Answer, "converse answer")

export const make = (ctx: AdapterContext): Adapter => {
  const chat: Adapter["chat"] = (target: Target, request: ChatRequest) => {
    const region = ctx.settings.bedrockRegion ?? defaultRegion
    const origin = target.endpoint ?? `https://bedrock-runtime.${region}.amazonaws.com`
    return ctx.transport.postJson({
      url: `${trimSlash(origin)}/model/${encodeURIComponent(target.model)}/converse`,
      body: requestBody(ctx, request),
      // A Bedrock API key is a bearer token; without one, sign with the access key pair.
      auth: target.apiKey === undefined ? sigV4Auth(ctx, region) : bearerAuth({ ...ctx, oauth2: Option.none() }, target)
    }).pipe(
      Effect.flatMap(decode),
      Effect.map((answer) => {
        const blocks = answer.output.message.content
        return {
          text: blocks.flatMap((b) => (b.text === undefined ? [] : [b.text])).join(""),
          toolCalls: blocks.flatMap((b) => b.toolUse === undefined ? [] : [toolCall(b.toolUse.toolUseId, b.toolUse.name, b.toolUse.input ?? {})]),
          finishReason: finishReason(answer.stopReason),
          usage: {
            promptTokens: answer.usage?.inputTokens ?? 0,
            completionTokens: answer.usage?.outputTokens ?? 0
          }
        }
      })
    )
  }
  return {
    chat,
    stream: (target, request) => Stream.fromIterableEffect(Effect.map(chat(target, request), responseDeltas))
  }
}
