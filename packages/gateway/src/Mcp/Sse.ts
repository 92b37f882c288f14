/**
 * Moving the SDK transport's web `Response` onto the Node response. An SSE body is written as it comes, and a
 * reader that does not keep up is dropped once its unsent bytes pass the limit (the SDK enqueues without
 * backpressure, so waiting would let one slow client grow memory without bound). A JSON client of a
 * request that the SDK answers with SSE gets the JSON-RPC responses collected into one JSON body.
 */
import type { ServerResponse } from "node:http"
import { sseEventsOf } from "@kubemend/core/Sse"
import { Deferred, type Duration, Effect } from "effect"

/**
 * The SDK response's headers for our own response, less the hop-by-hop ones: whether the connection stays open is
 * Node's call (it closes connections once draining), and a body Node frames itself has no length.
 */
export const forwardedHeaders = (response: Response): Record<string, string> => Object.fromEntries([...response.headers].filter(([k]) => !hopByHop.has(k)))

const hopByHop = new Set(["connection", "keep-alive", "transfer-encoding", "content-length"])

const keepaliveComment = ": keepalive\n\n"

/**
 * Pipes `response` (an SSE stream) to the client; completes when the stream or the connection ends. A `: keepalive`
 * comment goes out every `keepaliveInterval` while it is open (the SDK writes whole events per chunk, so a comment
 * never lands inside one).
 */
export const pipeSse = (
  res: ServerResponse,
  method: string,
  response: Response,
  maxBufferedBytes: number,
  keepaliveInterval: Duration.DurationInput
) =>
  Effect.gen(function* () {
    const reader = response.body!.getReader()
    const ended = yield* Deferred.make<void>()
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      reader.cancel().catch(() => undefined)
      if (!res.writableEnded) res.end()
      Deferred.unsafeDone(ended, Effect.void)
    }
    res.writeHead(response.status, forwardedHeaders(response))
    // A GET stream may wait long for its first event: its headers go now. A POST's answers follow at once, and
    // the headers travel with the first of them (one write instead of two).
    if (method === "GET") res.flushHeaders()
    res.on("close", finish)
    void (async () => {
      try {
        for (;;) {
          const chunk = await reader.read()
          if (chunk.done || finished) break
          if (res.writableLength > maxBufferedBytes) {
            // Slow reader: what it has not taken yet is over the limit; cut it off rather than buffer for it.
            res.destroy()
            break
          }
          res.write(chunk.value)
        }
      } catch {
        res.destroy()
      }
      finish()
    })()
    const keepalive = Effect.sleep(keepaliveInterval).pipe(
      Effect.zipRight(Effect.sync(() => {
        if (!finished) res.write(keepaliveComment)
      })),
      Effect.forever
    )
    yield* Effect.raceFirst(Deferred.await(ended), keepalive).pipe(Effect.onInterrupt(() => Effect.sync(finish)))
  })

type Id = string | number

/** The ids of the requests in a posted JSON-RPC message or batch. */
export const requestIds = (body: unknown): ReadonlyArray<Id> =>
  (Array.isArray(body) ? body : [body]).flatMap((m) => {
    const o = m as { id?: unknown; method?: unknown }
    return typeof o === "object" && o !== null && typeof o.method === "string" && (typeof o.id === "string" || typeof o.id === "number")
      ? [o.id]
      : []
  })

/**
 * Reads SSE events until every id in `ids` has its response; answers them in request order. Events go through
 * core's bounded parser: one that never ends rejects with `SseEventTooLarge` once it passes `maxEventSize`.
 */
export const collectResponses = async (
  response: Response,
  ids: ReadonlyArray<Id>,
  maxEventSize: number
): Promise<ReadonlyArray<unknown>> => {
  const found = new Map<Id, unknown>()
  if (ids.length === 0) return []
  for await (const event of sseEventsOf(response.body!, maxEventSize)) {
    try {
      const message = JSON.parse(event.data) as { id?: Id; result?: unknown; error?: unknown }
      if (message.id !== undefined && ("result" in message || "error" in message)) found.set(message.id, message)
    } catch {
      // not JSON: ignore the event
    }
    if (found.size >= ids.length) break
  }
  return ids.flatMap((id) => (found.has(id) ? [found.get(id)] : []))
}
