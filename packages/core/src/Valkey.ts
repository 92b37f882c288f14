/**
 * The `valkey` block that storage (dead-letter queue) and the gateway (shared state) both read, and the ioredis
 * client it gives. Each service keeps its defaults, its own keys (storage's `streamKey`; the gateway's `keyPrefix`
 * and `recoveryInterval`) and its environment names: the service's provider (Config.ts `providerFor`) nests the
 * block under the service, so `valkey.password` is `STORAGE_VALKEY_PASSWORD` or `GATEWAY_VALKEY_PASSWORD`.
 *
 * Core does not depend on ioredis. @effect/experimental (a core dependency) declares an optional peer `ioredis@^5`,
 * so npm cannot hoist ioredis 6 to the root: a core dependency would be a third nested copy, whose `Redis` class is
 * a different type from the services' copies. The options here are plain data; each service passes them to its own
 * `new Redis(...)`, which type-checks them against ioredis.
 */
import { Config, ConfigError, Data, Duration, Effect, Option, Redacted } from "effect"
import * as Fs from "node:fs/promises"
import { duration, intInRange } from "./Config.ts"

/** A Valkey command failed: the server is away, refused it, or the deadline passed. */
export class ValkeyUnavailable extends Data.TaggedError("ValkeyUnavailable")<{
  readonly command: string
  readonly cause: unknown
}> {}

/** The keys both services share: where the server is and how to reach it. */
export interface ValkeyConnection {
  readonly host: string
  /** Default 6379. */
  readonly port: number
  /** AUTH password; `passwordFile` (a mounted Secret) wins when both are set. */
  readonly password: Option.Option<Redacted.Redacted>
  readonly passwordFile: Option.Option<string>
  /** Logical database index. Default 0. */
  readonly db: number
  /** Present: connect with TLS (system CAs unless `caFile`; a client certificate when `certFile` and `keyFile`). */
  readonly tls: Option.Option<{
    readonly caFile: Option.Option<string>
    readonly certFile: Option.Option<string>
    readonly keyFile: Option.Option<string>
  }>
  /** Deadline of one call and of connecting; each service says what happens past it. */
  readonly timeout: Duration.Duration
}

/** The service's defaults for the shared keys. */
export interface ValkeyDefaults {
  readonly port: number
  readonly db: number
  readonly timeout: Duration.Duration
}

// Empty values count as unset: an environment can only blank a key, not remove it.
const opt = <A>(c: Config.Config<A>) => Config.option(c).pipe(Config.map(Option.filter((v) => v !== "")))

/** The `valkey` block: the shared keys with the service's defaults plus its own `extras` (read inside the block); none without a `host`. */
export const valkeyConfig = <A extends object>(
  defaults: ValkeyDefaults,
  extras: Config.Config<A>
): Config.Config<Option.Option<ValkeyConnection & A>> =>
  Config.all({
    host: opt(Config.string("host")),
    port: intInRange("port", 1, 65535).pipe(Config.withDefault(defaults.port)),
    password: opt(Config.redacted("password")),
    passwordFile: opt(Config.string("passwordFile")),
    db: intInRange("db", 0, 65535).pipe(Config.withDefault(defaults.db)),
    tls: Config.all({
      enabled: Config.boolean("enabled").pipe(Config.withDefault(false)),
      caFile: opt(Config.string("caFile")),
      certFile: opt(Config.string("certFile")),
      keyFile: opt(Config.string("keyFile"))
    }).pipe(Config.nested("tls")),
    timeout: duration("timeout").pipe(Config.withDefault(defaults.timeout)),
    extras
  }).pipe(
    Config.nested("valkey"),
    Config.map(({ extras, host, tls: { enabled, ...files }, ...rest }) =>
      Option.map(host, (h) => ({ ...rest, ...extras, host: h, tls: enabled ? Option.some(files) : Option.none() }))
    )
  )

/** Longest pause between reconnection attempts: how long calls stay refused after the server is back, at most. */
const reconnectCap = 2_000

/** Node TLS options: the files' contents, and the name the server's certificate must carry. */
interface TlsOptions {
  readonly servername: string
  readonly ca?: Buffer
  readonly cert?: Buffer
  readonly key?: Buffer
}

const optionalFile = (key: string, path: Option.Option<string>) =>
  Option.match(path, {
    onNone: () => Effect.succeed(undefined),
    onSome: (p) =>
      Effect.tryPromise({
        try: () => Fs.readFile(p),
        catch: (e) => ConfigError.InvalidData(["valkey", ...key.split(".")], `cannot read ${p}: ${String(e)}`)
      })
  })

/**
 * ioredis options for `settings`; reads the password and TLS files (a missing file names its key). Calls fail at
 * once while the server is away (no offline queue, no resend after a reconnect) and have the deadline; the client
 * connects when the service says so, and reconnects in the background with capped backoff.
 */
export const clientOptions = (settings: ValkeyConnection, connectionName: string) =>
  Effect.gen(function* () {
    const passwordFile = yield* optionalFile("passwordFile", settings.passwordFile)
    const password = passwordFile === undefined
      ? Option.getOrUndefined(Option.map(settings.password, Redacted.value))
      : passwordFile.toString("utf8").trim()
    const tls: TlsOptions | undefined = Option.isNone(settings.tls) ? undefined : {
      servername: settings.host,
      ...(yield* Effect.all({
        ca: optionalFile("tls.caFile", settings.tls.value.caFile),
        cert: optionalFile("tls.certFile", settings.tls.value.certFile),
        key: optionalFile("tls.keyFile", settings.tls.value.keyFile)
      }).pipe(Effect.map((files) => Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined)))))
    }
    const timeout = Duration.toMillis(settings.timeout)
    return {
      host: settings.host,
      port: settings.port,
      db: settings.db,
      ...(password === undefined ? {} : { password }),
      ...(tls === undefined ? {} : { tls }),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: timeout,
      commandTimeout: timeout,
      // RESP2: the replies the services read are the same in both protocols, and every Redis and Valkey speaks it.
      protocol: 2 as const,
      connectionName,
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** (attempt - 1), reconnectCap)
    }
  })

export type ClientOptions = Effect.Effect.Success<ReturnType<typeof clientOptions>>

/**
 * A client for the scope, disconnected when the scope closes. `make` is the service's `new Redis(options)` (plus
 * any command definitions); the client is not connected yet, so listeners can be attached before `connect()`.
 */
export const acquireClient = <C extends { readonly disconnect: () => void }>(
  settings: ValkeyConnection,
  connectionName: string,
  make: (options: ClientOptions) => C
) => Effect.acquireRelease(Effect.map(clientOptions(settings, connectionName), make), (c) => Effect.sync(() => c.disconnect()))
