/**
 * The agent's tunables. Keys mirror the platform CR's agent block (camelCase in the YAML file, `AGENT_…` in the
 * environment); the `llm` block itself is read by the core Llm layer. `LLM_PROVIDER`, `LLM_ENDPOINT`, `LLM_MODEL`
 * and `LLM_API_KEY` (any `LLM_…` key) are accepted as short names of `AGENT_LLM_…`.
 */
import { Config, ConfigError, ConfigProvider, Context, Duration, Effect, HashSet, Layer, Option, type Redacted } from "effect"
import { duration, intInRange } from "@kubemend/core/Config"
import { type AuthConfigShape, authConfig, AuthConfig } from "@kubemend/core/Auth"

export type AlignmentMode = "monitor" | "enforce"

export interface AgentSettings {
  /** LLM round trips per investigation before it ends `failed` (CR `maxTurns`, min 1). */
  readonly maxTurns: number
  /** Wall-clock limit of one investigation run; it then ends `failed`. */
  readonly investigationTimeout: Duration.Duration
  /** How long a finished session (and its result) is kept before garbage collection (CR `session.ttl`). */
  readonly sessionTTL: Duration.Duration
  /** How often finished sessions are swept. */
  readonly sessionGcInterval: Duration.Duration
  /** Sessions held in memory at once; a submit beyond it answers 503. */
  readonly maxSessions: number
  /** Serves `GET /config`. */
  readonly devMode: boolean
  /** Replace prompt-injection phrases in tool output (CR `safety.sanitization.injectionPatternsEnabled`). */
  readonly injectionPatternsEnabled: boolean
  /** Replace credentials in tool output (CR `safety.sanitization.credentialScrubEnabled`). */
  readonly credentialScrubEnabled: boolean
  /** Calls of one tool per investigation (CR `safety.anomaly.maxToolCallsPerTool`). */
  readonly maxToolCallsPerTool: number
  /** Tool calls per investigation (CR `safety.anomaly.maxTotalToolCalls`). */
  readonly maxTotalToolCalls: number
  /** Consecutive failures of one tool after which it is refused (CR `safety.anomaly.maxRepeatedFailures`). */
  readonly maxRepeatedFailures: number
  /** UTF-8 bytes of one tool result given to the model; longer output is cut with a marker (CR `summarizer.maxToolOutputSize`). */
  readonly maxToolOutputSize: number
  /**
   * Tool output estimated above this many tokens (four characters per token) is summarized by an LLM call before
   * the model reads it (CR `summarizer.threshold`).
   */
  readonly summarizerThreshold: number
  /** Corrections sent for an ambiguous kind without `api_version` before the investigation escalates to a human. */
  readonly ambiguousKindRetries: number
  /** Final answers checked against the workflow's parameter schema before escalating. */
  readonly parameterValidationAttempts: number
  /** Corrections sent when the final answer is not the expected JSON. */
  readonly answerFormatRetries: number
  /** The shadow agent (CR `alignmentCheck`). */
  readonly alignment: {
    readonly enabled: boolean
    readonly mode: AlignmentMode
    readonly timeout: Duration.Duration
    /** Roughly four characters per token: a step longer than this is cut before review. */
    readonly maxStepTokens: number
  }
  /** Events kept per session for late SSE subscribers. */
  readonly eventHistory: number
  /** Events buffered per SSE subscriber; a slower reader loses the oldest. */
  readonly streamBuffer: number
  readonly keepaliveInterval: Duration.Duration
  /** Prefix of the interactive MCP tools (`svc` -> `svc_investigate`; `kubernaut` for the original's names). */
  readonly toolPrefix: string
  /** Interactive MCP sessions (CR `interactive`). */
  readonly interactive: {
    readonly enabled: boolean
    /** Lease duration; the holder renews it at a third of this while active. */
    readonly leaseTTL: Duration.Duration
    /** No action for this long and renewal stops: the lease lapses and the session reads `disconnected`. */
    readonly inactivityTimeout: Duration.Duration
    /**
     * How long `start` and `takeover` wait for the opening analysis (its progress streams to the caller meanwhile);
     * it goes on in the background after that. Below the gateway's 30s tool deadline.
     */
    readonly startWait: Duration.Duration
  }
  /** The metrics backend the investigation queries (CR `monitoring.prometheus`); no URL, no Prometheus tools. */
  readonly prometheus: {
    /** Prometheus or Thanos Querier base URL (`…/api/v1/query` is appended). */
    readonly url: string | undefined
    /** Bearer token sent with every query. */
    readonly token: Redacted.Redacted | undefined
    /** A token file read at each query (a projected ServiceAccount token rotates); wins over `token`. */
    readonly tokenFile: string | undefined
    readonly timeout: Duration.Duration
  }
}

