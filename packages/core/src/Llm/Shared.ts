/**
 * Pieces every adapter shares: URL rules, argument parsing, answer decoding, SSE/NDJSON framing and delta assembly.
 */
import { Effect, Schema, Stream } from "effect"
import { decodeSse, type SseEvent, SseEventTooLarge } from "../Sse.ts"
import type { LlmSettings } from "./Config.ts"
import { LlmBadRequest } from "./Errors.ts"
import type { Target } from "./Target.ts"
import type { ChatDelta, ChatResponse, FinishReason, Message, ToolCall, Usage } from "./Types.ts"

export const trimSlash = (url: string) => url.replace(/\/+$/, "")

/** OpenAI-style origins are configured without `/v1`; add it unless the path already ends with it. */
export const withV1 = (endpoint: string) => {
  const base = trimSlash(endpoint)
  return base.endsWith("/v1") ? base : `${base}/v1`
}

/**
 * A model's URL on the Google cloud AI platform (`vertex` = publisher google, `vertex_ai` = publisher anthropic).
 * `endpoint` replaces the regional origin.
 */
export const vertexModelUrl = (settings: LlmSettings, target: Target, publisher: string, defaultLocation: string) => {
  const location = settings.vertexLocation ?? defaultLocation
  const origin = target.endpoint ??
    (location === "global" ? "https://aiplatform.googleapis.com" : `https://${location}-aiplatform.googleapis.com`)
  const e = encodeURIComponent
  return `${trimSlash(origin)}/v1/projects/${e(settings.vertexProject ?? "")}/locations/${e(location)}/publishers/${e(publisher)}/models/${e(target.model)}`
}

/** Merges consecutive turns of one role; Anthropic and Bedrock require alternating user/assistant turns. */
export const alternate = <B>(turns: ReadonlyArray<{ role: "user" | "assistant"; content: ReadonlyArray<B> }>) =>
  turns.reduce<Array<{ role: "user" | "assistant"; content: Array<B> }>>((out, turn) => {
    const last = out[out.length - 1]
    if (turn.content.length === 0) return out
    if (last !== undefined && last.role === turn.role) last.content.push(...turn.content)
    else out.push({ role: turn.role, content: [...turn.content] })
    return out
  }, [])

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Builds a tool call from argument text or an object; anything but a JSON object is kept raw for the caller. */
export const toolCall = (id: string, name: string, args: unknown): ToolCall => {
  const raw = typeof args === "string" ? args : JSON.stringify(args ?? null)
  let value = args
  if (typeof args === "string") {
    try {
      value = args.trim() === "" ? {} : JSON.parse(args)
    } catch {
      value = undefined
    }
  }
  return isRecord(value) ? { id, name, arguments: value } : { id, name, arguments: {}, rawArguments: raw }
}

/** Tool result messages may omit the tool name; providers that need it (Gemini, Ollama) find it here. */
export const toolNames = (messages: ReadonlyArray<Message>) => {
  const names = new Map<string, string>()
  for (const m of messages) {
    if (m.role === "assistant") { for (const c of m.toolCalls ?? []) names.set(c.id, c.name) }
  }
  return (m: Extract<Message, { role: "tool" }>) => m.name ?? names.get(m.toolCallId) ?? "unknown_tool"
}

/**
 * Ids for providers that give tool calls none (Gemini, older Ollama): numbered after the calls already in the
 * conversation, so they stay unique across turns and replay identically.
 */
export const idSequence = (messages: ReadonlyArray<Message>) => {
  let n = messages.reduce((count, m) => count + (m.role === "assistant" ? m.toolCalls?.length ?? 0 : 0), 0)
  return () => `call_${n++}`
}

export const noUsage: Usage = { promptTokens: 0, completionTokens: 0 }

/** Decodes a provider answer; a shape we do not understand is a bad request (retrying cannot help). */
export const decodeAnswer = <A, I>(schema: Schema.Schema<A, I>, what: string) => {
  const decode = Schema.decodeUnknown(schema)
  return (value: unknown): Effect.Effect<A, LlmBadRequest> =>
    Effect.mapError(decode(value), (e) => new LlmBadRequest({ message: `unexpected ${what}: ${e.message}` }))
}

/** Server-sent events through core's bounded parser; an event that never ends is an unreadable answer. */
export const sseEvents = <E>(bytes: Stream.Stream<Uint8Array, E>): Stream.Stream<SseEvent, E | LlmBadRequest> =>
  bytes.pipe(
    Stream.decodeText(),
    decodeSse(),
    Stream.mapError((e) => (e instanceof SseEventTooLarge ? new LlmBadRequest({ message: `unreadable stream: ${e.message}` }) : e))
  )

