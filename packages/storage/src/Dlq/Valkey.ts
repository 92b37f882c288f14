/**
 * The connection to the configured Valkey (or Redis) server that holds the dead-letter stream, through ioredis.
 *
 * The queue is the fallback of a fallback, so it must answer at once: commands fail immediately while the server
 * is away (no offline queue, no resend after a reconnect) and every call has the configured deadline. A write the
 * queue cannot take is refused, never held until Valkey returns. Reconnection runs in the background with capped
 * backoff; connectivity changes are logged once per transition, not once per attempt. The connection options
 * (and the `valkey` block) are core's, shared with the gateway: core/src/Valkey.ts.
 */
import { Effect, Runtime } from "effect"
import { acquireClient, ValkeyUnavailable } from "@kubemend/core/Valkey"
import { Redis } from "ioredis"
import type { ValkeySettings } from "../StorageConfig.ts"

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
    const redis = yield* acquireClient(settings, "kubemend-storage-dlq", (o) => new Redis(o))
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
