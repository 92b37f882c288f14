/** What the catalog controllers share: their settings, finalizer and the `Registered` condition. */
import { K8s, type KubeObject } from "@kubemend/core/K8s"
import { Context, Duration, Effect, Layer } from "effect"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { mergeConditions } from "../runtime/Conditions.ts"

export interface CatalogSettingsShape {
  /** The platform's API group the resources are served in. */
  readonly apiGroup: string
  /** The namespace whose RemediationWorkflows and ActionTypes are registered (the controller namespace). */
  readonly namespace: string
  /** `registeredBy` / `disabledBy` in the catalog. */
  readonly actor: string
  /** A registered resource's catalog entry is read back this often. */
  readonly resyncPeriod: Duration.Duration
  /** A resource the catalog refused is tried again after this long. */
  readonly retryInvalid: Duration.Duration
}

export class CatalogSettings extends Context.Tag("@kubemend/operator/CatalogSettings")<CatalogSettings, CatalogSettingsShape>() {
  static readonly defaults = { actor: "kubemend-operator", resyncPeriod: Duration.minutes(5), retryInvalid: Duration.seconds(30) }

  static readonly layer = (options: Pick<CatalogSettingsShape, "apiGroup" | "namespace"> & Partial<CatalogSettingsShape>) =>
    Layer.succeed(CatalogSettings, { ...CatalogSettings.defaults, ...options })

  /** From the lifecycle controllers' namespace, group and resync period. */
  static readonly fromLifecycle = Layer.effect(
    CatalogSettings,
    Effect.gen(function* () {
      const k8s = yield* K8s
      const config = yield* LifecycleConfig
      return { ...CatalogSettings.defaults, apiGroup: k8s.apiGroup, namespace: k8s.namespace, resyncPeriod: config.resyncPeriod }
    })
  )
}

/** Holds a resource until its catalog entry is disabled. */
export const catalogFinalizer = (apiGroup: string) => `${apiGroup}/catalog`

export interface Registration {
  readonly type: "Registered"
  readonly status: "True" | "False"
  readonly reason: string
  readonly message: string
}

export interface StatusBody {
  readonly fields: Record<string, unknown>
  readonly condition: Registration
}

type Conditions = Parameters<typeof mergeConditions>[0]

export const conditionsWith = (o: KubeObject, condition: Registration, now: number) =>
  mergeConditions((o.status as { conditions?: Conditions } | undefined)?.conditions, [condition], new Date(now).toISOString(), o.metadata.generation)

/** `Registered=True` in the status. */
export const registered = (o: KubeObject): boolean =>
  ((o.status as { conditions?: Conditions } | undefined)?.conditions ?? []).some((c) => c.type === "Registered" && c.status === "True")
