/**
 * The connection to the configured Valkey (or Redis) server that holds the dead-letter stream, through ioredis.
 *
 * The queue is the fallback of a fallback, so it must answer at once: commands fail immediately while the server
 * is away (no offline queue, no resend after a reconnect) and every call has the configured deadline. A write the
 * queue cannot take is refused, never held until Valkey returns. Reconnection runs in the background with capped
 * backoff; connectivity changes are logged once per transition, not once per attempt.
 */
import { ConfigError, Data, Duration, Effect, Option, Redacted, Runtime } from "effect"
import { Redis, type RedisOptions } from "ioredis"
import * as Fs from "node:fs/promises"
import type { ValkeySettings } from "../StorageConfig.ts"

export class ValkeyUnavailable extends Data.TaggedError("ValkeyUnavailable")<{
  readonly command: string
  readonly cause: unknown
}> {}

/** Longest pause between reconnection attempts: how long writes stay refused after Valkey is back, at most. */
const reconnectCap = 2_000

const readKeyFile = (key: string, path: string) =>
  Effect.tryPromise({
    try: () => Fs.readFile(path),
    catch: (e) => ConfigError.InvalidData(["valkey", ...key.split(".")], `cannot read ${path}: ${String(e)}`)
  })

const optionalFile = (key: string, path: Option.Option<string>) =>
  Option.match(path, { onNone: () => Effect.succeed(undefined), onSome: (p) => readKeyFile(key, p) })

/** ioredis options from the settings; reads the password and TLS files (a missing file names its key). */
const options = (s: ValkeySettings) =>
  Effect.gen(function* () {
    const passwordFile = yield* optionalFile("passwordFile", s.passwordFile)
    const password = passwordFile === undefined ? Option.getOrUndefined(Option.map(s.password, Redacted.value)) : passwordFile.toString("utf8").trim()
    const tls = Option.isNone(s.tls)
      ? undefined
      : {
        servername: s.host,
        ...(yield* Effect.all({
          ca: optionalFile("tls.caFile", s.tls.value.caFile),
          cert: optionalFile("tls.certFile", s.tls.value.certFile),
          key: optionalFile("tls.keyFile", s.tls.value.keyFile)
        }).pipe(Effect.map((files) => Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined)))))
      }
    const timeout = Duration.toMillis(s.timeout)
    return {
      host: s.host,
      port: s.port,
      db: s.db,
      ...(password === undefined ? {} : { password }),
      ...(tls === undefined ? {} : { tls }),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: timeout,
      commandTimeout: timeout,
      // RESP2: the replies read here are the same in both protocols, and every Redis and Valkey version speaks it.
      protocol: 2,
      connectionName: "kubemend-storage-dlq",
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** (attempt - 1), reconnectCap)
    } satisfies RedisOptions
  })

export interface ValkeyClient {
  /** Runs one command within the deadline; `ValkeyUnavailable` on any failure (down, refused, timed out). */
  readonly call: <A>(command: string, run: (redis: Redis) => Promise<A>) => Effect.Effect<A, ValkeyUnavailable>
  /** `host:port`, for messages. */
  readonly address: string
}

/** A client for the scope; the service starts even when Valkey is away (it is only needed while PostgreSQL is). */
export const connect = (settings: ValkeySettings) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const log = (effect: Effect.Effect<void>) => Runtime.runFork(runtime)(effect)
    const address = `${settings.host}:${settings.port}`
    const redis = yield* Effect.acquireRelease(
      Effect.map(options(settings), (o) => new Redis(o)),
      (r) => Effect.sync(() => r.disconnect())
    )
    let healthy: boolean | undefined
    redis.on("ready", () => {
      if (healthy !== true) log(Effect.logInfo("dead-letter queue: Valkey connected").pipe(Effect.annotateLogs("valkey", address)))
      healthy = true
    })
    redis.on("error", (e: Error) => {
      if (healthy !== false) {
        log(
          Effect.logWarning("dead-letter queue: Valkey unavailable; writes are refused while the database is also away").pipe(
            Effect.annotateLogs({ valkey: address, error: e.message })
          )
        )
      }
      healthy = false
    })
    // A failed first connection is logged by the error handler; ioredis keeps reconnecting in the background.
    yield* Effect.promise(() => redis.connect().catch(() => undefined)).pipe(Effect.timeout(settings.timeout), Effect.ignore)

    const call = <A>(command: string, run: (r: Redis) => Promise<A>) =>
      Effect.tryPromise({ try: () => run(redis), catch: (cause) => new ValkeyUnavailable({ command, cause }) }).pipe(
        Effect.timeoutFail({ duration: settings.timeout, onTimeout: () => new ValkeyUnavailable({ command, cause: "deadline exceeded" }) })
      )
    return { call, address } satisfies ValkeyClient
  })
