/** RELIABILITY.md case 39 on the MCP side: an answer stream whose event never ends is cut at the limit. */
import { describe, expect, it } from "vitest"
import { collectResponses } from "../src/Mcp/Sse.ts"

const endless = () => {
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    start: (c) => c.enqueue(new TextEncoder().encode("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"")),
    pull: (c) => {
      sent += 64 * 1024
      c.enqueue(new TextEncoder().encode("x".repeat(64 * 1024)))
    }
  })
  return { response: new Response(body, { headers: { "content-type": "text/event-stream" } }), sent: () => sent }
}

describe("MCP answers read from an SSE stream", () => {
  it("stop at the size limit with a clear error when an event never ends", async () => {
    const { response, sent } = endless()
    await expect(collectResponses(response, [1], 1024 * 1024)).rejects.toThrow(/SSE event never ended and is larger than 1 MiB/)
    expect(sent()).toBeLessThan(4 * 1024 * 1024)
  })

  it("still collect the answers of a well-formed stream, in request order", async () => {
    const text = [2, 1].map((id) => `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"n":${id}}}\n\n`).join("")
    const response = new Response(text, { headers: { "content-type": "text/event-stream" } })
    expect(await collectResponses(response, [1, 2], 1024)).toEqual([
      { jsonrpc: "2.0", id: 1, result: { n: 1 } },
      { jsonrpc: "2.0", id: 2, result: { n: 2 } }
    ])
  })
})
