/**
 * A tiny loopback HTTP server for provider fakes: records every request and answers with a handler.
 */
import { NodeFileSystem, NodeHttpClient } from "@effect/platform-node"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Duration, Effect, Layer } from "effect"
import * as Llm from "../../src/Llm.ts"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: IncomingHttpHeaders
  readonly raw: string
  readonly body: any
}

export type Handler = (req: Recorded, res: ServerResponse, n: number) => void

export interface Fake {
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
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ fake: Fake; close: () => Promise<void> }>((resolve) => {
        const requests: Array<Recorded> = []
        const waiters: Array<{ count: number; resolve: () => void }> = []
        const server = createServer((req, res) => {
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
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({
            fake: {
              url: `http://127.0.0.1:${port}`,
              requests,
              received: (count) =>
                new Promise<void>((r) => (requests.length >= count ? r() : waiters.push({ count, resolve: r })))
            },
            close: () =>
              new Promise<void>((r) => {
                server.closeAllConnections()
                server.close(() => r())
              })
          })
        })
      })
    ),
    (s) => Effect.promise(() => s.close())
  ).pipe(Effect.map((s) => s.fake))

export const platform = Layer.merge(NodeHttpClient.layer, NodeFileSystem.layer)

/** A live Llm for the test's scope, with fast retries unless the test sets them. */
export const llm = (input: Llm.LlmSettingsInput) =>
  Llm.make({ retryBaseDelay: Duration.millis(1), ...input }).pipe(Effect.provide(platform))
