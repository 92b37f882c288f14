/**
 * A real Redis (or Valkey) for the shared-state tests: `TEST_REDIS_URL` when set, else redis://127.0.0.1:6379.
 * Reachability is probed once per test file: on a developer machine without Redis the Redis-backed tests are
 * skipped (with the reason), under CI (`CI` set) they run and fail. Every test works under a key prefix of its own
 * (`uniquePrefix`), deleted afterwards.
 */
import { Effect, Option, Redacted } from "effect"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { valkeyAt, type ValkeySettings } from "../../src/Shared/ValkeySettings.ts"

const url = new URL(process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379")

const client = () =>
  new Redis(url.toString(), { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 })

const probe = async (): Promise<string | undefined> => {
  const c = client()
  let lastError: string | undefined
  c.on("error", (e: Error) => (lastError = e.message))
  try {
    await c.connect()
    await c.ping()
    return undefined
  } catch (e) {
    return `no Redis at ${url.host} (${lastError ?? (e instanceof Error ? e.message : String(e))}); set TEST_REDIS_URL or start one`
  } finally {
    c.disconnect()
  }
}

export const unreachable = await probe()
/** Skip only off CI: a CI run without Redis must fail, not pass quietly. */
export const skipRedis = unreachable !== undefined && process.env["CI"] === undefined
export const requireRedis = unreachable === undefined ? Effect.void : Effect.dieMessage(`CI is set but ${unreachable}`)

/** Gateway settings for the test server under `keyPrefix`. */
export const valkeySettings = (keyPrefix: string, overrides: Partial<ValkeySettings> = {}): ValkeySettings =>
  valkeyAt(url.hostname, Number(url.port || 6379), {
    db: Number(url.pathname.replace(/^\//, "") || "0"),
    password: url.password === "" ? Option.none() : Option.some(Redacted.make(decodeURIComponent(url.password))),
    keyPrefix,
    ...overrides
  })

/** A key prefix no other test (or run) uses; its keys are deleted when the scope closes. */
export const uniquePrefix = (label: string) =>
  Effect.acquireRelease(
    Effect.sync(() => `kubemend:test:${label}:${randomUUID()}`),
    (prefix) =>
      Effect.promise(async () => {
        const c = client()
        await c.connect()
        const keys = await c.keys(`${prefix}:*`)
        if (keys.length > 0) await c.del(...keys)
        c.disconnect()
      }).pipe(Effect.ignore)
  )
