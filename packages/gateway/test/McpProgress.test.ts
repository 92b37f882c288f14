/**
 * Long calls stay alive on the wire. Under the TestClock: the heartbeat of a call that asked for progress, the
 * `: keepalive` comment on a piped MCP SSE stream (a real Node response) and on an A2A event stream, each every
 * interval and none after the stream ends. Through the running gateway with the official MCP client (a short
 * interval, live clock): a `svc_watch` carrying a `progressToken` gets heartbeats and one progress per phase change,
 * a call without one gets none, and the POST answer stream and the session's GET stream carry keepalive comments.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { Progress } from "@modelcontextprotocol/sdk/types.js"
import { Chunk, Duration, Effect, Fiber, Runtime, Stream, TestClock } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { sseFrames } from "../src/A2a/InvokeEndpoint.ts"
import { heartbeat } from "../src/Mcp/Server.ts"
import { pipeSse } from "../src/Mcp/Sse.ts"
import { call, connect, initializeBody, mcpHeaders } from "./support/Client.ts"
import { Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { apiGroup, namespace } from "./support/Seed.ts"

const crv = `${apiGroup}/v1alpha1`
const interval = Duration.seconds(15)
const yieldReal = Effect.promise(() => new Promise((r) => setTimeout(r, 20)))

/** Reads a response body into `into.text` as it arrives. */
const reading = (res: Response) => {
  const into = { text: "" }
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }))
      if (done) return
      into.text += decoder.decode(value, { stream: true })
    }
  })()
  return { into, cancel: () => reader.cancel().catch(() => undefined) }
}

const count = (text: string, part: string) => text.split(part).length - 1

describe("keepalives under the TestClock", () => {
  it.effect("a heartbeat every interval while the call runs, none after", () =>
    Effect.gen(function* () {
      const beats: Array<number> = []
      const fiber = yield* Effect.sleep(Duration.seconds(40)).pipe(
        Effect.as("answer"),
        heartbeat(interval)(() => Effect.sync(() => void beats.push(beats.length))),
        Effect.fork
      )
      yield* TestClock.adjust(Duration.seconds(14))
      assert.strictEqual(beats.length, 0)
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual(beats.length, 1)
      yield* TestClock.adjust(Duration.seconds(25))
      assert.strictEqual(yield* Fiber.join(fiber), "answer")
      assert.strictEqual(beats.length, 2)
      yield* TestClock.adjust(Duration.minutes(5))
      assert.strictEqual(beats.length, 2)
      // Without a progress token the call runs as it is.
      assert.strictEqual(yield* Effect.succeed(1).pipe(heartbeat(interval)(undefined)), 1)
    }))

  it.scoped("an MCP SSE stream piped to a Node response gets a keepalive comment every interval", () =>
    Effect.gen(function* () {
      const run = Runtime.runFork(yield* Effect.runtime<never>())
      let push: (s: string) => void = () => {}
      let end: () => void = () => {}
      const sdkStream = new ReadableStream<Uint8Array>({
        start: (c) => {
          push = (s) => c.enqueue(new TextEncoder().encode(s))
          end = () => c.close()
        }
      })
      const server = Http.createServer((_req, res) => {
        run(pipeSse(res, "GET", new Response(sdkStream, { headers: { "content-type": "text/event-stream" } }), 1 << 20, interval))
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.sync(() => server.close())
      )
      const res = reading(yield* Effect.promise(() => fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)))
      yield* yieldReal
      push("event: message\ndata: {}\n\n")
      yield* TestClock.adjust(interval)
      yield* yieldReal
      yield* TestClock.adjust(interval)
      yield* yieldReal
      assert.strictEqual(res.into.text, "event: message\ndata: {}\n\n: keepalive\n\n: keepalive\n\n")
      end()
      yield* yieldReal
      yield* TestClock.adjust(Duration.minutes(1))
      yield* yieldReal
      assert.strictEqual(count(res.into.text, ": keepalive"), 2)
    }))

  it.effect("an A2A event stream gets a keepalive comment every interval until its events end", () =>
    Effect.gen(function* () {
      const decoder = new TextDecoder()
      const fiber = yield* sseFrames(1, Stream.fromEffect(Effect.as(Effect.sleep(Duration.seconds(40)), { kind: "task" })), interval).pipe(
        Stream.runCollect,
        Effect.fork
      )
      yield* TestClock.adjust(Duration.seconds(40))
      const frames = Chunk.toReadonlyArray(yield* Fiber.join(fiber)).map((f) => decoder.decode(f))
      assert.deepStrictEqual(frames, [
        ": keepalive\n\n",
        ": keepalive\n\n",
        `data: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { kind: "task" } })}\n\n`
      ])
    }))
})

