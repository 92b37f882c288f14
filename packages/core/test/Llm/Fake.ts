/**
 * A tiny loopback HTTP server for provider fakes: records every request and answers with a handler.
 */
import { NodeFileSystem, NodeHttpClient } from "@effect/platform-node"
import type { IncomingHttpHeaders, ServerResponse } from "node:http"
import { Duration, Effect, Layer } from "effect"
import { listenScoped } from "@kubemend/devkit/Listen"
import * as Llm from "../../src/Llm.ts"

interface Recorded {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: IncomingHttpHeaders
  readonly raw: string
  readonly body: any
}

export type Handler = (req: Recorded, res: ServerResponse, n: number) => void

interface Fake {
  readonly url: string
  readonly requests: Array<Recorded>
  /** Resolves when the server has received `count` requests in total. */
  readonly received: (count: number) => Promise<void>
}

export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

export const sse = (res: ServerResponse, events: ReadonlyArray<{ event?: string; data: unknown }>) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  for (const e of events) {
    res.write(`${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`)
  }
  res.end()
}

export const fake = (handler: Handler) =>
  Effect.gen(function* () {
    const requests: Array<Recorded> = []
    const waiters: Array<{ count: number; resolve: () => void }> = []
    const listening = yield* listenScoped((req, res) => {
      const parts: Array<Buffer> = []
      req.on("data", (c: Buffer) => parts.push(c))
      req.on("end", () => {
        const raw = Buffer.concat(parts).toString("utf8")
        const url = new URL(req.url ?? "/", "http://x")
        let body: unknown
        try {
          body = raw === "" ? undefined : JSON.parse(raw)
        } catch {
          body = raw
        }
        const recorded = { method: req.method ?? "", path: url.pathname, query: url.searchParams, headers: req.headers, raw, body }
        requests.push(recorded)
        for (const w of waiters) if (requests.length >= w.count) w.resolve()
        handler(recorded, res, requests.length)
      })
    })
    return {
      url: listening.url,
      requests,
      received: (count) => new Promise<void>((r) => (requests.length >= count ? r() : waiters.push({ count, resolve: r })))
    } satisfies Fake as Fake
  })

export const platform = Layer.merge(NodeHttpClient.layer, NodeFileSystem.layer)

/** A live Llm for the test's scope, with fast retries unless the test sets them. */
export const llm = (input: Llm.LlmSettingsInput) => Llm.make({ retryBaseDelay: Duration.millis(1), ...input }).pipe(Effect.provide(platform))
