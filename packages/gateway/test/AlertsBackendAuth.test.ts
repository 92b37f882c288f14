/**
 * `svc_list_alerts` against a metrics backend shaped like the operator's default one (the in-cluster querier): HTTPS
 * with a certificate from a private CA and a bearer token required. With `metricsBackend.caFile` and
 * `metricsBackend.tokenFile` the alerts come back, the token is read again on each call (rotation); without the CA
 * or the token the call answers the backend unavailable, never an internal error.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generateTls } from "@kubemend/devkit/kube/Tls"
import { call, connect } from "./support/Client.ts"
import { InfraLive, startGateway, token } from "./support/Harness.ts"

const alert = {
  labels: { alertname: "KubePodCrashLooping", severity: "critical", namespace: "demo" },
  annotations: { summary: "crash looping" },
  state: "firing",
  activeAt: new Date().toISOString()
}

/** An HTTPS `/api/v1/alerts` that answers only `Bearer <accepted>`. */
const secureBackend = Effect.gen(function* () {
  const tls = yield* Effect.promise(() => generateTls(["127.0.0.1"]))
  const state = { accepted: "token-1", seen: [] as Array<string> }
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    state.seen.push(req.headers.authorization ?? "")
    if (req.headers.authorization !== `Bearer ${state.accepted}`) {
      res.writeHead(401).end("Unauthorized")
      return
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "success", data: { alerts: [alert] } }))
  })
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
    () =>
      Effect.sync(() => {
        server.closeAllConnections()
        server.close()
      })
  )
  const dir = mkdtempSync(join(tmpdir(), "kubemend-alerts-"))
  const caFile = join(dir, "service-ca.crt")
  const tokenFile = join(dir, "token")
  writeFileSync(caFile, tls.caPem)
  writeFileSync(tokenFile, "token-1\n")
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caFile, tokenFile, state }
})

const listAlerts = (url: string) =>
  Effect.gen(function* () {
    const c = yield* connect(url, yield* token("sre"))
    return yield* call(c, "svc_list_alerts", {})
  })

layer(InfraLive, { excludeTestServices: true })("svc_list_alerts and the default metrics backend", (it) => {
  it.scoped("a token from tokenFile (re-read each call) and the CA from caFile reach an HTTPS backend", () =>
    Effect.gen(function* () {
      const backend = yield* secureBackend
      const gw = yield* startGateway({
        metricsBackendUrl: Option.some(backend.url),
        metricsBackendTokenFile: Option.some(backend.tokenFile),
        metricsBackendCaFile: Option.some(backend.caFile)
      })
      const first = yield* listAlerts(gw.url)
      assert.isFalse(first.isError, first.text)
      assert.deepStrictEqual(first.json.alerts.map((a: { labels: { alertname: string } }) => a.labels.alertname), ["KubePodCrashLooping"])

      // The token rotates: the next call carries the new one.
      backend.state.accepted = "token-2"
      writeFileSync(backend.tokenFile, "token-2\n")
      assert.isFalse((yield* listAlerts(gw.url)).isError)
      assert.deepStrictEqual(backend.state.seen, ["Bearer token-1", "Bearer token-2"])
    }))

  it.scoped("without the CA or without the token the backend is unavailable (a tool error, not an internal one)", () =>
    Effect.gen(function* () {
      const backend = yield* secureBackend
      const untrusted = yield* startGateway({ metricsBackendUrl: Option.some(backend.url), metricsBackendTokenFile: Option.some(backend.tokenFile) })
      const noCa = yield* listAlerts(untrusted.url)
      assert.isTrue(noCa.isError)
      assert.match(noCa.text, /the metrics backend is unavailable/)
      assert.deepStrictEqual(backend.state.seen, [], "the request never got past TLS")

      const anonymous = yield* startGateway({ metricsBackendUrl: Option.some(backend.url), metricsBackendCaFile: Option.some(backend.caFile) })
      const noToken = yield* listAlerts(anonymous.url)
      assert.isTrue(noToken.isError)
      assert.match(noToken.text, /the metrics backend is unavailable/)
      assert.deepStrictEqual(backend.state.seen, [""])
    }))
})
