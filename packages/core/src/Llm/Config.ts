/**
 * The `llm` block of the agent config (document 3, camelCase keys) and its validation rules.
 */
import { Config, ConfigError, Duration, Either, HashMap, Option, Redacted, Schema } from "effect"
import { duration } from "../Config.ts"
import { LlmConfigError } from "./Errors.ts"
import { Phase } from "./Types.ts"

export const providers = [
  "openai",
  "ollama",
  "azure",
  "vertex",
  "vertex_ai",
  "anthropic",
  "bedrock",
  "huggingface",
  "mistral",
  "openai_compatible"
] as const
export type Provider = (typeof providers)[number]

/** Spellings the operator (camelCase) and people use for the same providers. */
const aliases: Record<string, Provider> = { vertexAi: "vertex_ai", openaiCompatible: "openai_compatible" }

export const parseProvider = (value: string): Provider | undefined =>
  aliases[value] ?? (providers as ReadonlyArray<string>).find((p) => p === value) as Provider | undefined

/** Providers whose `endpoint` has no usable default (document 3), plus `openai_compatible` (no public origin). */
export const endpointRequired: ReadonlySet<Provider> = new Set([
  "openai",
  "openai_compatible",
  "ollama",
  "azure",
  "mistral"
])

/** OAuth2 client-credentials grant; the token is cached until shortly before it expires. */
export interface Oauth2Settings {
  readonly tokenUrl: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly scopes: ReadonlyArray<string>
}

/** Per-phase override; unset fields are inherited from the main block. */
export interface PhaseOverride {
  readonly provider?: Provider
  readonly model?: string
  readonly endpoint?: string
  readonly apiKey?: Redacted.Redacted<string>
}

export type PhaseModels = Partial<Record<Phase, PhaseOverride>>

export interface LlmSettings {
  readonly provider: Provider
  readonly model: string
  /** Provider origin. For the OpenAI wire, `/v1` is appended unless the path already ends with it. */
  readonly endpoint?: string
  readonly apiKey?: Redacted.Redacted<string>
  /** File holding the key (the mounted `credentialsSecretName`); read at start, wins over `apiKey`. */
  readonly apiKeyFile?: string
  /** Sent only when set (release 1.5.5). */
  readonly temperature?: number
  /** Retries after the first attempt, for 429, 5xx, network errors and timeouts only. Default 3. */
  readonly maxRetries: number
  /** Per attempt (and idle time between stream chunks). Default 120 s: long RCA prompts on hosted models. */
  readonly timeout: Duration.Duration
  /** First backoff step; doubles per retry up to `retryMaxDelay`. A Retry-After header wins. */
  readonly retryBaseDelay: Duration.Duration
  readonly retryMaxDelay: Duration.Duration
  readonly azureApiVersion: string
  readonly vertexProject?: string
  readonly vertexLocation?: string
  readonly bedrockRegion?: string
  /** SigV4 credentials for bedrock when no `apiKey` (bearer API key) is given. */
  readonly awsAccessKeyId?: string
  readonly awsSecretAccessKey?: Redacted.Redacted<string>
  readonly awsSessionToken?: Redacted.Redacted<string>
  /** PEM bundle trusted for the provider's TLS certificate (replaces the default trust store). */
  readonly tlsCaFile?: string
  readonly oauth2?: Oauth2Settings
  readonly phaseModels: PhaseModels
  /** `llm-runtime.yaml`: its `phaseModels` replace the static ones and are re-read when the file changes. */
  readonly runtimeConfigFile?: string
  readonly runtimeReloadInterval: Duration.Duration
}

export const defaults = {
  maxRetries: 3,
  timeout: Duration.seconds(120),
  retryBaseDelay: Duration.millis(500),
  retryMaxDelay: Duration.seconds(30),
  azureApiVersion: "2024-10-21",
  phaseModels: {},
  runtimeReloadInterval: Duration.seconds(5)
} satisfies Partial<LlmSettings>

export type LlmSettingsInput = Omit<LlmSettings, keyof typeof defaults> & Partial<Pick<LlmSettings, keyof typeof defaults>>

export const makeSettings = (input: LlmSettingsInput): LlmSettings => ({ ...defaults, ...input })

