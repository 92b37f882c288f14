/**
 * An interactive investigation's events reach the MCP session's standalone GET stream whichever gateway replica
 * holds it: two gateways share a real Redis and one real agent, and the official SDK client sends its POSTs to
 * one replica and opens its GET stream on the other (or on the same one). Each event arrives once: the call's own
 * events and the follow after it carry the same events, and a later call on the other replica moves the follow
 * there. With one replica and no Valkey, events still arrive once each.
 */
import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect, Option, Redacted } from "effect"
import { createServer, request as httpRequest, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { type Gateway, InfraLive, startGateway, token } from "./support/Harness.ts"
import { checkoutScripts as scripts, startRealAgent } from "./support/RealAgent.ts"
import { requireRedis, skipRedis, uniquePrefix, unreachable, valkeySettings } from "./support/Redis.ts"

const rr_id = "rr-checkout-crash"

interface Event {
  readonly event: string
  readonly seq: number
  readonly analysis?: string
  readonly name?: string
}

/** An SDK client whose GET stream goes to `route.get` and whose POSTs go to `route.post`; ready once the GET stream is open. */
const routedClient = (bearer: string, route: { get: Gateway; post: Gateway }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      let opened = (): void => undefined
      const streamOpen = new Promise<void>((resolve) => opened = resolve)
      const transport = new StreamableHTTPClientTransport(new URL("http://balancer/mcp"), {
        requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
        fetch: async (input, init) => {
          const get = (init?.method ?? "GET") === "GET"
          const response = await fetch(String(input).replace("http://balancer", (get ? route.get : route.post).url), init)
          if (get && response.ok) opened()
          return response
        }
      })
      const client = new Client({ name: "ha-test", version: "1.0.0" })
      const events: Array<Event> = []
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void events.push(n.params.data as Event))
      await client.connect(transport)
      await streamOpen
      return { client, events }
    }),
    ({ client }) => Effect.promise(() => client.close().catch(() => undefined))
  )

const callJson = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async () => {
    const r = await client.callTool({ name, arguments: args })
    const text = (r.content as Array<{ text: string }>).map((x) => x.text).join("")
    if (r.isError === true) throw new Error(`${name}: ${text}`)
    return JSON.parse(text)
  })

/** Waits until `done` holds (real I/O: the agent's model answers on its own time); `seen` tells what there was. */
const eventually = (done: () => boolean, what: string, seen: () => unknown) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 20_000
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${what}: got ${JSON.stringify(seen()).slice(0, 2000)}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  })

/** `read()` comes to `expected` and stays there (a stopped follow does not come back after its backoff). */
const settles = (read: () => string, expected: string) =>
  Effect.zipRight(
    eventually(() => read() === expected, `expected ${expected}`, read),
    Effect.promise(async () => {
      for (let i = 0; i < 30; i++) {
        await new Promise((r) => setTimeout(r, 25))
        if (read() !== expected) throw new Error(`${expected} did not last: ${read()}`)
      }
    })
  )

const until = (events: ReadonlyArray<Event>, done: (es: ReadonlyArray<Event>) => boolean, what: string) => eventually(() => done(events), what, () => events)

/** An HTTP proxy to the agent at `target` that counts the investigation event streams open through it (one gateway's follows). */
const countingProxy = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly url: string; readonly streams: () => number; readonly server: HttpServer }>((resolve) => {
        let streams = 0
        const server = createServer((req, res) => {
          const upstream = httpRequest(new URL(req.url ?? "/", target), { method: req.method ?? "GET", headers: req.headers }, (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(res)
          })
          upstream.on("error", () => res.destroy())
          if ((req.url ?? "").endsWith("/stream")) {
            streams++
            res.on("close", () => {
              streams--
              upstream.destroy()
            })
          }
          req.pipe(upstream)
        })
        server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, streams: () => streams, server }))
      })
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

/** The model answered `n` times (the opening analysis, then each message). */
const answered = (n: number) => (es: ReadonlyArray<Event>) => es.filter((e) => e.event === "interactive_state" && e.analysis === "answered").length >= n

