/**
 * The console server on loopback against the real dev issuer (code flow with PKCE, a registered confidential
 * client) and a recording upstream standing in for the gateway: it answers what it was sent, holds an SSE stream
 * between two events until the test releases it, and never answers `/mcp` (the timeout). Plus a browser-like
 * client: a cookie jar and manual redirects, so every hop of the sign-in is visible.
 */
import { DevIssuer } from "@kubemend/devkit/Issuer"
import { freePort } from "@kubemend/devkit/FreePort"
import { listenScoped } from "@kubemend/devkit/Listen"
import { apiPort, ServerConfig } from "@kubemend/core/Servers"
import { Context, Deferred, Duration, Effect, Layer, Redacted, Runtime } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ConsoleConfig, type ConsoleSettings } from "../src/ConsoleConfig.ts"
import { ConsoleLive } from "../src/Service.ts"

const client = { id: "kubemend-console", secret: "console-client-secret" }

/** A built app stand-in: index.html and one hashed asset. */
const appDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "console-app-"))
  Fs.mkdirSync(Path.join(dir, "assets"))
  Fs.writeFileSync(Path.join(dir, "index.html"), "<!doctype html><title>Kubemend console</title><script type=module src=/assets/app-1.js></script>")
  Fs.writeFileSync(Path.join(dir, "assets", "app-1.js"), "console.log('app')")
  return dir
}

export interface Upstream {
  readonly url: string
  /** Lets the held SSE stream send its second event. */
  readonly release: Effect.Effect<void>
}

const makeUpstream = Effect.gen(function* () {
  const runtime = yield* Effect.runtime<never>()
  let gate = yield* Deferred.make<void>()
  const listening = yield* listenScoped((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (req.url === "/a2a/stream") {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        res.write("event: status/update\ndata: {\"n\":1}\n\n")
        void Runtime.runPromise(runtime)(Deferred.await(gate)).then(() => {
          res.end("event: status/update\ndata: {\"n\":2}\n\n")
        })
        return
      }
      if (req.url === "/mcp") return // never answered: the proxy's timeout ends it
      res.writeHead(200, { "content-type": "application/json", "set-cookie": "upstream=1" })
      res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") }))
    })
  })
  const upstream: Upstream = {
    url: listening.url,
    release: Effect.gen(function* () {
      yield* Deferred.succeed(gate, undefined)
      gate = yield* Deferred.make<void>()
    })
  }
  return upstream
})

export class Harness extends Context.Tag("console/test/Harness")<Harness, {
  readonly url: string
  readonly issuer: DevIssuer["Type"]
  readonly upstream: Upstream
  readonly settings: ConsoleSettings
}>() {}

export const harness = (overrides: Partial<ConsoleSettings> = {}) =>
  Layer.unwrapScoped(Effect.gen(function* () {
    const issuer = yield* DevIssuer
    const upstream = yield* makeUpstream
    // The callback is only known once the port is; a fixed free port would race, so bind first, then configure.
    const settings: ConsoleSettings = {
      gatewayURL: upstream.url,
      issuerURL: issuer.url,
      clientId: client.id,
      clientSecret: Redacted.make(client.secret),
      cookieSecret: Redacted.make("a-cookie-secret-of-32-characters"),
      redirectURL: "http://127.0.0.1:0/oauth2/callback",
      staticDir: appDir(),
      refreshBefore: Duration.seconds(60),
      sessionLifetime: Duration.hours(12),
      a2aTimeout: Duration.seconds(3600),
      mcpTimeout: Duration.millis(300),
      ...overrides
    }
    const port = yield* freePort
    const resolved = { ...settings, redirectURL: `http://127.0.0.1:${port}/oauth2/callback` }
    return Layer.effect(
      Harness,
      Effect.gen(function* () {
        return { url: `http://127.0.0.1:${yield* apiPort}`, issuer, upstream, settings: resolved }
      })
    ).pipe(Layer.provideMerge(ConsoleLive), Layer.provide(Layer.mergeAll(ConsoleConfig.layer(resolved), ServerConfig.layer({ port }))))
  })).pipe(Layer.provideMerge(DevIssuer.layer({ clients: { [client.id]: client.secret } })))
