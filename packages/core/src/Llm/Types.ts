/**
 * The provider-neutral chat vocabulary every adapter translates to and from its wire format.
 */
import { Schema } from "effect"

/** Investigation phases that `phaseModels` can route to a different provider or model. */
export const Phase = Schema.Literal("rca", "workflow_discovery", "validation")
export type Phase = typeof Phase.Type

/**
 * A tool call requested by the model; `arguments` is the parsed JSON object. When the model's arguments are not a
 * JSON object, `arguments` is empty and `rawArguments` keeps the text so the caller can ask the model to correct it.
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  rawArguments: Schema.optional(Schema.String),
  /** Opaque provider token that must go back with the call in later turns (Gemini thought signatures). */
  signature: Schema.optional(Schema.String)
})
export type ToolCall = typeof ToolCall.Type

export const SystemMessage = Schema.Struct({ role: Schema.Literal("system"), content: Schema.String })
export const UserMessage = Schema.Struct({ role: Schema.Literal("user"), content: Schema.String })
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.String,
  toolCalls: Schema.optional(Schema.Array(ToolCall))
})
/** The result of one tool call; `name` is looked up from the matching assistant tool call when left out. */
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  toolCallId: Schema.String,
  name: Schema.optional(Schema.String),
  content: Schema.String
})

/** One conversation turn, discriminated by `role`. */
export const Message = Schema.Union(SystemMessage, UserMessage, AssistantMessage, ToolMessage)
export type Message = typeof Message.Type

/** A tool the model may call; `parameters` is a JSON Schema object. */
export const ToolDefinition = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type ToolDefinition = typeof ToolDefinition.Type

export interface ChatRequest {
  readonly messages: ReadonlyArray<Message>
  readonly tools?: ReadonlyArray<ToolDefinition>
  /** Overrides the configured (and phase-selected) model for this call. */
  readonly model?: string
  /** Selects the `phaseModels` override for this phase, when one is configured. */
  readonly phase?: Phase
  readonly maxTokens?: number
  /** Overrides the configured temperature; when neither is set, none is sent. */
  readonly temperature?: number
}

export const FinishReason = Schema.Literal("stop", "tool_calls", "length", "content_filter", "other")
export type FinishReason = typeof FinishReason.Type

export const Usage = Schema.Struct({ promptTokens: Schema.Number, completionTokens: Schema.Number })
export type Usage = typeof Usage.Type

export const ChatResponse = Schema.Struct({
  text: Schema.String,
  toolCalls: Schema.Array(ToolCall),
  finishReason: FinishReason,
  usage: Usage
})
export type ChatResponse = typeof ChatResponse.Type

/**
 * Streaming events: text as it arrives, a tool call's start (id and name known) and the complete call once its
 * arguments are assembled, and exactly one `Finish` at the end with the token counts.
 */
export type ChatDelta =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "ToolCallStart"; readonly id: string; readonly name: string }
  | { readonly _tag: "ToolCallDone"; readonly toolCall: ToolCall }
  | { readonly _tag: "Finish"; readonly finishReason: FinishReason; readonly usage: Usage }

/** Constructors for the four roles. */
export const message = {
  system: (content: string): Message => ({ role: "system", content }),
  user: (content: string): Message => ({ role: "user", content }),
  assistant: (content: string, toolCalls?: ReadonlyArray<ToolCall>): Message =>
    toolCalls === undefined || toolCalls.length === 0
      ? { role: "assistant", content }
      : { role: "assistant", content, toolCalls },
  tool: (toolCallId: string, content: string, name?: string): Message =>
    name === undefined ? { role: "tool", toolCallId, content } : { role: "tool", toolCallId, content, name }
} as const