export class AgentConfig extends Context.Tag("@kubemend/agent/AgentConfig")<AgentConfig, AgentSettings>() {
  static readonly defaults: AgentSettings = {
    maxTurns: 40,
    investigationTimeout: Duration.minutes(25),
    sessionTTL: Duration.minutes(30),
    sessionGcInterval: Duration.minutes(1),
    maxSessions: 1000,
    devMode: false,
    injectionPatternsEnabled: true,
    credentialScrubEnabled: true,
    maxToolCallsPerTool: 10,
    maxTotalToolCalls: 40,
    maxRepeatedFailures: 3,
    maxToolOutputSize: 100_000,
    summarizerThreshold: 8000,
    ambiguousKindRetries: 2,
    parameterValidationAttempts: 3,
    answerFormatRetries: 2,
    alignment: { enabled: false, mode: "monitor", timeout: Duration.seconds(10), maxStepTokens: 500 },
    eventHistory: 1000,
    streamBuffer: 256,
    keepaliveInterval: Duration.seconds(15),
    toolPrefix: "svc",
    interactive: {
      enabled: false,
      leaseTTL: Duration.seconds(60),
      inactivityTimeout: Duration.minutes(30),
      startWait: Duration.seconds(20)
    },
    prometheus: { url: undefined, token: undefined, tokenFile: undefined, timeout: Duration.seconds(15) }
  }

  /** For tests. */
  static readonly layer = (overrides: Partial<AgentSettings> = {}) => Layer.succeed(AgentConfig, { ...AgentConfig.defaults, ...overrides })

  static readonly layerConfig = Layer.effect(
    AgentConfig,
    Effect.suspend(() => settingsConfig)
  )
}

const d = AgentConfig.defaults
const int = (name: string, fallback: number, min = 1, max = 1_000_000) => intInRange(name, min, max).pipe(Config.withDefault(fallback))
const dur = (name: string, fallback: Duration.Duration) => duration(name).pipe(Config.withDefault(fallback))
const bool = (name: string, fallback: boolean) => Config.boolean(name).pipe(Config.withDefault(fallback))
/** `at(c, "b", "a")` reads `a.b.<c>`: innermost name first. */
const at = <A>(config: Config.Config<A>, ...path: ReadonlyArray<string>) => path.reduce((c, name) => Config.nested(c, name), config)

