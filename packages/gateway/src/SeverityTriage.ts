/**
 * Severity triage (release 1.5.1) for alerts whose `severity` label is missing or not one of the four levels:
 * first a rule tier (common spellings such as `error` or `minor`), then, when a triage model is configured, a
 * dedicated LLM (`severityTriage.llm`, providers `vertex_ai`, `gemini`, `anthropic`). Answers below
 * `llmConfidence` (0.7) keep `unknown`; answers are cached for `cacheTTLSeconds` (30). Model classifications are
 * audited as `severity_triage.completed` / `severity_triage.failed`. One classifier serves `svc_list_alerts` on
 * the bridge, and through it the A2A agent's alert tools, so both see the same severities: it sits below the MCP
 * tools and the A2A agent, and imports neither.
 */
import { Clock, Config, Context, ConfigError, Duration, Effect, Either, Layer, Option } from "effect"
import { NodeHttpClient } from "@effect/platform-node"
import { classifySeverity, type Severity } from "@kubemend/core/domain/Severity"
import { type LlmService, make as makeLlm, message, settingsConfig } from "@kubemend/core/Llm"
import { GatewayAudit } from "./GatewayAudit.ts"

/** An alert as triage reads it (and `svc_list_alerts` lists it): labels and annotations already redacted. */
export interface AlertView {
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  readonly state: string
  readonly active_at: string
}

export interface TriageSettings {
  /** How long a classification is reused. */
  readonly cacheTTL: Duration.Duration
  /** Model answers below this confidence leave the severity `unknown`. */
  readonly llmConfidence: number
  /** Deadline of one model call; past it the severity stays `unknown`. */
  readonly timeout: Duration.Duration
}

const defaults: TriageSettings = { cacheTTL: Duration.seconds(30), llmConfidence: 0.7, timeout: Duration.seconds(20) }

/**
 * The triage model, when one is configured. A reference (default: none, the rule tier only) because the tool
 * registry reads it and gateways built without the A2A config (the bridge's own tests) have none.
 */
export class TriageModel extends Context.Reference<TriageModel>()("@kubemend/gateway/TriageModel", {
  defaultValue: (): Option.Option<LlmService> => Option.none()
}) {}

/** Triage tunables; a reference with the defaults for the same reason as `TriageModel`. */
export class TriageConfig extends Context.Reference<TriageConfig>()("@kubemend/gateway/TriageConfig", {
  defaultValue: (): TriageSettings => defaults
}) {
  static readonly defaults: TriageSettings = defaults
  static readonly layer = (overrides: Partial<TriageSettings> = {}) => Layer.succeed(TriageConfig, { ...TriageConfig.defaults, ...overrides })
  static readonly layerConfig = Layer.effect(
    TriageConfig,
    Config.all({
      cacheTTLSeconds: Config.integer("cacheTTLSeconds").pipe(Config.withDefault(30)),
      llmConfidence: Config.number("llmConfidence").pipe(Config.withDefault(0.7))
    }).pipe(
      Config.nested("severityTriage"),
      Config.map(({ cacheTTLSeconds, llmConfidence }) => ({ ...TriageConfig.defaults, cacheTTL: Duration.seconds(cacheTTLSeconds), llmConfidence }))
    )
  )
}

/** `severityTriage.llm` from the gateway config; absent block (or no provider): rule tier only. */
export const triageModelLive = Layer.scoped(
  TriageModel,
  Effect.gen(function* () {
    const raw = yield* Effect.either(Config.string("provider").pipe(Config.nested("llm"), Config.nested("severityTriage")))
    if (Either.isLeft(raw) && ConfigError.isMissingDataOnly(raw.left)) return Option.none()
    const provider = Either.getOrElse(raw, () => "")
    if (!["vertex_ai", "gemini", "anthropic"].includes(provider)) {
      return yield* Effect.fail(ConfigError.InvalidData(["severityTriage", "llm", "provider"], `must be vertex_ai, gemini or anthropic, got "${provider}"`))
    }
    const settings = yield* Config.nested(settingsConfig, "llm").pipe(
      Config.nested("severityTriage"),
      Config.map((s) => (provider === "gemini" ? { ...s, provider: "vertex" as const } : s))
    )
    return Option.some(yield* makeLlm(settings).pipe(Effect.orDie))
  })
).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** Spellings seen in the wild for the four levels. */
const rules: Readonly<Record<string, Severity>> = {
  fatal: "critical",
  emergency: "critical",
  page: "critical",
  p1: "critical",
  sev1: "critical",
  error: "high",
  major: "high",
  p2: "high",
  sev2: "high",
  warn: "warning",
  minor: "warning",
  p3: "warning",
  sev3: "warning",
  none: "info",
  notice: "info",
  debug: "info",
  p4: "info",
  sev4: "info"
}