const parseJsonChunk = (text: string) =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: () => new LlmBadRequest({ message: `unreadable stream chunk: ${text.slice(0, 200)}` })
  })

/** Newline-delimited JSON (Ollama). */
export const ndjson = <E>(bytes: Stream.Stream<Uint8Array, E>): Stream.Stream<unknown, E | LlmBadRequest> =>
  bytes.pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.filter((line) => line.trim() !== ""),
    Stream.mapEffect(parseJsonChunk)
  )

/** SSE `data:` payloads as JSON, ending at OpenAI's `[DONE]` sentinel. */
export const sseJson = <E>(bytes: Stream.Stream<Uint8Array, E>): Stream.Stream<
  { event: string; json: unknown },
  E | LlmBadRequest
> =>
  sseEvents(bytes).pipe(
    Stream.takeWhile((e) => e.data !== "[DONE]"),
    Stream.mapEffect((e) => Effect.map(parseJsonChunk(e.data), (json) => ({ event: e.event, json })))
  )

/**
 * Runs a provider's chunk reducer over a stream. The reducer keeps its own (per-stream) state; `end` flushes what
 * is still open (assembled tool calls, the final usage).
 */
export const reduceChunks = <C, E, S>(
  chunks: Stream.Stream<C, E>,
  init: () => S,
  step: (state: S, chunk: C) => ReadonlyArray<ChatDelta>,
  end: (state: S) => ReadonlyArray<ChatDelta>
): Stream.Stream<ChatDelta, E> =>
  Stream.suspend(() => {
    const state = init()
    return chunks.pipe(
      Stream.mapConcat((chunk) => step(state, chunk)),
      Stream.concat(Stream.suspend(() => Stream.fromIterable(end(state))))
    )
  })

/** A complete answer as the deltas a stream would have produced (adapters without native streaming). */
export const responseDeltas = (response: ChatResponse): ReadonlyArray<ChatDelta> => [
  ...(response.text === "" ? [] : [{ _tag: "TextDelta", text: response.text } as const]),
  ...response.toolCalls.flatMap((toolCall) => [
    { _tag: "ToolCallStart", id: toolCall.id, name: toolCall.name } as const,
    { _tag: "ToolCallDone", toolCall } as const
  ]),
  { _tag: "Finish", finishReason: response.finishReason, usage: response.usage }
]

/** Folds deltas back into one answer (what `chat` would have returned). */
export const collect = <E, R>(deltas: Stream.Stream<ChatDelta, E, R>): Effect.Effect<ChatResponse, E, R> =>
  Stream.runFold(
    deltas,
    { text: "", toolCalls: [] as Array<ToolCall>, finishReason: "stop" as FinishReason, usage: noUsage },
    (acc, d) => {
      switch (d._tag) {
        case "TextDelta":
          return { ...acc, text: acc.text + d.text }
        case "ToolCallDone":
          return { ...acc, toolCalls: [...acc.toolCalls, d.toolCall] }
        case "Finish":
          return { ...acc, finishReason: d.finishReason, usage: d.usage }
        default:
          return acc
      }
    }
  )

/** Tool-call fragments keyed by position, assembled once the stream says they are complete. */
export class ToolCallAssembler {
  private readonly open = new Map<number, { id: string; name: string; args: string; started: boolean }>()

  add(index: number, fragment: { id?: string | undefined; name?: string | undefined; args?: string | undefined }) {
    const current = this.open.get(index) ?? { id: "", name: "", args: "", started: false }
    if (fragment.id) current.id = fragment.id
    if (fragment.name) current.name += fragment.name
    if (fragment.args) current.args += fragment.args
    this.open.set(index, current)
    if (current.started || current.name === "") return []
    current.started = true
    if (current.id === "") current.id = `call_${index}`
    return [{ _tag: "ToolCallStart", id: current.id, name: current.name } as const]
  }

  /** Completes every open call in index order. */
  flush(): ReadonlyArray<ChatDelta> {
    const done = [...this.open.entries()].sort(([a], [b]) => a - b).map(([index, c]) => ({
      _tag: "ToolCallDone" as const,
      toolCall: toolCall(c.id || `call_${index}`, c.name, c.args)
    }))
    this.open.clear()
    return done
  }

  get size() {
    return this.open.size
  }
}
