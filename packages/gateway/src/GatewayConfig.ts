/**
 * The gateway's tunables. Read from the `gateway` config provider (YAML `CONFIG_FILE` + `GATEWAY_*` env, see
 * core Config.ts), e.g. `rateLimit.userRequestsPerSec` / `GATEWAY_RATE_LIMIT_USER_REQUESTS_PER_SEC`.
 */
import { Config, ConfigError, Context, Duration, Either, HashMap, Layer, Option } from "effect"
import { duration, intInRange, parseGoDuration } from "@kubemend/core/Config"
import type { TokenSourceOptions } from "@kubemend/core/ServiceToken"
import { valkeyConfig, type ValkeySettings } from "./Shared/ValkeySettings.ts"

export interface RateLimitSettings {
  /** Requests per second per client IP, checked before authentication (token bucket, burst = rate). */
  readonly ipRequestsPerSec: number
  /** Requests per second per authenticated user. */
  readonly userRequestsPerSec: number
  /** `tools/call` per user per minute. */
  readonly toolCallsPerMinute: number
  /**
   * Open sessions across all users, MCP sessions and A2A conversations together (one pool, `SessionSlots`); the
   * next `initialize` or new conversation is refused.
   */
  readonly maxConcurrentSessions: number
  /**
   * Open sessions of one user (MCP sessions and A2A conversations together), beside the global pool: a script or a
   * few IDE restarts of one user cannot take every slot.
   */
  readonly maxSessionsPerUser: number
}

export interface BreakerSettings {
  /** Consecutive failures that open the breaker. */
  readonly failureThreshold: number
  /** How long an open breaker refuses calls before letting one trial through. */
  readonly resetTimeout: Duration.Duration
}

export interface GatewaySettings {
  /** Tool name prefix: tools are `<prefix>_<name>` (`svc_list_remediations`). */
  readonly toolPrefix: string
  /** `POST /mcp` answers 501 when false. */
  readonly mcpEnabled: boolean
  /** Interactive investigations; when false the 11 session-dependent tools are not registered. */
  readonly interactiveEnabled: boolean
  /** Severity triage; `svc_list_alerts` needs it and `metricsBackendUrl`. */
  readonly severityTriageEnabled: boolean
  /** Prometheus-compatible base URL serving `GET /api/v1/alerts`. */
  readonly metricsBackendUrl: Option.Option<string>
  /**
   * A bearer token for the metrics backend, read from this file on every request (a projected service account token
   * rotates): the in-cluster querier the operator points at by default authorizes with it.
   */
  readonly metricsBackendTokenFile: Option.Option<string>
  /** PEM CA bundle the metrics backend's certificate is checked against (the cluster's service CA), else the system's. */
  readonly metricsBackendCaFile: Option.Option<string>
  readonly rateLimit: RateLimitSettings
  /** Largest accepted request body; larger ones get 413 without being read to the end. */
  readonly maxBodyBytes: number
  /** Browser origins allowed to call (DNS rebinding defence); `*` allows any. Requests without `Origin` pass. */
  readonly allowedOrigins: ReadonlyArray<string>
  /**
   * Peers whose `X-Forwarded-For` is believed for the client address (per-IP limits, audit): the console proxy, an
   * ingress, a Route. Empty: the socket's peer, always.
   */
  readonly trustedProxyCIDRs: ReadonlyArray<string>
  /** Deadline of one tool call unless overridden. */
  readonly toolTimeout: Duration.Duration
  /** Per-tool deadlines, keyed by tool name with or without the prefix. */
  readonly toolTimeouts: ReadonlyMap<string, Duration.Duration>
  /** `svc_watch` returns after this long at the latest. */
  readonly watchMaxDuration: Duration.Duration
  /** `svc_watch` keeps at most this many events. */
  readonly watchMaxEvents: number
  /** `svc_await_session` gives up after this long. */
  readonly awaitSessionTimeout: Duration.Duration
  /** Serialized tool results are capped at this many bytes. */
  readonly maxToolOutputBytes: number
  /** An MCP session unused this long is closed. */
  readonly sessionIdleTimeout: Duration.Duration
  /** An SSE response whose unsent output exceeds this many bytes is dropped (slow reader). */
  readonly sseMaxBufferedBytes: number
  /**
   * An SSE comment (`: keepalive`) goes to every open MCP and A2A stream this often, and a call that carried a
   * `progressToken` gets a `notifications/progress` this often while it runs (common proxies cut idle streams at
   * 30 s; the official MCP client gives up on a request without progress at 60 s).
   */
  readonly streamKeepaliveInterval: Duration.Duration
  /** Base URL of the investigation agent; its MCP server is at `/api/v1/mcp`. */
  readonly agentUrl: Option.Option<string>
  /** Prefix of the agent's own tool names (`<prefix>_investigate`). */
  readonly agentToolPrefix: string
  /**
   * The gateway's ServiceAccount token for the agent's REST API (its investigation event streams): `agent.token`,
   * else `agent.tokenFile`, else the pod's projected token.
   */
  readonly agentToken: TokenSourceOptions
  readonly breaker: BreakerSettings
  /** Deadline of one metrics-backend or readiness request. */
  readonly backendTimeout: Duration.Duration
  /** Base URI of problem `type`s. */
  readonly problemTypeBase: string
  /**
   * The Valkey (or Redis) server gateway replicas share their state through (`valkey.host`, `GATEWAY_VALKEY_HOST`;
   * the block and its keys are in Shared/ValkeySettings.ts). Unset (the default): state in memory, per replica.
   */
  readonly valkey: Option.Option<ValkeySettings>
}