const short = Duration.millis(300)

const setPhase = (name: string, phase: string) =>
  Effect.map(Infra, ({ kube }) => {
    const rr = kube.get(crv, "RemediationRequest", name, namespace)!
    kube.put({ ...rr, status: { overallPhase: phase } })
  })

const waitFor = (done: () => boolean, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 200 && !done(); i++) yield* Effect.sleep("25 millis")
    assert.isTrue(done(), `never saw ${what}`)
  })

layer(InfraLive, { excludeTestServices: true })("long MCP calls through the gateway", (it) => {
  it.scoped("svc_watch with a progressToken: heartbeats while it waits, one progress per phase change", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway({ streamKeepaliveInterval: short })
      const c = yield* connect(gw.url, yield* token("sre"))
      const progress: Array<Progress> = []
      const watched = c.client.callTool({ name: "svc_watch", arguments: { rr_id: "rr-cache-pending" } }, undefined, {
        onprogress: (p) => void progress.push(p),
        resetTimeoutOnProgress: true
      })
      yield* waitFor(() => progress.length >= 2, "two heartbeats")
      assert.deepStrictEqual(progress.slice(0, 2).map((p) => p.message), ["svc_watch is still running", "svc_watch is still running"])
      assert.isBelow(progress[0]!.progress, progress[1]!.progress)
      yield* setPhase("rr-cache-pending", "Analyzing")
      yield* waitFor(() => progress.some((p) => p.message === "RemediationRequest/rr-cache-pending is Analyzing"), "the phase change")
      yield* setPhase("rr-cache-pending", "Completed")
      const result = yield* Effect.promise(() => watched)
      const answer = JSON.parse((result.content as Array<{ text: string }>)[0]!.text)
      assert.deepStrictEqual(answer.events.map((e: { phase: string }) => e.phase), ["Processing", "Analyzing", "Completed"])
      assert.strictEqual(progress.at(-1)!.message, "RemediationRequest/rr-cache-pending is Completed")
      yield* setPhase("rr-cache-pending", "Processing")
    }))

  it.scoped("without a progressToken no progress; the POST answer stream and the GET stream carry keepalive comments", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway({ streamKeepaliveInterval: short })
      const sre = yield* token("sre")
      const init = yield* Effect.promise(() =>
        fetch(`${gw.url}/mcp`, { method: "POST", headers: { ...mcpHeaders, authorization: `Bearer ${sre}` }, body: initializeBody })
      )
      const session = init.headers.get("mcp-session-id")!
      yield* Effect.promise(() => init.text())
      const headers = { ...mcpHeaders, authorization: `Bearer ${sre}`, "mcp-session-id": session, "mcp-protocol-version": "2025-03-26" }
      yield* Effect.promise(() =>
        fetch(`${gw.url}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })
      )
      const post = reading(
        yield* Effect.promise(() =>
          fetch(`${gw.url}/mcp`, {
            method: "POST",
            headers,
            body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "svc_watch", arguments: { rr_id: "rr-cache-pending" } } })
          })
        )
      )
      const get = reading(yield* Effect.promise(() => fetch(`${gw.url}/mcp`, { method: "GET", headers: { ...headers, accept: "text/event-stream" } })))
      yield* waitFor(() => count(post.into.text, ": keepalive\n\n") >= 2 && get.into.text.includes(": keepalive\n\n"), "keepalives on both streams")
      yield* setPhase("rr-cache-pending", "Completed")
      yield* waitFor(() => post.into.text.includes("\"id\":2"), "the answer")
      assert.include(post.into.text, "Completed")
      assert.notInclude(post.into.text, "notifications/progress")
      yield* Effect.promise(() => get.cancel())
      yield* setPhase("rr-cache-pending", "Processing")

      const c = yield* connect(gw.url, sre)
      const quick: Array<Progress> = []
      const listed = yield* Effect.promise(() =>
        c.client.callTool({ name: "svc_list_remediations", arguments: { phase: "Blocked" } }, undefined, { onprogress: (p) => void quick.push(p) })
      )
      assert.notStrictEqual(listed.isError, true)
      assert.deepStrictEqual(quick, [])
      assert.strictEqual((yield* call(c, "svc_list_remediations", { phase: "Blocked" })).json.count, 1)
    }))
})
