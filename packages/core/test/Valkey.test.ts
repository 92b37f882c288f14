import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Duration, Effect, Layer, Option, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { providerFor } from "../src/Config.ts"
import { acquireClient, clientOptions, type ValkeyConnection, valkeyConfig } from "../src/Valkey.ts"

const block = valkeyConfig(
  { port: 6379, db: 0, timeout: Duration.millis(500) },
  Config.all({ keyPrefix: Config.string("keyPrefix").pipe(Config.withDefault("svc")) })
)

const load = (file: unknown, env: Record<string, string> = {}) =>
  Effect.provide(block, Layer.setConfigProvider(providerFor("svc", file, ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" }))))

const at = (overrides: Partial<ValkeyConnection> = {}): ValkeyConnection => ({
  host: "valkey.cache.svc",
  port: 6379,
  password: Option.none(),
  passwordFile: Option.none(),
  db: 0,
  tls: Option.none(),
  timeout: Duration.seconds(2),
  ...overrides
})

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-valkey-"))
const file = (name: string, text: string) => {
  const path = Path.join(dir, name)
  Fs.writeFileSync(path, text)
  return path
}

describe("the valkey block", () => {
  it.effect("is absent without a host, and an empty host counts as none", () =>
    Effect.gen(function* () {
      expect(Option.isNone(yield* load({}))).toBe(true)
      expect(Option.isNone(yield* load({ valkey: { host: "" } }))).toBe(true)
    }))

  it.effect("takes the service's defaults and keys, and the password from the service's environment", () =>
    Effect.gen(function* () {
      const v = Option.getOrThrow(yield* load({ valkey: { host: "h" } }, { SVC_VALKEY_PASSWORD: "s3cret" }))
      expect(v).toMatchObject({ host: "h", port: 6379, db: 0, keyPrefix: "svc", passwordFile: Option.none(), tls: Option.none() })
      expect(Duration.toMillis(v.timeout)).toBe(500)
      expect(Option.map(v.password, Redacted.value)).toEqual(Option.some("s3cret"))
    }))

  it.effect("reads TLS files only when TLS is enabled, and a bad value names its key", () =>
    Effect.gen(function* () {
      const on = Option.getOrThrow(yield* load({ valkey: { host: "h", port: 6380, tls: { enabled: true, caFile: "/ca" } } }))
      expect(on.port).toBe(6380)
      expect(on.tls).toEqual(Option.some({ caFile: Option.some("/ca"), certFile: Option.none(), keyFile: Option.none() }))
      expect(Option.getOrThrow(yield* load({ valkey: { host: "h", tls: { caFile: "/ca" } } })).tls).toEqual(Option.none())
      expect(String(yield* Effect.flip(load({ valkey: { host: "h", port: 70000 } })))).toContain("port")
      expect(String(yield* Effect.flip(load({ valkey: { host: "h", timeout: "soon" } })))).toContain("timeout")
    }))
})

describe("ioredis options", () => {
  it.effect("fail fast by default: no password, no TLS, the deadline on connecting and on each command", () =>
    Effect.gen(function* () {
      const o = yield* clientOptions(at(), "kubemend-test")
      expect(o).toMatchObject({
        host: "valkey.cache.svc",
        port: 6379,
        db: 0,
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        connectTimeout: 2000,
        commandTimeout: 2000,
        protocol: 2,
        connectionName: "kubemend-test"
      })
      expect("password" in o || "tls" in o).toBe(false)
      expect([1, 2, 3, 10].map(o.retryStrategy)).toEqual([50, 100, 200, 2000])
    }))

  it.effect("use the password, or the password file (trimmed) when both are set", () =>
    Effect.gen(function* () {
      const password = Option.some(Redacted.make("from-env"))
      expect((yield* clientOptions(at({ password }), "t")).password).toBe("from-env")
      const passwordFile = Option.some(file("password", "from-file\n"))
      expect((yield* clientOptions(at({ password, passwordFile }), "t")).password).toBe("from-file")
    }))

  it.effect("read the TLS files, verify the host name, and name the key of a file that cannot be read", () =>
    Effect.gen(function* () {
      const tls = Option.some({
        caFile: Option.some(file("ca.crt", "CA")),
        certFile: Option.some(file("tls.crt", "CERT")),
        keyFile: Option.some(file("tls.key", "KEY"))
      })
      const o = yield* clientOptions(at({ tls }), "t")
      expect(o.tls?.servername).toBe("valkey.cache.svc")
      expect([o.tls?.ca, o.tls?.cert, o.tls?.key].map(String)).toEqual(["CA", "CERT", "KEY"])
      const systemCas = yield* clientOptions(at({ tls: Option.some({ caFile: Option.none(), certFile: Option.none(), keyFile: Option.none() }) }), "t")
      expect(systemCas.tls).toEqual({ servername: "valkey.cache.svc" })
      const missing = Option.some({ caFile: Option.some(Path.join(dir, "absent.crt")), certFile: Option.none(), keyFile: Option.none() })
      const error = yield* Effect.flip(clientOptions(at({ tls: missing }), "t"))
      expect(error).toMatchObject({ _op: "InvalidData", path: ["valkey", "tls", "caFile"] })
      expect(String(error)).toContain("absent.crt")
    }))

  it.effect("hand a client to the scope and disconnect it when the scope closes", () =>
    Effect.gen(function* () {
      let disconnected = 0
      const client = yield* Effect.scoped(
        Effect.tap(acquireClient(at(), "t", (o) => ({ name: o.connectionName, disconnect: () => void disconnected++ })), () =>
          Effect.sync(() => expect(disconnected).toBe(0)))
      )
      expect(client.name).toBe("t")
      expect(disconnected).toBe(1)
    }))
})