export type GatewayOverrides = Partial<Omit<GatewaySettings, "rateLimit" | "breaker">> & {
  readonly rateLimit?: Partial<RateLimitSettings>
  readonly breaker?: Partial<BreakerSettings>
}

const defaults: GatewaySettings = {
  toolPrefix: "svc",
  mcpEnabled: true,
  interactiveEnabled: false,
  severityTriageEnabled: false,
  metricsBackendUrl: Option.none(),
  metricsBackendTokenFile: Option.none(),
  metricsBackendCaFile: Option.none(),
  rateLimit: { ipRequestsPerSec: 50, userRequestsPerSec: 20, toolCallsPerMinute: 60, maxConcurrentSessions: 100, maxSessionsPerUser: 10 },
  maxBodyBytes: 1024 * 1024,
  allowedOrigins: [],
  trustedProxyCIDRs: [],
  toolTimeout: Duration.seconds(30),
  toolTimeouts: new Map(),
  watchMaxDuration: Duration.minutes(15),
  watchMaxEvents: 500,
  awaitSessionTimeout: Duration.minutes(3),
  maxToolOutputBytes: 16_384,
  sessionIdleTimeout: Duration.minutes(30),
  sseMaxBufferedBytes: 1024 * 1024,
  streamKeepaliveInterval: Duration.seconds(15),
  agentUrl: Option.none(),
  agentToolPrefix: "svc",
  agentToken: {},
  breaker: { failureThreshold: 5, resetTimeout: Duration.seconds(30) },
  backendTimeout: Duration.seconds(5),
  problemTypeBase: "https://kubemend.io/problems",
  valkey: Option.none()
}

const merge = (o: GatewayOverrides): GatewaySettings => ({
  ...defaults,
  ...o,
  rateLimit: { ...defaults.rateLimit, ...o.rateLimit },
  breaker: { ...defaults.breaker, ...o.breaker }
})

const positive = (name: string) => intInRange(name, 1, 1_000_000_000)
/** An optional string setting where an empty value means absent. */
const optionalUrl = (name: string) => Config.option(Config.string(name)).pipe(Config.map(Option.filter((s) => s !== "")))

const goDurationValue = Config.string().pipe(
  Config.mapOrFail((s) =>
    Option.match(parseGoDuration(s), {
      onNone: () => Either.left(ConfigError.InvalidData([], `expected a Go duration such as 30s or 15m, got "${s}"`)),
      onSome: Either.right
    })
  )
)

const rateLimitConfig = Config.all({
  ipRequestsPerSec: positive("ipRequestsPerSec").pipe(Config.withDefault(defaults.rateLimit.ipRequestsPerSec)),
  userRequestsPerSec: positive("userRequestsPerSec").pipe(Config.withDefault(defaults.rateLimit.userRequestsPerSec)),
  toolCallsPerMinute: positive("toolCallsPerMinute").pipe(Config.withDefault(defaults.rateLimit.toolCallsPerMinute)),
  maxConcurrentSessions: positive("maxConcurrentSessions").pipe(
    Config.withDefault(defaults.rateLimit.maxConcurrentSessions)
  ),
  maxSessionsPerUser: positive("maxSessionsPerUser").pipe(Config.withDefault(defaults.rateLimit.maxSessionsPerUser))
}).pipe(Config.nested("rateLimit"))

const toolsConfig = Config.all({
  toolTimeout: duration("timeout").pipe(Config.withDefault(defaults.toolTimeout)),
  toolTimeouts: Config.hashMap(goDurationValue, "timeouts").pipe(
    Config.map((m) => new Map([...HashMap.toEntries(m)].map(([k, v]) => [k.toLowerCase(), v] as const))),
    Config.withDefault(new Map<string, Duration.Duration>())
  ),
  watchMaxDuration: duration("watchMaxDuration").pipe(Config.withDefault(defaults.watchMaxDuration)),
  watchMaxEvents: positive("watchMaxEvents").pipe(Config.withDefault(defaults.watchMaxEvents)),
  awaitSessionTimeout: duration("awaitSessionTimeout").pipe(Config.withDefault(defaults.awaitSessionTimeout)),
  maxToolOutputBytes: intInRange("maxOutputBytes", 1024, 16 * 1024 * 1024).pipe(
    Config.withDefault(defaults.maxToolOutputBytes)
  )
}).pipe(Config.nested("tools"))

