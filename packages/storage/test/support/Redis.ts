/**
 * A real Redis (or Valkey) for the dead-letter stream tests: `TEST_REDIS_URL` when set, else
 * redis://127.0.0.1:6379. Reachability is probed once per test file: on a developer machine without Redis the
 * Redis-backed tests are skipped (with the reason), under CI (`CI` set) they run and fail.
 */
import { Effect, Option, Redacted } from "effect"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { valkeyDefaults, type ValkeySettings } from "../../src/StorageConfig.ts"

/** The server's URL, with the port spelled out (the TCP proxy in support/Proxy.ts needs it). */
export const redisUrl = (() => {
  const url = new URL(process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379")
  if (url.port === "") url.port = "6379"
  return url.toString()
})()

const clientFor = (url: string) =>
  new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 })

/** Why Redis cannot be used, or undefined when it answers PING. */
const probeRedis = async (): Promise<string | undefined> => {
  const client = clientFor(redisUrl)
  let lastError: string | undefined
  client.on("error", (e: Error) => (lastError = e.message))
  try {
    await client.connect()
    await client.ping()
    return undefined
  } catch (e) {
    const reason = lastError ?? (e instanceof Error ? e.message : String(e))
    return `no Redis at ${new URL(redisUrl).host} (${reason}); set TEST_REDIS_URL or start one`
  } finally {
    client.disconnect()
  }
}

export const unreachable = await probeRedis()
/** Skip only off CI: a CI run without Redis must fail, not pass quietly. */
export const skipRedis = unreachable !== undefined && process.env["CI"] === undefined

/** Fails a CI run loudly when Redis is missing. */
export const requireRedis = unreachable === undefined ? Effect.void : Effect.dieMessage(`CI is set but ${unreachable}`)

/** A stream key no other test (or run) uses. */
export const uniqueStreamKey = (label: string) => `kubemend:test:${label}:${randomUUID()}`

/** The storage settings for a stream on the server at `url` (the real one, or a proxy in front of it). */
export const valkeySettings = (url: string, streamKey: string): ValkeySettings => {
  const u = new URL(url)
  const db = Number(u.pathname.replace(/^\//, "") || "0")
  return {
    host: u.hostname,
    port: Number(u.port || valkeyDefaults.port),
    password: u.password === "" ? Option.none() : Option.some(Redacted.make(decodeURIComponent(u.password))),
    passwordFile: Option.none(),
    db,
    streamKey,
    tls: u.protocol === "rediss:" ? Option.some({ caFile: Option.none(), certFile: Option.none(), keyFile: Option.none() }) : Option.none(),
    timeout: valkeyDefaults.timeout
  }
}

/** A direct client (not through any proxy) for assertions; deletes the stream's keys when the scope closes. */
export const directClient = (streamKey: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = clientFor(redisUrl)
      await client.connect()
      return client
    }),
    (client) =>
      Effect.promise(async () => {
        await client.del(streamKey, `${streamKey}:events`, `${streamKey}:replay`)
        client.disconnect()
      }).pipe(Effect.ignore)
  )
