/**
 * TLS on a service's API listener: a client trusting the platform CA gets through, one trusting another CA (or only
 * the system roots) is refused during the handshake, the health port stays plain HTTP, and a certificate rotated on
 * disk is served to new connections a minute later without a restart.
 */
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, Scope, TestClock } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Tls from "node:tls"
import { Drain } from "../src/Drain.ts"
import { Metrics } from "../src/Metrics.ts"
import { apiPort, BoundPorts, drainGuard, OpsServersLive, Readiness, ServerConfig, serveWithDrain } from "../src/Servers.ts"
import { issueServing, makeAuthority, renewalDue, servesFor, validFor, validityOf } from "../src/Tls/Certificates.ts"
import { trustingDispatcher } from "../src/Tls/Trust.ts"

const now = new Date()
const hosts = ["127.0.0.1", "localhost"]

const material = Effect.promise(async () => {
  const ca = await makeAuthority("kubemend-test-ca", validFor(now, 30))
  const other = await makeAuthority("someone-else", validFor(now, 30))
  const leaf = await issueServing(ca, "storage", hosts, validFor(now, 3))
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-tls-"))
  const certFile = Path.join(dir, "tls.crt")
  const keyFile = Path.join(dir, "tls.key")
  Fs.writeFileSync(certFile, leaf.certPem)
  Fs.writeFileSync(keyFile, leaf.keyPem)
  return { ca, other, leaf, certFile, keyFile }
})

const get = (url: string, ca?: string) =>
  Effect.promise(() =>
    fetch(url, ca === undefined ? {} : ({ dispatcher: trustingDispatcher([ca]) } as RequestInit)).then(
      async (r) => ({ status: r.status, body: await r.text(), error: "" }),
      (e: Error & { cause?: { code?: string } }) => ({ status: 0, body: "", error: e.cause?.code ?? e.message })
    )
  )

/** The serial of the certificate the listener presents to a new connection. */
const servedSerial = (port: number, ca: string) =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      const socket = Tls.connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
        resolve(socket.getPeerCertificate().serialNumber)
        socket.end()
      })
      socket.on("error", reject)
    })
  )

describe("certificates", () => {
  it("are due for renewal after two thirds of their lifetime, and name the hosts they were issued for", async () => {
    const ca = await makeAuthority("ca", validFor(now, 90))
    const leaf = await issueServing(ca, "agent", ["kubemend-agent.ns.svc", "127.0.0.1"], validFor(now, 90))
    const validity = validityOf(leaf.certPem)
    expect(renewalDue(validity, new Date(now.getTime() + 59 * 24 * 3600_000))).toBe(false)
    expect(renewalDue(validity, new Date(now.getTime() + 61 * 24 * 3600_000))).toBe(true)
    expect(servesFor(leaf.certPem, ca.certPem, ["kubemend-agent.ns.svc", "127.0.0.1"])).toBe(true)
    expect(servesFor(leaf.certPem, ca.certPem, ["kubemend-storage.ns.svc"])).toBe(false)
    expect(servesFor(leaf.certPem, (await makeAuthority("other", validFor(now, 1))).certPem, ["127.0.0.1"])).toBe(false)
  })
})

describe("a service's API over TLS", () => {
  it.effect("verifies the platform CA, refuses other CAs, keeps health plain, and serves a rotated certificate", () =>
    Effect.gen(function* () {
      const { ca, certFile, keyFile, other } = yield* material
      const app = HttpRouter.empty.pipe(HttpRouter.get("/hello", HttpServerResponse.text("hello")))
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        serveWithDrain(HttpServer.serve(app, drainGuard)).pipe(
          Layer.provideMerge(OpsServersLive),
          Layer.provideMerge(Layer.mergeAll(Drain.Default, Readiness.Default, Metrics.Default)),
          Layer.provideMerge(ServerConfig.layer({ tls: Option.some({ certFile, keyFile }) }))
        ),
        scope
      )
      const port = yield* Effect.provide(apiPort, context)
      const { health } = yield* Effect.provide(BoundPorts, context)

      expect(yield* get(`https://127.0.0.1:${port}/hello`, ca.certPem)).toMatchObject({ status: 200, body: "hello" })
      expect(yield* get(`https://localhost:${port}/hello`, ca.certPem)).toMatchObject({ status: 200 })
      expect((yield* get(`https://127.0.0.1:${port}/hello`, other.certPem)).error).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE")
      expect((yield* get(`https://127.0.0.1:${port}/hello`)).error).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE")
      expect((yield* get(`http://127.0.0.1:${port}/hello`)).status).not.toBe(200)
      expect(yield* get(`http://127.0.0.1:${health}/healthz`)).toMatchObject({ status: 200, body: "ok" })

      const first = yield* servedSerial(port, ca.certPem)
      const renewed = yield* Effect.promise(() => issueServing(ca, "storage", hosts, validFor(now, 3)))
      Fs.writeFileSync(certFile, renewed.certPem)
      Fs.writeFileSync(keyFile, renewed.keyPem)
      expect(yield* servedSerial(port, ca.certPem)).toBe(first)
      yield* TestClock.adjust(Duration.minutes(1))
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
      const second = yield* servedSerial(port, ca.certPem)
      expect(second).not.toBe(first)
      yield* Scope.close(scope, Exit.void)
    }))
})