/** Everything from the installed config provider, defaults for what is absent. */
export const gatewayConfig: Config.Config<GatewaySettings> = Config.all({
  toolPrefix: Config.string("toolPrefix").pipe(Config.withDefault(defaults.toolPrefix)),
  mcpEnabled: Config.boolean("enabled").pipe(Config.nested("mcp"), Config.withDefault(true)),
  interactiveEnabled: Config.boolean("enabled").pipe(Config.nested("interactive"), Config.withDefault(false)),
  severityTriageEnabled: Config.boolean("enabled").pipe(Config.nested("severityTriage"), Config.withDefault(false)),
  metricsBackendUrl: optionalUrl("url").pipe(Config.nested("metricsBackend")),
  metricsBackendTokenFile: optionalUrl("tokenFile").pipe(Config.nested("metricsBackend")),
  metricsBackendCaFile: optionalUrl("caFile").pipe(Config.nested("metricsBackend")),
  rateLimit: rateLimitConfig,
  maxBodyBytes: intInRange("maxBodyBytes", 1024, 64 * 1024 * 1024).pipe(
    Config.nested("limits"),
    Config.withDefault(defaults.maxBodyBytes)
  ),
  allowedOrigins: Config.array(Config.string(), "allowedOrigins").pipe(Config.withDefault([] as ReadonlyArray<string>)),
  trustedProxyCIDRs: Config.array(Config.string(), "trustedProxyCIDRs").pipe(Config.withDefault([] as ReadonlyArray<string>)),
  tools: toolsConfig,
  sessionIdleTimeout: duration("sessionIdleTimeout").pipe(Config.nested("mcp"), Config.withDefault(defaults.sessionIdleTimeout)),
  sseMaxBufferedBytes: positive("sseMaxBufferedBytes").pipe(Config.nested("mcp"), Config.withDefault(defaults.sseMaxBufferedBytes)),
  streamKeepaliveInterval: duration("keepaliveInterval").pipe(
    Config.nested("streams"),
    Config.withDefault(defaults.streamKeepaliveInterval)
  ),
  agentUrl: optionalUrl("url").pipe(Config.nested("agent")),
  agentToolPrefix: Config.option(Config.string("toolPrefix")).pipe(Config.nested("agent")),
  agentToken: Config.all({
    token: Config.option(Config.redacted("token")),
    tokenFile: optionalUrl("tokenFile")
  }).pipe(
    Config.nested("agent"),
    Config.map(({ token, tokenFile }): TokenSourceOptions => ({
      ...(Option.isSome(token) ? { token: token.value } : {}),
      ...(Option.isSome(tokenFile) ? { tokenFile: tokenFile.value } : {})
    }))
  ),
  breaker: Config.all({
    failureThreshold: positive("failureThreshold").pipe(Config.withDefault(defaults.breaker.failureThreshold)),
    resetTimeout: duration("resetTimeout").pipe(Config.withDefault(defaults.breaker.resetTimeout))
  }).pipe(Config.nested("circuitBreaker")),
  backendTimeout: duration("backendTimeout").pipe(Config.withDefault(defaults.backendTimeout)),
  problemTypeBase: Config.string("problemTypeBase").pipe(Config.withDefault(defaults.problemTypeBase)),
  valkey: valkeyConfig
}).pipe(
  Config.map(({ tools, agentToolPrefix, ...rest }) => ({
    ...rest,
    ...tools,
    agentToolPrefix: Option.getOrElse(agentToolPrefix, () => rest.toolPrefix)
  }))
)

export class GatewayConfig extends Context.Tag("@kubemend/gateway/GatewayConfig")<GatewayConfig, GatewaySettings>() {
  static readonly defaults = defaults
  /** For tests: defaults with overrides (nested blocks merge). */
  static readonly layer = (overrides: GatewayOverrides = {}) => Layer.succeed(GatewayConfig, merge(overrides))
  static readonly layerConfig = Layer.effect(GatewayConfig, gatewayConfig)
}

/** The full tool name: `<prefix>_<name>`. */
export const prefixed = (settings: Pick<GatewaySettings, "toolPrefix">, name: string): string =>
  settings.toolPrefix === "" ? name : `${settings.toolPrefix}_${name}`

/** The deadline of one call of `tool` (unprefixed name), or the tool's own default, or the global one. */
export const toolDeadline = (
  settings: GatewaySettings,
  tool: string,
  own: Duration.Duration | undefined
): Duration.Duration =>
  settings.toolTimeouts.get(prefixed(settings, tool).toLowerCase()) ??
    settings.toolTimeouts.get(tool.toLowerCase()) ??
    own ??
    settings.toolTimeout
