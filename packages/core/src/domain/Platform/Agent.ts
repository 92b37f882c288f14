/**
 * The investigation agent block of the platform CR (`agent`; `kubernautAgent` in the original): LLM provider,
 * per-phase model overrides, interactive sessions and the agent's safety limits.
 */
import { Schema } from "effect"
import { Enum, GoDurationString, Int, Loose, NonEmpty, optional, withBlockDefault, withDefault } from "../Common.ts"
import { ClusterRoleNames, JwtProviders, Logging, Shutdown } from "./Shared.ts"

export const LlmProviderValues = [
  "openai",
  "ollama",
  "azure",
  "vertex",
  "vertex_ai",
  "vertexAi",
  "anthropic",
  "bedrock",
  "huggingface",
  "mistral",
  "openai_compatible"
] as const

/**
 * `llm.provider`. `vertex` is Gemini and `vertex_ai` Claude on the same cloud platform; `vertexAi` is the
 * operator's spelling of `vertex_ai` and is kept as written (see `normalizeLlmProvider`).
 */
export const LlmProvider = Enum(...LlmProviderValues)
export type LlmProvider = typeof LlmProvider.Type

/** The provider the agent's adapters know: `vertexAi` is `vertex_ai`. */
export const normalizeLlmProvider = (p: LlmProvider): Exclude<LlmProvider, "vertexAi"> => p === "vertexAi" ? "vertex_ai" : p

/** Providers that need an explicit `endpoint` (for openai the operator appends `/v1`). */
export const ProvidersRequiringEndpoint: ReadonlySet<LlmProvider> = new Set<LlmProvider>([
  "openai",
  "ollama",
  "azure",
  "mistral"
])

export const PhaseNames = ["rca", "workflow_discovery", "validation"] as const
export type PhaseName = (typeof PhaseNames)[number]

/** Per-phase override; unset fields are inherited from the main `llm` block. */
export const PhaseModel = Schema.Struct({
  provider: optional(LlmProvider),
  model: optional(Schema.String),
  endpoint: optional(Schema.String),
  apiKey: optional(Schema.String)
})

/** `llm.phaseModels`: keys only `rca`, `workflow_discovery`, `validation` (hot-reloadable). */
export const PhaseModels = Schema.Record({ key: Schema.String, value: PhaseModel }).pipe(
  Schema.filter((models) => {
    const bad = Object.keys(models).find((k) => !(PhaseNames as ReadonlyArray<string>).includes(k))
    return bad === undefined || { path: [bad], message: `unknown phase "${bad}": keys must be one of ${PhaseNames.join(", ")}` }
  })
)

export const OAuth2 = Schema.Struct({
  enabled: withDefault(Schema.Boolean, false),
  tokenURL: optional(Schema.String),
  credentialsSecretRef: optional(Schema.String),
  scopes: optional(Schema.Array(Schema.String))
})

export const Llm = Schema.Struct({
  provider: LlmProvider,
  model: NonEmpty,
  credentialsSecretName: NonEmpty,
  endpoint: optional(Schema.String),
  /** Sent to the model only when set (release 1.5.5); a string to keep the exact decimal. */
  temperature: optional(Schema.String),
  maxRetries: optional(Int.pipe(Schema.nonNegative())),
  timeoutSeconds: optional(Int.pipe(Schema.positive())),
  vertexProject: optional(Schema.String),
  vertexLocation: optional(Schema.String),
  bedrockRegion: optional(Schema.String),
  azureApiVersion: optional(Schema.String),
  tlsCaFile: optional(Schema.String),
  oauth2: optional(OAuth2),
  /** ConfigMap with key `llm-runtime.yaml`. */
  runtimeConfigMapName: optional(Schema.String),
  phaseModels: optional(PhaseModels)
}).pipe(
  Schema.filter((llm) =>
    !ProvidersRequiringEndpoint.has(llm.provider) || (llm.endpoint !== undefined && llm.endpoint !== "") || {
      path: ["endpoint"],
      message: `is required for provider ${llm.provider}`
    }
  )
)
export interface Llm extends Schema.Schema.Type<typeof Llm> {}

export const Interactive = Schema.Struct({
  enabled: withDefault(Schema.Boolean, false),
  jwtProviders: withDefault(JwtProviders, []),
  sessionTTL: optional(GoDurationString),
  inactivityTimeout: optional(GoDurationString),
  maxConcurrentSessions: optional(Int.pipe(Schema.positive())),
  rateLimitPerUser: optional(Int.pipe(Schema.positive()))
})

export const AlignmentCheck = Schema.Struct({
  enabled: withDefault(Schema.Boolean, false),
  timeout: withDefault(GoDurationString, "10s"),
  maxStepTokens: withDefault(Int.pipe(Schema.positive()), 500),
  /** A dedicated model for the check; unset fields come from the main `llm`. */
  llm: optional(
    Schema.Struct({
      provider: optional(LlmProvider),
      model: optional(Schema.String),
      endpoint: optional(Schema.String),
      credentialsSecretName: optional(Schema.String)
    })
  )
})

export const Safety = Schema.Struct({
  sanitization: withBlockDefault(
    Schema.Struct({
      injectionPatternsEnabled: withDefault(Schema.Boolean, true),
      credentialScrubEnabled: withDefault(Schema.Boolean, true)
    })
  ),
  anomaly: withBlockDefault(
    Schema.Struct({
      maxToolCallsPerTool: withDefault(Int.pipe(Schema.positive()), 10),
      maxTotalToolCalls: withDefault(Int.pipe(Schema.positive()), 40),
      maxRepeatedFailures: withDefault(Int.pipe(Schema.positive()), 3)
    })
  )
})

export const Agent = Schema.Struct({
  llm: Llm,
  interactive: withBlockDefault(Interactive),
  /** Tool-call turns per investigation. */
  maxTurns: withDefault(Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "must be at least 1" })), 40),
  session: withBlockDefault(Schema.Struct({ ttl: withDefault(GoDurationString, "30m") })),
  audit: withBlockDefault(Schema.Struct({ enabled: withDefault(Schema.Boolean, true) })),
  alignmentCheck: withBlockDefault(AlignmentCheck),
  summarizer: withBlockDefault(
    Schema.Struct({
      threshold: withDefault(Int.pipe(Schema.positive()), 8000),
      maxToolOutputSize: withDefault(Int.pipe(Schema.positive()), 100000)
    })
  ),
  safety: withBlockDefault(Safety),
  logging: withBlockDefault(Logging),
  resources: optional(Loose),
  shutdown: withBlockDefault(Shutdown),
  /** Pre-existing ClusterRoles bound to the agent (at most 64; a privilege escalation risk). */
  additionalClusterRoleBindings: optional(ClusterRoleNames)
})
export interface Agent extends Schema.Schema.Type<typeof Agent> {}
