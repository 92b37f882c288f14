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
})
