/**
 * The gateway's `valkey` block: the Valkey (or Redis) server that gateway replicas share their state through (MCP
 * session records, A2A tasks and conversations, session slots, rate-limit buckets). The same shape as storage's
 * `valkey` block, so the operator renders both from the platform CR's `spec.valkey`. Without `valkey.host` the
 * gateway keeps its state in memory, per replica (the default, and all a single replica needs).
 *
 * Environment names (under `GATEWAY_`): `VALKEY_HOST`, `VALKEY_PORT`, `VALKEY_PASSWORD` (from a Secret),
 * `VALKEY_PASSWORD_FILE`, `VALKEY_DB`, `VALKEY_TLS_ENABLED`, `VALKEY_TLS_CA_FILE`, `VALKEY_TLS_CERT_FILE`,
 * `VALKEY_TLS_KEY_FILE`, `VALKEY_TIMEOUT`, `VALKEY_KEY_PREFIX`, `VALKEY_RECOVERY_INTERVAL`.
 */
import { Config, Duration, Option, type Redacted } from "effect"
import { duration, intInRange } from "@kubemend/core/Config"

export interface ValkeySettings {
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
  /**
   * Deadline of one Valkey call (and of connecting). Past it the call counts as Valkey unreachable and the gateway
   * serves from its own memory; kept short because every tool call waits on a rate-limit check.
   */
  readonly timeout: Duration.Duration
  /** Prefix of every key the gateway writes (`<prefix>:mcp:<session id>`, ...); replicas of one gateway share it. */
  readonly keyPrefix: string
  /** While Valkey is unreachable, how often the gateway tries it again (and goes back to shared state on success). */
  readonly recoveryInterval: Duration.Duration
}

/** Defaults of a configured `valkey` block (only `host` is required). */
export const valkeyDefaults = {
  port: 6379,
  db: 0,
  timeout: Duration.millis(500),
  keyPrefix: "kubemend:gateway",
  recoveryInterval: Duration.seconds(5)
} as const

/** Settings for a server at `host:port` with the defaults (tests, benchmarks). */
export const valkeyAt = (host: string, port: number, overrides: Partial<ValkeySettings> = {}): ValkeySettings => ({
  host,
  port,
  password: Option.none(),
  passwordFile: Option.none(),
  db: valkeyDefaults.db,
  tls: Option.none(),
  timeout: valkeyDefaults.timeout,
  keyPrefix: valkeyDefaults.keyPrefix,
  recoveryInterval: valkeyDefaults.recoveryInterval,
  ...overrides
})

const opt = <A>(c: Config.Config<A>) => Config.option(c).pipe(Config.map(Option.filter((v) => v !== "")))

/** The `valkey` block; none without a `host`. */
export const valkeyConfig: Config.Config<Option.Option<ValkeySettings>> = Config.all({
  host: opt(Config.string("host")),
  port: intInRange("port", 1, 65535).pipe(Config.withDefault(valkeyDefaults.port)),
  password: opt(Config.redacted("password")),
  passwordFile: opt(Config.string("passwordFile")),
  db: intInRange("db", 0, 65535).pipe(Config.withDefault(valkeyDefaults.db)),
  tls: Config.all({
    enabled: Config.boolean("enabled").pipe(Config.withDefault(false)),
    caFile: opt(Config.string("caFile")),
    certFile: opt(Config.string("certFile")),
    keyFile: opt(Config.string("keyFile"))
  }).pipe(Config.nested("tls")),
  timeout: duration("timeout").pipe(Config.withDefault(valkeyDefaults.timeout)),
  keyPrefix: Config.nonEmptyString("keyPrefix").pipe(Config.withDefault(valkeyDefaults.keyPrefix)),
  recoveryInterval: duration("recoveryInterval").pipe(Config.withDefault(valkeyDefaults.recoveryInterval))
}).pipe(
  Config.nested("valkey"),
  Config.map(({ host, tls: { enabled, ...files }, ...rest }) =>
    Option.map(host, (h): ValkeySettings => ({ ...rest, host: h, tls: enabled ? Option.some(files) : Option.none() }))
  )
)
