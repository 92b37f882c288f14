/**
 * The storage service's tunables. From the service's config file (camelCase, mirroring the platform CR's
 * `dataStorage`, `postgresql` and `valkey` blocks) with `STORAGE_*` environment overrides; `DATABASE_URL` is read
 * as is. The Valkey password comes from `STORAGE_VALKEY_PASSWORD` (the operator sets it from the CR's Secret) or a
 * `valkey.passwordFile`.
 */
import { Config, ConfigProvider, Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { duration, intInRange } from "@kubemend/core/Config"
import { valkeyConfig as sharedValkeyConfig, type ValkeyConnection } from "@kubemend/core/Valkey"

export type SslMode = "disable" | "require" | "verify-ca" | "verify-full"

/** Where the database is: a URL, the platform's `postgresql` block, or an embedded server the service starts. */
export type DatabaseSettings =
  | { readonly _tag: "Url"; readonly url: Redacted.Redacted }
  | {
    readonly _tag: "Params"
    readonly host: string
    readonly port: number
    /** Values, or files (a mounted Secret): an explicit `*File` wins over `secretDir/POSTGRES_*`, which wins over a value. */
    readonly database: Option.Option<string>
    readonly username: Option.Option<string>
    readonly password: Option.Option<Redacted.Redacted>
    readonly databaseFile: Option.Option<string>
    readonly usernameFile: Option.Option<string>
    readonly passwordFile: Option.Option<string>
    readonly secretDir: Option.Option<string>
    readonly sslMode: SslMode
    readonly caFile: Option.Option<string>
  }
  | { readonly _tag: "Embedded"; readonly dataDir: string; readonly port: number; readonly persistent: boolean }

/** The Valkey (or Redis) server holding the dead-letter queue as a stream: the shared keys (core/src/Valkey.ts) and its own. */
export interface ValkeySettings extends ValkeyConnection {
  /** Key of the stream; `<streamKey>:events` (event count) and `<streamKey>:replay` (replay lock) sit beside it. */
  readonly streamKey: string
}

export interface StorageSettings {
  readonly database: DatabaseSettings
  /** Connections in the pool. */
  readonly maxConnections: number
  /** Deadline of one database write; past it the write counts as "database unreachable" (dead-letter queue). */
  readonly writeTimeout: Duration.Duration
  /** Request body limit (413 beyond). */
  readonly maxBodyBytes: number
  /** HMAC-SHA256 key of the hash chain; unkeyed SHA-256 when absent. */
  readonly hashKey: Option.Option<Redacted.Redacted>
  /** Dead-letter queue: events accepted (202) while the database is unreachable. */
  readonly dlq: {
    readonly capacity: number
    readonly dir: string
    readonly replayInterval: Duration.Duration
  }
  /** Present: the dead-letter queue is a stream on this server; absent: an append-only file under `dlq.dir`. */
  readonly valkey: Option.Option<ValkeySettings>
  readonly retention: {
    readonly enabled: boolean
    readonly interval: Duration.Duration
    readonly batchSize: number
    readonly defaultDays: number
    /** Per `event_category` retention in days, overriding each event's own `retention_days`. */
    readonly categories: Readonly<Record<string, number>>
  }
  readonly export: {
    readonly maxEvents: number
    /** PKCS#8 PEM of an EC P-256 key; a key is generated at start when absent. */
    readonly signingKeyFile: Option.Option<string>
  }
  /** How long a TokenReview answer is reused. */
  readonly tokenCacheTTL: Duration.Duration
  /** This service's own Service name: callers need `get` (read) or `create` (write) on `services/<serviceName>`. */
  readonly serviceName: string
  /** API group of reconstructed RemediationRequests. */
  readonly apiGroup: string
}

export class StorageConfig extends Context.Tag("@kubemend/storage/StorageConfig")<StorageConfig, StorageSettings>() {
  static readonly defaults: StorageSettings = {
    database: { _tag: "Embedded", dataDir: ".data/postgres", port: 0, persistent: true },
    maxConnections: 10,
    writeTimeout: Duration.seconds(10),
    maxBodyBytes: 5 * 1024 * 1024,
    hashKey: Option.none(),
    dlq: { capacity: 10_000, dir: ".data/dlq", replayInterval: Duration.seconds(5) },
    valkey: Option.none(),
    retention: { enabled: true, interval: Duration.hours(24), batchSize: 1000, defaultDays: 2555, categories: {} },
    export: { maxEvents: 10_000, signingKeyFile: Option.none() },
    tokenCacheTTL: Duration.seconds(60),
    serviceName: "kubemend-storage",
    apiGroup: "kubemend.io"
  }

  static readonly layer = (overrides: Partial<StorageSettings> = {}) => Layer.succeed(StorageConfig, { ...StorageConfig.defaults, ...overrides })

  static readonly layerConfig = Layer.effect(StorageConfig, Effect.suspend(() => load))
}

const opt = <A>(c: Config.Config<A>) => Config.option(c)

const databaseConfig = (dataDir: string) =>
  Effect.gen(function* () {
    const url = yield* opt(Config.redacted("databaseUrl"))
    if (Option.isSome(url)) return { _tag: "Url", url: url.value } satisfies DatabaseSettings
    const host = yield* opt(Config.nested(Config.string("host"), "postgresql"))
    if (Option.isNone(host)) {
      const embedded = yield* Config.nested(
        Config.all({
          dataDir: Config.string("dataDir").pipe(Config.withDefault(`${dataDir}/postgres`)),
          port: intInRange("port", 0, 65535).pipe(Config.withDefault(0))
        }),
        "embeddedPostgres"
      )
      return { _tag: "Embedded", ...embedded, persistent: true } satisfies DatabaseSettings
    }
    const params = yield* Config.nested(
      Config.all({
        port: intInRange("port", 1, 65535).pipe(Config.withDefault(5432)),
        database: opt(Config.string("database")),
        username: opt(Config.string("username")),
        password: opt(Config.redacted("password")),
        databaseFile: opt(Config.string("databaseFile")),
        usernameFile: opt(Config.string("usernameFile")),
        passwordFile: opt(Config.string("passwordFile")),
        secretDir: opt(Config.string("secretDir")),
        sslMode: Config.literal("disable", "require", "verify-ca", "verify-full")("sslMode").pipe(
          Config.withDefault("verify-full" as const)
        ),
        caFile: opt(Config.string("caFile"))
      }),
      "postgresql"
    )
    return { _tag: "Params", host: host.value, ...params } satisfies DatabaseSettings
  })

/**
 * Defaults of a configured `valkey` block (only `host` is required). Past the deadline (of one call, and of
 * connecting) a write is refused rather than left waiting.
 */
export const valkeyDefaults = { port: 6379, db: 0, streamKey: "kubemend:storage:dlq", timeout: Duration.seconds(2) } as const

/** The `valkey` block; none without a `host` (the dead-letter queue is then a file), and then nothing else in it is read. */
const valkeyConfig = Effect.gen(function* () {
  const host = yield* opt(Config.nested(Config.string("host"), "valkey"))
  if (Option.isNone(host)) return Option.none<ValkeySettings>()
  return yield* sharedValkeyConfig(
    valkeyDefaults,
    Config.all({ streamKey: Config.nonEmptyString("streamKey").pipe(Config.withDefault(valkeyDefaults.streamKey)) })
  )
})

const retentionCategories = Config.nested(
  Config.hashMap(Config.integer(), "categories"),
  "retention"
).pipe(Config.withDefault(null))

const load = Effect.gen(function* () {
  const d = StorageConfig.defaults
  const dataDir = yield* Config.string("dataDir").pipe(Config.withDefault(".data"))
  // DATABASE_URL is the conventional, unprefixed variable: read it from the raw environment first.
  const rawUrl = yield* Config.option(Config.redacted("DATABASE_URL")).pipe(Effect.withConfigProvider(ConfigProvider.fromEnv()))
  const database: DatabaseSettings = Option.isSome(rawUrl)
    ? { _tag: "Url", url: rawUrl.value }
    : yield* databaseConfig(dataDir)
  const categories = yield* retentionCategories
  return {
    database,
    maxConnections: yield* intInRange("maxConnections", 1, 200).pipe(Config.withDefault(d.maxConnections)),
    writeTimeout: yield* duration("writeTimeout").pipe(Config.withDefault(d.writeTimeout)),
    maxBodyBytes: yield* intInRange("maxBodyBytes", 1024, 512 * 1024 * 1024).pipe(Config.withDefault(d.maxBodyBytes)),
    hashKey: yield* Config.option(Config.nested(Config.redacted("hashKey"), "audit")),
    dlq: {
      capacity: yield* Config.nested(intInRange("capacity", 1, 10_000_000), "dlq").pipe(Config.withDefault(d.dlq.capacity)),
      dir: yield* Config.nested(Config.string("dir"), "dlq").pipe(Config.withDefault(`${dataDir}/dlq`)),
      replayInterval: yield* Config.nested(duration("replayInterval"), "dlq").pipe(Config.withDefault(d.dlq.replayInterval))
    },
    valkey: yield* valkeyConfig,
    retention: {
      enabled: yield* Config.nested(Config.boolean("enabled"), "retention").pipe(Config.withDefault(d.retention.enabled)),
      interval: yield* Config.nested(duration("interval"), "retention").pipe(Config.withDefault(d.retention.interval)),
      batchSize: yield* Config.nested(intInRange("batchSize", 1, 100_000), "retention").pipe(Config.withDefault(1000)),
      defaultDays: yield* Config.nested(intInRange("defaultDays", 1, 2555), "retention").pipe(Config.withDefault(2555)),
      categories: categories === null ? {} : Object.fromEntries(categories)
    },
    export: {
      maxEvents: yield* Config.nested(intInRange("maxEvents", 1, 1_000_000), "export").pipe(Config.withDefault(10_000)),
      signingKeyFile: yield* Config.option(Config.nested(Config.string("signingKeyFile"), "export"))
    },
    tokenCacheTTL: yield* Config.nested(duration("tokenCacheTTL"), "auth").pipe(Config.withDefault(d.tokenCacheTTL)),
    serviceName: yield* Config.nested(Config.string("serviceName"), "auth").pipe(Config.withDefault(d.serviceName)),
    apiGroup: yield* Config.string("apiGroup").pipe(Config.withDefault(d.apiGroup))
  } satisfies StorageSettings
})