const settingsConfig: Config.Config<AgentSettings> = Config.all({
  maxTurns: int("maxTurns", d.maxTurns),
  investigationTimeout: dur("investigationTimeout", d.investigationTimeout),
  sessionTTL: Config.nested(dur("ttl", d.sessionTTL), "session"),
  sessionGcInterval: Config.nested(dur("gcInterval", d.sessionGcInterval), "session"),
  maxSessions: Config.nested(int("maxSessions", d.maxSessions), "session"),
  devMode: bool("devMode", d.devMode),
  injectionPatternsEnabled: at(bool("injectionPatternsEnabled", true), "sanitization", "safety"),
  credentialScrubEnabled: at(bool("credentialScrubEnabled", true), "sanitization", "safety"),
  maxToolCallsPerTool: at(int("maxToolCallsPerTool", d.maxToolCallsPerTool), "anomaly", "safety"),
  maxTotalToolCalls: at(int("maxTotalToolCalls", d.maxTotalToolCalls), "anomaly", "safety"),
  maxRepeatedFailures: at(int("maxRepeatedFailures", d.maxRepeatedFailures), "anomaly", "safety"),
  maxToolOutputSize: Config.nested(int("maxToolOutputSize", d.maxToolOutputSize, 256, 100_000_000), "summarizer"),
  summarizerThreshold: Config.nested(int("threshold", d.summarizerThreshold, 1, 10_000_000), "summarizer"),
  ambiguousKindRetries: int("ambiguousKindRetries", d.ambiguousKindRetries, 0, 10),
  parameterValidationAttempts: int("parameterValidationAttempts", d.parameterValidationAttempts, 1, 10),
  answerFormatRetries: int("answerFormatRetries", d.answerFormatRetries, 0, 10),
  alignment: Config.nested(
    Config.all({
      enabled: bool("enabled", false),
      mode: Config.literal("monitor", "enforce")("mode").pipe(Config.withDefault("monitor" as const)),
      timeout: dur("timeout", d.alignment.timeout),
      maxStepTokens: int("maxStepTokens", d.alignment.maxStepTokens, 16)
    }),
    "alignmentCheck"
  ),
  eventHistory: Config.nested(int("eventHistory", d.eventHistory, 16), "session"),
  streamBuffer: Config.nested(int("streamBuffer", d.streamBuffer, 16), "session"),
  keepaliveInterval: Config.nested(dur("keepaliveInterval", d.keepaliveInterval), "session"),
  toolPrefix: Config.string("toolPrefix").pipe(
    Config.validate({ message: "must be lower-case letters, digits or _", validation: (p) => /^[a-z][a-z0-9_]{0,30}$/.test(p) }),
    Config.withDefault(d.toolPrefix)
  ),
  interactive: Config.nested(
    Config.all({
      enabled: bool("enabled", false),
      leaseTTL: dur("leaseTTL", d.interactive.leaseTTL),
      inactivityTimeout: dur("inactivityTimeout", d.interactive.inactivityTimeout),
      startWait: dur("startWait", d.interactive.startWait)
    }),
    "interactive"
  ),
  prometheus: at(
    Config.all({
      url: Config.string("url").pipe(Config.option, Config.map(Option.getOrUndefined)),
      token: Config.redacted("token").pipe(Config.option, Config.map(Option.getOrUndefined)),
      tokenFile: Config.string("tokenFile").pipe(Config.option, Config.map(Option.getOrUndefined)),
      timeout: dur("timeout", d.prometheus.timeout)
    }),
    "prometheus",
    "monitoring"
  )
})

/** Trusted issuers of interactive callers: `interactive.jwtProviders` (and `interactive.allowInsecureIssuers`). */
export const InteractiveAuthConfigLive: Layer.Layer<AuthConfig, ConfigError.ConfigError> = Layer.effect(
  AuthConfig,
  Effect.map(Config.nested(authConfig, "interactive"), (c): AuthConfigShape => c)
)

/**
 * `LLM_…` environment variables as short names of `AGENT_LLM_…`: only paths under `llm` are looked up, so an
 * unrelated variable (`PORT`) never leaks into the config. `AGENT_LLM_…` wins when both are set.
 */
const shortLlmEnv = (source: ConfigProvider.ConfigProvider): ConfigProvider.ConfigProvider => {
  const env = source.pipe(ConfigProvider.constantCase).flattened
  const underLlm = (path: ReadonlyArray<string>) => path[0] === "LLM"
  return ConfigProvider.fromFlat(
    ConfigProvider.makeFlat({
      load: (path, primitive, split) => underLlm(path) ? env.load(path, primitive, split) : Effect.fail(ConfigError.MissingData([...path], "not an llm key")),
      enumerateChildren: (path) => (underLlm(path) ? env.enumerateChildren(path) : Effect.succeed(HashSet.empty())),
      patch: env.patch
    })
  )
}

/** `AGENT_…` env, then `LLM_…` env, then `current` (the config file). `env` is the process environment. */
export const withShortLlmEnv = (current: ConfigProvider.ConfigProvider, env: ConfigProvider.ConfigProvider = ConfigProvider.fromEnv()) =>
  env.pipe(
    ConfigProvider.nested("agent"),
    ConfigProvider.constantCase,
    ConfigProvider.orElse(() => shortLlmEnv(env)),
    ConfigProvider.orElse(() => current)
  )

/** Installs `withShortLlmEnv` over whatever provider was current. */
export const layerShortLlmEnv: Layer.Layer<never> = Layer.unwrapEffect(
  Effect.configProviderWith((current) => Effect.succeed(Layer.setConfigProvider(withShortLlmEnv(current))))
)
