/**
 * Many requests on one keep-alive connection leave nothing behind: the body reader takes its listeners off the
 * request once it has the body or its 413 (after draining the rest), and the running gateway serves a long run of
 * requests on one socket without a MaxListenersExceeded warning.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { readIncoming } from "../src/Edge/Body.ts"
import { initializeBody, mcpHeaders } from "./support/Client.ts"
import { GatewayUnderTest, gatewayLayer, InfraLive, token } from "./support/Harness.ts"

const events = ["data", "end", "error", "aborted", "close", "readable"] as const
const countsOf = (emitter: NodeJS.EventEmitter) => events.map((e) => emitter.listenerCount(e))

interface Sent {
  readonly status: number
  readonly body: string
  readonly reused: boolean
}

/** One request through `agent` (one socket, kept alive). */
const send = (agent: Http.Agent, url: string, body: string, headers: Record<string, string> = {}) =>
  new Promise<Sent>((resolve, reject) => {
    const req = Http.request(url, { method: "POST", agent, headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => void (text += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, reused: req.reusedSocket }))
    })
    req.on("error", reject)
    req.end(body)
  })

/** Captures process warnings named `name` while `effect` runs. */
const warningsDuring = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const seen: Array<Error> = []
      const listener = (w: Error) => void (w.name === name && seen.push(w))
      process.on("warning", listener)
      return { seen, listener }
    }),
    ({ seen }) => Effect.map(effect, (a) => [a, seen] as const),
    ({ listener }) => Effect.sync(() => void process.off("warning", listener))
  )

describe("body reader on one keep-alive connection", () => {
  it.scopedLive("listener counts on the request and the socket are back to where they were after every read", () =>
    Effect.gen(function* () {
      const mismatches: Array<string> = []
      const outcomes: Array<string> = []
      const server = Http.createServer((req, res) => {
        const before = { req: countsOf(req), socket: countsOf(req.socket) }
        void Effect.runPromise(Effect.either(readIncoming(req, 1024))).then((result) => {
          const after = { req: countsOf(req), socket: countsOf(req.socket) }
          if (JSON.stringify(before) !== JSON.stringify(after)) {
            mismatches.push(`${req.url}: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`)
          }
          const outcome = Either.isRight(result) ? `ok:${result.right.length}` : result.left._tag
          outcomes.push(outcome)
          res.end(outcome)
        })
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))),
        () =>
          Effect.promise(() =>
            new Promise<void>((resolve) => {
              server.closeAllConnections()
              server.close(() => resolve())
            })
          )
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
      yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
      const bodies = ["{}", "", "x".repeat(1024), "y".repeat(3000)]
      const sent = yield* Effect.promise(async () => {
        const all: Array<Sent> = []
        for (let i = 0; i < 120; i++) all.push(await send(agent, `${url}/${i}`, bodies[i % bodies.length]!))
        return all
      })
      assert.deepStrictEqual(mismatches, [])
      // Every request after the first came on the same socket, and each got its own answer.
      assert.isTrue(sent.slice(1).every((s) => s.reused))
      assert.deepStrictEqual(sent.slice(0, 4).map((s) => s.body), ["ok:2", "ok:0", "ok:1024", "PayloadTooLarge"])
      assert.strictEqual(outcomes.length, 120)
    }))
})

layer(InfraLive, { excludeTestServices: true })("gateway on one keep-alive connection", (it) => {
  // One user opens ~70 sessions here: their own cap (default 10) is raised out of the way.
  it.layer(gatewayLayer({ rateLimit: { maxSessionsPerUser: 1000 } }))("many requests", (it) => {
    it.scoped("200 requests on one socket: all answered, no MaxListenersExceeded warning", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
        yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
        const headers = { ...mcpHeaders, accept: "application/json", authorization: `Bearer ${sre}` }
        const init = yield* Effect.promise(() => send(agent, `${gw.url}/mcp`, initializeBody, headers))
        assert.strictEqual(init.status, 200)
        const [sent, warnings] = yield* warningsDuring(
          "MaxListenersExceededWarning",
          Effect.promise(async () => {
            const all: Array<Sent> = []
            for (let i = 0; i < 200; i++) {
              // Alternate the paths a body takes: a new session, a parse error, a JSON-RPC error without a session.
              const body = [initializeBody, "{not json", JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list" })][i % 3]!
              all.push(await send(agent, `${gw.url}/mcp`, body, headers))
            }
            return all
          })
        )
        assert.deepStrictEqual(warnings.map((w) => w.message), [])
        assert.isTrue(sent.every((s) => s.reused), "a request did not reuse the socket")
        assert.deepStrictEqual([...new Set(sent.map((s) => s.status))].sort(), [200, 400])
      }))
  })
})
