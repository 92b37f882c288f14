import { providerFor } from "@kubemend/core/Config"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, Option, Redacted } from "effect"
import { StorageConfig } from "../src/StorageConfig.ts"

const load = (file: unknown, env: Record<string, string> = {}) =>
  Effect.flatMap(StorageConfig, Effect.succeed).pipe(
    Effect.provide(StorageConfig.layerConfig),
    Effect.provide(Layer.setConfigProvider(providerFor("storage", file, ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" }))))
  )

describe("storage configuration", () => {
  it.effect("defaults to an embedded server under .data, 5 MiB bodies, a 10,000-event dead-letter queue, 24h/2555d retention", () =>
    Effect.gen(function* () {
      const c = yield* load({})
      expect(c.database).toEqual({ _tag: "Embedded", dataDir: ".data/postgres", port: 0, persistent: true })
      expect(c.maxBodyBytes).toBe(5 * 1024 * 1024)
      expect(c.dlq.capacity).toBe(10_000)
      expect(Duration.toHours(c.retention.interval)).toBe(24)
      expect(c.retention).toMatchObject({ batchSize: 1000, defaultDays: 2555 })
      expect(Option.isNone(c.valkey)).toBe(true)
    }))

  it.effect("reads the platform's postgresql block, Go durations and per-category retention", () =>
    Effect.gen(function* () {
      const c = yield* load({
        postgresql: { host: "db.example", secretDir: "/etc/db", sslMode: "verify-ca", caFile: "/etc/ca.pem" },
        retention: { interval: "12h", categories: { gateway: 90 } },
        dlq: { replayInterval: "30s" },
        audit: { hashKey: "k" }
      })
      expect(c.database).toMatchObject({ _tag: "Params", host: "db.example", port: 5432, sslMode: "verify-ca", secretDir: Option.some("/etc/db") })
      expect(Duration.toHours(c.retention.interval)).toBe(12)
      expect(c.retention.categories).toEqual({ gateway: 90 })
      expect(Duration.toSeconds(c.dlq.replayInterval)).toBe(30)
      expect(Option.map(c.hashKey, Redacted.value)).toEqual(Option.some("k"))
    }))

  it.effect("an environment override wins, and a bad duration names the key", () =>
    Effect.gen(function* () {
      const c = yield* load({ maxBodyBytes: 2048 }, { STORAGE_MAX_BODY_BYTES: "4096", STORAGE_DATABASE_URL: "postgres://u@h/db" })
      expect(c.maxBodyBytes).toBe(4096)
      expect(c.database._tag).toBe("Url")
      const error = yield* Effect.flip(load({ retention: { interval: "1 day" } }))
      expect(String(error)).toContain("interval")
    }))

  it.effect("a valkey block puts the dead-letter queue on Valkey: defaults, and the password from STORAGE_VALKEY_PASSWORD", () =>
    Effect.gen(function* () {
      const c = yield* load({ valkey: { host: "valkey.cache.svc" } }, { STORAGE_VALKEY_PASSWORD: "s3cret" })
      const v = Option.getOrThrow(c.valkey)
      expect(v).toMatchObject({ host: "valkey.cache.svc", port: 6379, db: 0, streamKey: "kubemend:storage:dlq" })
      expect(Option.map(v.password, Redacted.value)).toEqual(Option.some("s3cret"))
      expect(String(v.password)).not.toContain("s3cret")
      expect(Option.isNone(v.tls)).toBe(true)
      expect(Duration.toSeconds(v.timeout)).toBe(2)
    }))

  it.effect("reads the valkey port, database, stream key, password file, TLS files and deadline", () =>
    Effect.gen(function* () {
      const c = yield* load({
        valkey: {
          host: "valkey.example",
          port: 6380,
          db: 3,
          streamKey: "dlq:audit",
          passwordFile: "/etc/valkey/password",
          timeout: "500ms",
          tls: { enabled: true, caFile: "/etc/valkey-ca/ca.crt" }
        }
      })
      const v = Option.getOrThrow(c.valkey)
      expect(v).toMatchObject({ port: 6380, db: 3, streamKey: "dlq:audit", passwordFile: Option.some("/etc/valkey/password") })
      expect(Duration.toMillis(v.timeout)).toBe(500)
      expect(v.tls).toEqual(Option.some({ caFile: Option.some("/etc/valkey-ca/ca.crt"), certFile: Option.none(), keyFile: Option.none() }))
      const off = yield* load({ valkey: { host: "h", tls: { enabled: false, caFile: "/x" } } })
      expect(Option.isNone(Option.getOrThrow(off.valkey).tls)).toBe(true)
    }))

  it.effect("a bad valkey value stops the service with a message naming the key", () =>
    Effect.gen(function* () {
      expect(String(yield* Effect.flip(load({ valkey: { host: "h", port: 70000 } })))).toContain("port")
      expect(String(yield* Effect.flip(load({ valkey: { host: "h", timeout: "soon" } })))).toContain("timeout")
      expect(String(yield* Effect.flip(load({ valkey: { host: "h", tls: { enabled: "maybe" } } })))).toContain("enabled")
    }))
})
