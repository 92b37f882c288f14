/**
 * The signal-ingestion service's tunables. Keys mirror the platform CR's `gateway` block (`config.*` there, flat
 * here: `k8sRequestTimeout`, `trustedProxyCIDRs`, `corsAllowedOrigins`, `deduplicationCooldown`), camelCase in the
 * YAML file and `SIGNALS_…` in the environment.
 */
import { Config, Context, Duration, Effect, Layer } from "effect"
import { duration, intInRange } from "@kubemend/core/Config"
import { isIP } from "node:net"

export interface SignalsSettings {
  /** Deadline of one Kubernetes API call (CR `gateway.config.k8sRequestTimeout`). */
  readonly k8sRequestTimeout: Duration.Duration
  /** Peers whose `X-Forwarded-For` is believed (CR `gateway.config.trustedProxyCIDRs`). */
  readonly trustedProxyCIDRs: ReadonlyArray<string>
  /** Browser origins allowed to post (CR `gateway.config.corsAllowedOrigins`); other `Origin`s are refused. */
  readonly corsAllowedOrigins: ReadonlyArray<string>
  /** After a request for a fingerprint ends, the same fingerprint is still deduplicated this long (CR `deduplicationCooldown`). */
  readonly deduplicationCooldown: Duration.Duration
  /** Largest request body; beyond it 413. */
  readonly maxBodyBytes: number
  /** Largest `originalPayload` kept on a request; a longer one is cut (and marked in `providerData`). */
  readonly maxOriginalPayloadBytes: number
  /** How long a known request's phase is trusted before it is read again. */
  readonly phaseRefresh: Duration.Duration
  /** Duplicates arriving this long after the first unwritten one share its `status.deduplication` write. */
  readonly deduplicationWriteDelay: Duration.Duration
  /** How long an allowed sender (TokenReview + SubjectAccessReview) is remembered. */
  readonly authCacheTTL: Duration.Duration
  /** The resource name the SubjectAccessReview asks about (`create` on core `services/<name>`). */
  readonly accessResourceName: string
  /** Consecutive API outages before the breaker opens, and how long it stays open. */
  readonly breakerThreshold: number
  readonly breakerResetTimeout: Duration.Duration
  /** Fingerprints remembered for deduplication; the least recently seen go first. */
  readonly maxTracked: number
  /** Kubernetes Warning events watched from the API (`events.enabled`) and the reasons that become signals. */
  readonly events: {
    readonly enabled: boolean
    readonly reasons: ReadonlyArray<string>
    /** Namespaces watched; empty: all. */
    readonly namespaces: ReadonlyArray<string>
  }
}

export const defaultEventReasons = [
  "BackOff",
  "OOMKilling",
  "FailedScheduling",
  "Unhealthy",
  "FailedMount",
  "Evicted",
  "FailedCreate",
  "NodeNotReady"
] as const

// Effect's JSON provider reads an empty list (`[]` in the file) as `["<nil>"]`; that and blanks are no entries.
const list = (name: string, fallback: ReadonlyArray<string>) =>
  Config.array(Config.string(), name).pipe(
    Config.map((xs) => xs.map((x) => x.trim()).filter((x) => x !== "" && x !== "<nil>")),
    Config.withDefault(fallback)
  )

const isCidr = (c: string) => {
  const [address, bits, ...rest] = c.split("/")
  const family = isIP(address ?? "")
  const max = family === 6 ? 128 : 32
  return family !== 0 && rest.length === 0 && (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= max))
}

export class SignalsConfig extends Context.Tag("@kubemend/signals/SignalsConfig")<SignalsConfig, SignalsSettings>() {
  static readonly defaults: SignalsSettings = {
    k8sRequestTimeout: Duration.seconds(10),
    trustedProxyCIDRs: [],
    corsAllowedOrigins: [],
    deduplicationCooldown: Duration.minutes(5),
    maxBodyBytes: 1024 * 1024,
    maxOriginalPayloadBytes: 32 * 1024,
    phaseRefresh: Duration.seconds(5),
    deduplicationWriteDelay: Duration.millis(500),
    authCacheTTL: Duration.seconds(30),
    accessResourceName: "kubemend-signals",
    breakerThreshold: 5,
    breakerResetTimeout: Duration.seconds(10),
    maxTracked: 100_000,
    events: { enabled: false, reasons: [...defaultEventReasons], namespaces: [] }
  }

  static readonly layer = (overrides: Partial<SignalsSettings> = {}) => Layer.succeed(SignalsConfig, { ...SignalsConfig.defaults, ...overrides })

  static readonly layerConfig = Layer.effect(
    SignalsConfig,
    Effect.gen(function* () {
      const d = SignalsConfig.defaults
      const events = yield* Config.all({
        enabled: Config.boolean("enabled").pipe(Config.withDefault(d.events.enabled)),
        reasons: list("reasons", d.events.reasons),
        namespaces: list("namespaces", d.events.namespaces)
      }).pipe(Config.nested("events"))
      return {
        k8sRequestTimeout: yield* duration("k8sRequestTimeout").pipe(Config.withDefault(d.k8sRequestTimeout)),
        trustedProxyCIDRs: yield* list("trustedProxyCIDRs", d.trustedProxyCIDRs).pipe(
          Config.validate({ message: "must be IP addresses or CIDRs such as 10.0.0.0/8", validation: (xs) => xs.every(isCidr) })
        ),
        corsAllowedOrigins: yield* list("corsAllowedOrigins", d.corsAllowedOrigins),
        deduplicationCooldown: yield* duration("deduplicationCooldown").pipe(Config.withDefault(d.deduplicationCooldown)),
        maxBodyBytes: yield* intInRange("maxBodyBytes", 1024, 64 * 1024 * 1024).pipe(Config.withDefault(d.maxBodyBytes)),
        maxOriginalPayloadBytes: yield* intInRange("maxOriginalPayloadBytes", 0, 1024 * 1024).pipe(
          Config.withDefault(d.maxOriginalPayloadBytes)
        ),
        phaseRefresh: yield* duration("phaseRefresh").pipe(Config.withDefault(d.phaseRefresh)),
        deduplicationWriteDelay: yield* duration("deduplicationWriteDelay").pipe(Config.withDefault(d.deduplicationWriteDelay)),
        authCacheTTL: yield* duration("authCacheTTL").pipe(Config.withDefault(d.authCacheTTL)),
        accessResourceName: yield* Config.string("accessResourceName").pipe(Config.withDefault(d.accessResourceName)),
        breakerThreshold: yield* intInRange("breakerThreshold", 1, 1000).pipe(Config.withDefault(d.breakerThreshold)),
        breakerResetTimeout: yield* duration("breakerResetTimeout").pipe(Config.withDefault(d.breakerResetTimeout)),
        maxTracked: yield* intInRange("maxTracked", 100, 10_000_000).pipe(Config.withDefault(d.maxTracked)),
        events
      } satisfies SignalsSettings
    })
  )
}
