/**
 * Tunables of the effectiveness monitor (operator config block `effectivenessMonitor`, as the platform CR names it),
 * plus where the metrics backend is (`monitoring.metricsURL`). The platform CR's `spec.effectivenessMonitor.assessment`
 * and `spec.monitoring` override them at run time (see `applyEffectivenessSpec`).
 */
import { duration, parseGoDuration } from "@kubemend/core/Config"
import { Config, Context, Duration, Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"

export interface EffectivenessSettings {
  /** An assessment expires this long after its creation (status `validityDeadline`). */
  readonly validityWindow: Duration.Duration
  /** Stabilization of an assessment whose spec names none. */
  readonly stabilizationWindow: Duration.Duration
  /** How often a firing alert is rechecked while the target is healthy (alert decay), and drift is looked for. */
  readonly recheckInterval: Duration.Duration
  /** Health score at or above which the target counts as recovered. */
  readonly healthyThreshold: number
  /** Prometheus-compatible base URL (`/api/v1/alerts`, `/api/v1/query`); none: the alert component is not assessed. */
  readonly metricsUrl: Option.Option<string>
  /** Bearer token file for the metrics backend (an in-cluster querier wants the ServiceAccount token). */
  readonly metricsTokenFile: Option.Option<string>
  /** Deadline of one call to the metrics backend or storage. */
  readonly requestTimeout: Duration.Duration
}

export class EffectivenessConfig extends Context.Tag("@kubemend/operator/EffectivenessConfig")<EffectivenessConfig, EffectivenessSettings>() {
  static readonly defaults: EffectivenessSettings = {
    validityWindow: Duration.seconds(300),
    stabilizationWindow: Duration.seconds(30),
    recheckInterval: Duration.seconds(15),
    healthyThreshold: 1,
    metricsUrl: Option.none(),
    metricsTokenFile: Option.none(),
    requestTimeout: Duration.seconds(5)
  }

  static readonly layer = (overrides: Partial<EffectivenessSettings> = {}) =>
    Layer.succeed(EffectivenessConfig, { ...EffectivenessConfig.defaults, ...overrides })

  /** From the operator's provider: `effectivenessMonitor.*` and `monitoring.metricsURL`. */
  static readonly layerConfig = Layer.effect(
    EffectivenessConfig,
    Config.all({
      monitor: Config.all({
        validityWindow: duration("validityWindow").pipe(Config.nested("assessment"), Config.withDefault(EffectivenessConfig.defaults.validityWindow)),
        stabilizationWindow: duration("stabilizationWindow").pipe(
          Config.nested("assessment"),
          Config.withDefault(EffectivenessConfig.defaults.stabilizationWindow)
        ),
        recheckInterval: duration("recheckInterval").pipe(Config.withDefault(EffectivenessConfig.defaults.recheckInterval)),
        healthyThreshold: Config.number("healthyThreshold").pipe(Config.withDefault(EffectivenessConfig.defaults.healthyThreshold)),
        requestTimeout: duration("requestTimeout").pipe(Config.withDefault(EffectivenessConfig.defaults.requestTimeout))
      }).pipe(Config.nested("effectivenessMonitor")),
      metricsUrl: Config.option(Config.string("metricsURL").pipe(Config.nested("monitoring"))),
      metricsTokenFile: Config.option(Config.string("tokenFile").pipe(Config.nested("monitoring")))
    }).pipe(Config.map(({ metricsTokenFile, metricsUrl, monitor }): EffectivenessSettings => ({ ...monitor, metricsUrl, metricsTokenFile })))
  )
}

type Json = Record<string, unknown>
const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {})
const dur = (v: unknown) => (typeof v === "string" ? parseGoDuration(v) : Option.none())

/**
 * `base` with what the platform CR sets: `spec.effectivenessMonitor.assessment.{stabilizationWindow,validityWindow}`,
 * and `spec.monitoring` (disabled: no metrics backend; `metricsURL`: that one).
 */
export const applyEffectivenessSpec = (base: EffectivenessSettings, spec: unknown): EffectivenessSettings => {
  const s = obj(spec)
  const assessment = obj(obj(s["effectivenessMonitor"])["assessment"])
  const monitoring = obj(s["monitoring"])
  const url = monitoring["metricsURL"]
  return {
    ...base,
    validityWindow: Option.getOrElse(dur(assessment["validityWindow"]), () => base.validityWindow),
    stabilizationWindow: Option.getOrElse(dur(assessment["stabilizationWindow"]), () => base.stabilizationWindow),
    metricsUrl: monitoring["enabled"] === false ? Option.none() : typeof url === "string" && url !== "" ? Option.some(url) : base.metricsUrl
  }
}

/** The `authorization` header for the metrics backend, read from the token file at each call (tokens rotate). */
export const metricsAuthHeader = (settings: EffectivenessSettings) =>
  Effect.sync((): Record<string, string> =>
    Option.match(Option.flatMap(settings.metricsTokenFile, (file) => Option.liftThrowable(() => Fs.readFileSync(file, "utf8").trim())()), {
      onNone: () => ({}),
      onSome: (token) => ({ authorization: `Bearer ${token}` })
    })
  )
