/**
 * The lifecycle settings in force: the operator's config, overridden by what the platform CR of the controller
 * namespace sets explicitly (`spec.remediationOrchestrator.{timeouts,routing,dryRun,retention,effectivenessAssessment,asyncPropagation}`
 * and `spec.aiAnalysis.confidenceThreshold`), so editing the CR changes how remediations run without a restart. The
 * CR is read at most once per `refresh` (Clock time); when it cannot be read the last known settings stay.
 */
import { parseGoDuration } from "@kubemend/core/Config"
import { K8s } from "@kubemend/core/K8s"
import { Clock, Duration, Effect, Option, Ref } from "effect"
import { LifecycleConfig, type LifecycleSettings } from "./LifecycleConfig.ts"

type Json = Record<string, unknown>

const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {})

const dur = (v: unknown): Duration.Duration | undefined => typeof v === "string" ? Option.getOrUndefined(parseGoDuration(v)) : undefined

const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined)

/** Keeps the keys whose value is defined. */
const set = <A extends object>(o: { [K in keyof A]: A[K] | undefined }): Partial<A> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<A>

/** `base` with the fields the platform CR's `spec` sets explicitly. */
export const applyPlatformSpec = (base: LifecycleSettings, spec: unknown): LifecycleSettings => {
  const s = obj(spec)
  const ro = obj(s["remediationOrchestrator"])
  const t = obj(ro["timeouts"])
  const r = obj(ro["routing"])
  const a = obj(ro["asyncPropagation"])
  const threshold = Number(obj(s["aiAnalysis"])["confidenceThreshold"])
  const hasThreshold = typeof obj(s["aiAnalysis"])["confidenceThreshold"] === "string" && threshold >= 0 && threshold <= 1
  return {
    ...base,
    ...(hasThreshold ? { confidenceThreshold: threshold } : {}),
    ...(typeof ro["dryRun"] === "boolean" ? { dryRun: ro["dryRun"] } : {}),
    ...set({ retention: dur(obj(ro["retention"])["period"]), stabilizationWindow: dur(obj(ro["effectivenessAssessment"])["stabilizationWindow"]) }),
    timeouts: {
      ...base.timeouts,
      ...set({
        global: dur(t["global"]),
        processing: dur(t["processing"]),
        analyzing: dur(t["analyzing"]),
        executing: dur(t["executing"]),
        awaitingApproval: dur(t["awaitingApproval"]),
        verifying: dur(t["verifying"])
      })
    },
    asyncPropagation: {
      ...base.asyncPropagation,
      ...set({
        gitOpsSyncDelay: dur(a["gitOpsSyncDelay"]),
        operatorReconcileDelay: dur(a["operatorReconcileDelay"]),
        proactiveAlertDelay: dur(a["proactiveAlertDelay"])
      })
    },
    routing: {
      ...base.routing,
      ...set({
        consecutiveFailureThreshold: count(r["consecutiveFailureThreshold"]),
        consecutiveFailureCooldown: dur(r["consecutiveFailureCooldown"]),
        recentlyRemediatedCooldown: dur(r["recentlyRemediatedCooldown"]),
        exponentialBackoffBase: dur(r["exponentialBackoffBase"]),
        exponentialBackoffMax: dur(r["exponentialBackoffMax"]),
        ineffectiveChainThreshold: count(r["ineffectiveChainThreshold"]),
        ineffectiveTimeWindow: dur(r["ineffectiveTimeWindow"])
      })
    }
  }
}

export class PlatformSettings extends Effect.Service<PlatformSettings>()("@kubemend/operator/PlatformSettings", {
  effect: Effect.gen(function* () {
    const k8s = yield* K8s
    const base = yield* LifecycleConfig
    const cache = yield* Ref.make<{ readonly at: number; readonly settings: LifecycleSettings; readonly spec: unknown } | undefined>(undefined)
    const refresh = Duration.toMillis(base.platformRefresh)

    const read = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const cached = yield* Ref.get(cache)
      if (cached !== undefined && now - cached.at < refresh) return cached
      const listed = yield* Effect.either(k8s.listCr("kubemends"))
      const spec = listed._tag === "Right" ? listed.right.items[0]?.spec : cached?.spec
      const settings = listed._tag === "Right" ? applyPlatformSpec(base, spec) : cached?.settings ?? base
      if (listed._tag === "Left") yield* Effect.logWarning("platform CR unreadable; keeping the last known lifecycle settings", listed.left)
      const next = { at: now, settings, spec }
      yield* Ref.set(cache, next)
      return next
    })

    /** The settings in force now. */
    const current: Effect.Effect<LifecycleSettings> = Effect.map(read, (c) => c.settings)
    /** The platform CR's spec as last read (undefined without a CR), for other controllers' overrides. */
    const spec: Effect.Effect<unknown> = Effect.map(read, (c) => c.spec)

    return { current, spec } as const
  })
}) {}
