/**
 * The bearer token a platform service presents to another: a fixed one (tests, the local platform), or the pod's
 * projected ServiceAccount token file, re-read every minute because the kubelet rotates it. An unreadable file
 * yields an empty token, which the callee answers with 401 rather than this caller failing to start.
 */
import { Clock, Effect, Redacted } from "effect"
import * as Fs from "node:fs/promises"

export const defaultTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

export interface TokenSourceOptions {
  readonly token?: Redacted.Redacted | undefined
  readonly tokenFile?: string | undefined
}

export const tokenSource = (options: TokenSourceOptions): Effect.Effect<Effect.Effect<string>> =>
  Effect.sync(() => {
    if (options.token !== undefined) return Effect.succeed(Redacted.value(options.token))
    const file = options.tokenFile ?? defaultTokenFile
    let cached: { token: string; at: number } | undefined
    return Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (cached !== undefined && now - cached.at < 60_000) return cached.token
      const token = yield* Effect.tryPromise(() => Fs.readFile(file, "utf8")).pipe(Effect.map((t) => t.trim()), Effect.orElseSucceed(() => ""))
      cached = { token, at: now }
      return token
    })
  })