/** Every event once, in the agent's order. */
const assertEachOnce = (events: ReadonlyArray<Event>) => {
  const seqs = events.map((e) => e.seq)
  assert.deepStrictEqual(seqs, [...new Set(seqs)].sort((x, y) => x - y), JSON.stringify(events.map((e) => [e.seq, e.event])))
}

/** Two replicas sharing a fresh Redis prefix, and the real agent behind both, each through its own counting proxy. */
const replicas = Effect.gen(function* () {
  yield* requireRedis
  const agent = yield* startRealAgent({ scripts, latencyMs: 150, startWait: Duration.millis(50) })
  const valkey = Option.some(valkeySettings(yield* uniquePrefix("notify")))
  const replica = Effect.gen(function* () {
    const proxy = yield* countingProxy(agent.url)
    const gateway = yield* startGateway({ agentUrl: Option.some(proxy.url), agentToken: { token: Redacted.make(agent.restToken) }, valkey })
    return { ...gateway, follows: proxy.streams }
  })
  return [yield* replica, yield* replica] as const
})

const title = "investigation events across gateway replicas"
layer(InfraLive, { excludeTestServices: true })(skipRedis ? `${title} (skipped: ${unreachable})` : title, (it) => {
  it.scoped.skipIf(skipRedis)(
    "the GET stream on B gets the events of calls served by A, each once; one replica follows at a time",
    () =>
      Effect.gen(function* () {
        const [a, b] = yield* replicas
        const route = { get: b, post: a }
        const { client, events } = yield* routedClient(yield* token("sre"), route)
        /** The investigation's event streams open from A and from B: one follow, on the replica of the last call. */
        const follows = () => `${a.follows()},${b.follows()}`

        const started = yield* callJson(client, "svc_investigate", { rr_id })
        assert.deepInclude(started, { status: "active", analysis: "running" })
        yield* until(events, answered(1), "the opening analysis on B's stream")
        assert.isTrue(events.some((e) => e.event === "tool_call" && e.name === "cluster_get"))
        assertEachOnce(events)
        yield* settles(follows, "1,0")

        route.post = b
        yield* callJson(client, "svc_message", { rr_id, message: "and now?" })
        yield* settles(follows, "0,1")
        yield* until(events, answered(2), "the message turn")
        route.post = a
        yield* callJson(client, "svc_message", { rr_id, message: "anything else?" })
        yield* settles(follows, "1,0")
        yield* until(events, answered(3), "the second message turn")
        yield* Effect.sleep(Duration.millis(500))
        assertEachOnce(events)
      }),
    { timeout: 60_000 }
  )

  /** An investigation's opening analysis and one message turn, then each event must have arrived once. */
  const investigateAndMessage = (client: Client, events: ReadonlyArray<Event>) =>
    Effect.gen(function* () {
      assert.deepInclude(yield* callJson(client, "svc_investigate", { rr_id }), { status: "active" })
      yield* until(events, answered(1), "the opening analysis")
      yield* callJson(client, "svc_message", { rr_id, message: "and now?" })
      yield* until(events, answered(2), "the message turn")
      yield* Effect.sleep(Duration.millis(500))
      assertEachOnce(events)
    })

  it.scoped.skipIf(skipRedis)("the GET stream and the calls on one replica of two: each event once", () =>
    Effect.gen(function* () {
      const [a] = yield* replicas
      const { client, events } = yield* routedClient(yield* token("sre"), { get: a, post: a })
      yield* investigateAndMessage(client, events)
    }), { timeout: 60_000 })

  it.scoped("one replica without Valkey: the follow and the next call carry the same events, sent once", () =>
    Effect.gen(function* () {
      const agent = yield* startRealAgent({ scripts, latencyMs: 150, startWait: Duration.millis(50) })
      const gw = yield* startGateway({ agentUrl: Option.some(agent.url), agentToken: { token: Redacted.make(agent.restToken) } })
      const { client, events } = yield* routedClient(yield* token("sre"), { get: gw, post: gw })
      yield* investigateAndMessage(client, events)
    }), { timeout: 60_000 })
})
