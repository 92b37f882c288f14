/**
 * Moving the SDK transport's web `Response` onto the Node response. An SSE body is written as it comes, and a
 * reader that does not keep up is dropped once its unsent bytes pass the limit (the SDK enqueues without
 * backpressure, so waiting would let one slow client grow memory without bound). A JSON client of a
 * request that the SDK answers with SSE gets the JSON-RPC responses collected into one JSON body.
 */
import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"

/**
 * The SDK response's headers for our own response, less the hop-by-hop ones: whether the connection stays open is
 * Node's call (it closes connections once draining), and a body Node frames itself has no length.
 */
export const forwardedHeaders = (response: Response): Record<string, string> =>
  Object.fromEntries([...response.headers].filter(([k]) => !hopByHop.has(k)))

const hopByHop = new Set(["connection", "keep-alive", "transfer-encoding", "content-length"])

/** Pipes `response` (an SSE stream) to the client; completes when the stream or the connection ends. */
export const pipeSse = (request: HttpServerRequest.HttpServerRequest, response: Response, maxBufferedBytes: number) =>
  Effect.async<void>((resume) => {
    const res = NodeHttpServerRequest.toServerResponse(request)
    const reader = response.body!.getReader()
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      reader.cancel().catch(() => undefined)
      if (!res.writableEnded) res.end()
      resume(Effect.void)
    }
    res.writeHead(response.status, forwardedHeaders(response))
    // A GET stream may wait long for its first event: its headers go now. A POST's answers follow at once, and
    // the headers travel with the first of them (one write instead of two).
    if (request.method === "GET") res.flushHeaders()
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
    return Effect.sync(finish)
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

/** Reads SSE events until every id in `ids` has its response; answers them in request order. */
export const collectResponses = async (response: Response, ids: ReadonlyArray<Id>): Promise<ReadonlyArray<unknown>> => {
  const found = new Map<Id, unknown>()
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  try {
    while (found.size < ids.length) {
      const chunk = await reader.read()
      if (chunk.done) break
      buffer += chunk.value
      let end: number
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const event = buffer.slice(0, end)
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "")
        const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n")
        if (data === "") continue
        try {
          const message = JSON.parse(data) as { id?: Id; result?: unknown; error?: unknown }
          if (message.id !== undefined && ("result" in message || "error" in message)) found.set(message.id, message)
        } catch {
          // not JSON: ignore the event
        }
      }
    }
  } finally {
    reader.cancel().catch(() => undefined)
  }
  return ids.flatMap((id) => (found.has(id) ? [found.get(id)] : []))
}
