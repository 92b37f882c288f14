import { FetchHttpClient, HttpClient, HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { layerTracingWith } from "../src/Tracing.ts"

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"

describe("tracing", () => {
  it.live("continues the caller's W3C trace on the server and propagates it on outgoing calls", () =>
    Effect.gen(function* () {
      const exporter = new InMemorySpanExporter()
      let forwarded: string | undefined
      // A downstream service that records the traceparent it receives.
      const downstream = createServer((req, res) => {
        forwarded = req.headers["traceparent"] as string | undefined
        res.end("ok")
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((r) => downstream.listen(0, "127.0.0.1", () => r()))),
        () => Effect.promise(() => new Promise<void>((r) => downstream.close(() => r())))
      )
      const downstreamUrl = `http://127.0.0.1:${(downstream.address() as { port: number }).port}/`

      const app = HttpRouter.empty.pipe(
        HttpRouter.get(
          "/work",
          Effect.gen(function* () {
            const client = yield* HttpClient.HttpClient
            yield* client.get(downstreamUrl)
            return HttpServerResponse.text("done")
          }).pipe(Effect.withSpan("Test.work"))
        )
      )
      const server = HttpServer.serve(app).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 })),
        Layer.provide(FetchHttpClient.layer),
        Layer.provide(layerTracingWith("test", new SimpleSpanProcessor(exporter)))
      )
      const context = yield* Layer.build(server)
      const port = yield* Effect.map(HttpServer.HttpServer, (s) => (s.address as { port: number }).port).pipe(
        Effect.provide(context)
      )
      const response = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/work`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } }))
      expect(response.status).toBe(200)
      yield* Effect.sleep("50 millis")

      const spans = exporter.getFinishedSpans()
      const names = spans.map((s) => s.name)
      expect(names).toContain("Test.work")
      expect(spans.every((s) => s.spanContext().traceId === traceId)).toBe(true)
      expect(forwarded).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    }).pipe(Effect.scoped))
})
