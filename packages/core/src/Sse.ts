/**
 * The one SSE parser for every event stream we read (LLM providers, the MCP SDK's answers): Effect's, from
 * @effect/experimental, which keeps at most `maxEventSize` code units of a pending event. An event that never ends
 * fails with `SseEventTooLarge` instead of growing memory without bound.
 */
import * as Sse from "@effect/experimental/Sse"
import { Effect, Schema, Stream } from "effect"

/** 1 MiB: far above one LLM delta or one JSON-RPC answer we send. */
export const defaultMaxEventSize = 1024 * 1024

export class SseEventTooLarge extends Schema.TaggedError<SseEventTooLarge>()("SseEventTooLarge", {
  maxEventSize: Schema.Number,
  message: Schema.String
}) {}

const tooLarge = (maxEventSize: number) =>
  new SseEventTooLarge({
    maxEventSize,
    message: `SSE event never ended and is larger than ${
      maxEventSize >= 1024 * 1024 && maxEventSize % (1024 * 1024) === 0 ? `${maxEventSize / (1024 * 1024)} MiB` : `${maxEventSize} characters`
    }`
  })

export interface SseEvent {
  readonly event: string
  readonly data: string
}

/** A parser fed text as it arrives; `end` flushes an event the stream closed without a blank line after. */
export const makeSseParser = (maxEventSize: number = defaultMaxEventSize) => {
  const events: Array<SseEvent> = []
  const parser = Sse.makeParser((e) => {
    if (e._tag === "Event") events.push({ event: e.event, data: e.data })
  }, { maxEventSize })
  const feed = (text: string): ReadonlyArray<SseEvent> | SseEventTooLarge => {
    if (parser.feed(text) !== undefined) return tooLarge(maxEventSize)
    return events.splice(0)
  }
  return { feed, end: () => feed("\n\n") }
}

/** The events of a text stream. */
export const decodeSse =
  (maxEventSize: number = defaultMaxEventSize) => <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<SseEvent, E | SseEventTooLarge, R> =>
    Stream.suspend(() => {
      const parser = makeSseParser(maxEventSize)
      const step = (out: ReadonlyArray<SseEvent> | SseEventTooLarge) => out instanceof SseEventTooLarge ? Effect.fail(out) : Effect.succeed(out)
      return text.pipe(
        Stream.mapEffect((chunk) => step(parser.feed(chunk))),
        Stream.concat(Stream.fromEffect(Effect.suspend(() => step(parser.end())))),
        Stream.flattenIterables
      )
    })

/** The events of a web body, for Promise code; throws `SseEventTooLarge`. */
export async function* sseEventsOf(body: ReadableStream<Uint8Array>, maxEventSize: number = defaultMaxEventSize) {
  const parser = makeSseParser(maxEventSize)
  const decoder = new TextDecoder()
  const reader = body.getReader()
  try {
    for (;;) {
      const chunk = await reader.read()
      // At the end, what the decoder still holds, then the blank line `end` would add.
      const out = parser.feed(chunk.done ? `${decoder.decode()}\n\n` : decoder.decode(chunk.value, { stream: true }))
      if (out instanceof SseEventTooLarge) throw out
      yield* out
      if (chunk.done) return
    }
  } finally {
    reader.cancel().catch(() => undefined)
  }
}