export interface Triaged {
  readonly severity: Severity
  readonly source: "label" | "rule" | "model" | "none"
  readonly confidence?: number
}

const prompt = (a: AlertView) =>
  [
    "Classify the severity of this Prometheus alert as one of critical, high, warning, info.",
    "Answer only with JSON: {\"severity\": \"...\", \"confidence\": <0..1>, \"reason\": \"...\"}.",
    JSON.stringify({ labels: a.labels, annotations: a.annotations, state: a.state })
  ].join("\n")

const parseAnswer = (text: string): { severity: Severity; confidence: number } | undefined => {
  try {
    const json = JSON.parse(/\{[\s\S]*\}/.exec(text)?.[0] ?? "") as { severity?: unknown; confidence?: unknown }
    const severity = classifySeverity(typeof json.severity === "string" ? json.severity : undefined)
    const confidence = typeof json.confidence === "number" ? json.confidence : 0
    return severity === "unknown" ? undefined : { severity, confidence }
  } catch {
    return undefined
  }
}

/** Who asked, for the audit events. */
export interface Requester {
  readonly userId: string
  readonly clientIp: string
}

export interface SeverityTriage {
  /** The alert's severity: its label when valid, else the rule tier, else the (cached) model, else `unknown`. */
  readonly classify: (alert: AlertView, who: Requester) => Effect.Effect<Triaged>
}

/** A classifier with its own cache (one per tool registry). */
export const makeSeverityTriage: Effect.Effect<SeverityTriage, never, GatewayAudit> = Effect.gen(function* () {
  const model = yield* TriageModel
  const config = yield* TriageConfig
  const audit = yield* GatewayAudit
  const cache = new Map<string, { readonly triaged: Triaged; readonly expiresAt: number }>()
  const maxEntries = 10_000

  const byModel = (llm: LlmService, alert: AlertView, who: Requester) =>
    Effect.gen(function* () {
      const name = alert.labels["alertname"] ?? ""
      const answer = yield* llm.chat({ messages: [message.user(prompt(alert))], temperature: 0 }).pipe(
        Effect.timeout(config.timeout),
        Effect.map((r) => parseAnswer(r.text)),
        Effect.either
      )
      if (Either.isLeft(answer) || answer.right === undefined) {
        const error = Either.isLeft(answer) ? String((answer.left as { message?: unknown }).message ?? answer.left._tag) : "unreadable answer"
        yield* audit.emit({ ...who, type: "severity_triage.failed", outcome: "failure", data: { alert_name: name, error } })
        return { severity: "unknown", source: "none" } satisfies Triaged as Triaged
      }
      const { severity, confidence } = answer.right
      const triaged: Triaged = confidence >= config.llmConfidence
        ? { severity, source: "model", confidence }
        : { severity: "unknown", source: "none", confidence }
      yield* audit.emit({
        ...who,
        type: "severity_triage.completed",
        outcome: "success",
        data: { alert_name: name, severity: triaged.severity, suggested: severity, confidence }
      })
      return triaged
    })

  const classify = (alert: AlertView, who: Requester) =>
    Effect.gen(function* () {
      const label = alert.labels["severity"]?.trim().toLowerCase()
      const direct = classifySeverity(label)
      if (direct !== "unknown") return { severity: direct, source: "label" } satisfies Triaged as Triaged
      if (label !== undefined && rules[label] !== undefined) return { severity: rules[label]!, source: "rule" } satisfies Triaged as Triaged
      if (Option.isNone(model)) return { severity: "unknown", source: "none" } satisfies Triaged as Triaged
      const key = JSON.stringify(Object.entries(alert.labels).sort())
      const now = yield* Clock.currentTimeMillis
      const hit = cache.get(key)
      if (hit !== undefined && hit.expiresAt > now) return hit.triaged
      const triaged = yield* byModel(model.value, alert, who)
      // Failed calls are not cached: the next listing asks again.
      if (triaged.confidence === undefined) return triaged
      if (cache.size >= maxEntries) cache.clear()
      cache.set(key, { triaged, expiresAt: now + Duration.toMillis(config.cacheTTL) })
      return triaged
    })

  return { classify } satisfies SeverityTriage
})
