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
import { Config, Duration, Option } from "effect"
import { duration } from "@kubemend/core/Config"
import { valkeyConfig as sharedValkeyConfig, type ValkeyConnection } from "@kubemend/core/Valkey"

/** The shared keys (core/src/Valkey.ts; here the deadline is 500ms) and the gateway's own. */
export interface ValkeySettings extends ValkeyConnection {
  /** Prefix of every key the gateway writes (`<prefix>:mcp:<session id>`, ...); replicas of one gateway share it. */
  readonly keyPrefix: string
  /** While Valkey is unreachable, how often the gateway tries it again (and goes back to shared state on success). */
  readonly recoveryInterval: Duration.Duration
}

/**
 * Defaults of a configured `valkey` block (only `host` is required). The deadline is short because every tool call
 * waits on a rate-limit check: past it the call counts as Valkey unreachable and the gateway serves from memory.
 */
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

/** The `valkey` block; none without a `host`. */
export const valkeyConfig: Config.Config<Option.Option<ValkeySettings>> = sharedValkeyConfig(
  valkeyDefaults,
  Config.all({
    keyPrefix: Config.nonEmptyString("keyPrefix").pipe(Config.withDefault(valkeyDefaults.keyPrefix)),
    recoveryInterval: duration("recoveryInterval").pipe(Config.withDefault(valkeyDefaults.recoveryInterval))
  })
)