type Compact<T> =
  & { [K in keyof T as undefined extends T[K] ? never : K]: T[K] }
  & { [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined> }
/** Drops undefined values so optional keys stay absent (exactOptionalPropertyTypes). */
export const compact = <T extends object>(o: T): Compact<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Compact<T>

const PhaseOverrideFields = Schema.Struct({
  provider: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  endpoint: Schema.optional(Schema.String),
  apiKey: Schema.optional(Schema.String)
})
const decodeOverride = Schema.decodeUnknownEither(PhaseOverrideFields, { onExcessProperty: "error" })

/** Validates a raw `phaseModels` map (from the config file or `llm-runtime.yaml`); `at` prefixes error keys. */
export const decodePhaseModels = (raw: unknown, at = "llm.phaseModels"): Either.Either<PhaseModels, LlmConfigError> => {
  if (raw === undefined || raw === null) return Either.right({})
  if (typeof raw !== "object" || Array.isArray(raw)) {
    return Either.left(new LlmConfigError({ key: at, message: "must be a map keyed by phase" }))
  }
  const out: Partial<Record<Phase, PhaseOverride>> = {}
  for (const [key, value] of Object.entries(raw)) {
    if (!Schema.is(Phase)(key)) {
      return Either.left(
        new LlmConfigError({
          key: `${at}.${key}`,
          message: `unknown phase "${key}"; allowed: ${Phase.literals.join(", ")}`
        })
      )
    }
    const fields = decodeOverride(value ?? {})
    if (Either.isLeft(fields)) {
      return Either.left(new LlmConfigError({ key: `${at}.${key}`, message: String(fields.left.message) }))
    }
    const { apiKey, endpoint, model, provider } = fields.right
    const parsed = provider === undefined ? undefined : parseProvider(provider)
    if (provider !== undefined && parsed === undefined) {
      return Either.left(new LlmConfigError({ key: `${at}.${key}.provider`, message: `unknown provider "${provider}"` }))
    }
    out[key] = compact({
      provider: parsed,
      model,
      endpoint,
      apiKey: apiKey === undefined ? undefined : Redacted.make(apiKey)
    })
  }
  return Either.right(out)
}

const opt = <A>(config: Config.Config<A>) => Config.map(Config.option(config), Option.getOrUndefined)

const providerConfig = (name: string) =>
  Config.mapOrFail(Config.string(name), (value) => {
    const p = parseProvider(value)
    return p === undefined
      ? Either.left(ConfigError.InvalidData([name], `unknown provider "${value}"; allowed: ${providers.join(", ")}`))
      : Either.right(p)
  })

const temperatureConfig = Config.mapOrFail(Config.string("temperature"), (value) => {
  const n = Number(value)
  return value.trim() !== "" && Number.isFinite(n) && n >= 0
    ? Either.right(n)
    : Either.left(ConfigError.InvalidData(["temperature"], `not a non-negative number: "${value}"`))
})

const overrideConfig = Config.all({
  provider: opt(Config.string("provider")),
  model: opt(Config.string("model")),
  endpoint: opt(Config.string("endpoint")),
  apiKey: opt(Config.string("apiKey"))
})

const phaseModelsConfig = Config.mapOrFail(
  Config.withDefault(Config.hashMap(overrideConfig, "phaseModels"), HashMap.empty()),
  (map) => {
    const raw = Object.fromEntries([...HashMap.toEntries(map)].map(([k, v]) => [k, compact(v)]))
    return Either.mapLeft(decodePhaseModels(raw, "phaseModels"), (e) => ConfigError.InvalidData(e.key.split("."), e.message))
  }
)

const oauth2Config = Config.all({
  tokenUrl: Config.string("tokenURL"),
  clientId: Config.string("clientId"),
  clientSecret: Config.redacted("clientSecret"),
  scopes: Config.withDefault(Config.array(Config.string(), "scopes"), [] as Array<string>)
})

/**
 * Reads the block from the current ConfigProvider, relative to where it is nested (the agent nests it under `llm`,
 * so env overrides read `LLM_PROVIDER`, `LLM_ENDPOINT`, `LLM_MODEL`, `LLM_API_KEY`, ...).
 */
export const settingsConfig: Config.Config<LlmSettings> = Config.all({
  provider: providerConfig("provider"),
  model: Config.string("model"),
  endpoint: opt(Config.string("endpoint")),
  apiKey: opt(Config.redacted("apiKey")),
  apiKeyFile: opt(Config.string("apiKeyFile")),
  temperature: opt(temperatureConfig),
  maxRetries: Config.withDefault(Config.integer("maxRetries"), defaults.maxRetries),
  timeoutSeconds: opt(Config.integer("timeoutSeconds")),
  azureApiVersion: Config.withDefault(Config.string("azureApiVersion"), defaults.azureApiVersion),
  vertexProject: opt(Config.string("vertexProject")),
  vertexLocation: opt(Config.string("vertexLocation")),
  bedrockRegion: opt(Config.string("bedrockRegion")),
  awsAccessKeyId: opt(Config.string("awsAccessKeyId")),
  awsSecretAccessKey: opt(Config.redacted("awsSecretAccessKey")),
  awsSessionToken: opt(Config.redacted("awsSessionToken")),
  tlsCaFile: opt(Config.string("tlsCaFile")),
  oauth2: opt(Config.nested(oauth2Config, "oauth2")),
  phaseModels: phaseModelsConfig,
  runtimeConfigFile: opt(Config.string("runtimeConfigFile")),
  runtimeReloadInterval: opt(duration("runtimeReloadInterval"))
}).pipe(
  Config.map(({ timeoutSeconds, ...c }) =>
    makeSettings(compact({ ...c, timeout: timeoutSeconds === undefined ? undefined : Duration.seconds(timeoutSeconds) }))
  )
)
