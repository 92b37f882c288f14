/**
 * What the K8s contract suite needs from the "server" behind a layer: seeding, fault injection, watch control, RBAC
 * and tokens, and a request count. One implementation drives the in-memory layer's control handle, the other the dev
 * Kubernetes API server.
 */
import { Context, Duration, Effect, Layer } from "effect"
import type { K8s, KubeObject, ReviewedUser } from "../../src/K8s.ts"
import type { K8sSettingsInput } from "../../src/K8s/Config.ts"
import { K8sMemory, type SarRule } from "../../src/K8s/Memory.ts"

interface Fault {
  readonly status: number
  /** Kubernetes verb: get, list, watch, create, update, patch, delete. */
  readonly verb?: string
  /** `remediationrequests`, or `remediationrequests/status` for the subresource. */
  readonly plural?: string
  readonly retryAfterSeconds?: number
}

interface Grant {
  readonly group: string
  readonly verb: string
  readonly apiGroup: string
  readonly resource: string
  readonly names: ReadonlyArray<string>
}

export interface K8sHarnessService {
  readonly seed: (objects: ReadonlyArray<KubeObject>) => Effect.Effect<void>
  readonly failNext: (count: number, fault: Fault) => Effect.Effect<void>
  readonly delayNext: (count: number, delay: Duration.DurationInput, match: { verb: string; plural: string }) => Effect.Effect<void>
  readonly closeWatches: Effect.Effect<void>
  readonly openWatches: Effect.Effect<number>
  readonly grant: (grant: Grant) => Effect.Effect<void>
  readonly registerToken: (token: string, user: ReviewedUser) => Effect.Effect<void>
  /** Requests received so far with this verb on this plural (`plural/status` for the subresource). */
  readonly count: (verb: string, plural: string) => Effect.Effect<number>
  readonly setPodLog: (namespace: string, pod: string, container: string, text: string, previous?: boolean) => Effect.Effect<void>
}

export class K8sHarness extends Context.Tag("test/K8sHarness")<K8sHarness, K8sHarnessService>() {}

export interface HarnessOptions extends K8sSettingsInput {
  /** Changes a watch can replay before 410. */
  readonly watchHistory?: number
}

export type MakeLayer = (options: HarnessOptions) => Layer.Layer<K8s | K8sHarness, unknown>

export const namespace = "kubemend-system"
export const apiGroup = "kubemend.io"

export const memoryLayer: MakeLayer = (options) => {
  const memory = K8sMemory.layer({ namespace, apiGroup, ...options })
  const harness = Layer.effect(
    K8sHarness,
    Effect.gen(function* () {
      const control = yield* K8sMemory
      const rules: Array<SarRule> = []
      return {
        seed: (objects) => Effect.asVoid(control.seed(objects)),
        failNext: (count, f) =>
          control.failNext(count, {
            status: f.status,
            ...(f.verb === undefined ? {} : { verb: f.verb }),
            ...(f.plural === undefined ? {} : { plural: f.plural }),
            ...(f.retryAfterSeconds === undefined ? {} : { retryAfter: Duration.seconds(f.retryAfterSeconds) })
          }),
        delayNext: (count, delay, match) => control.delayNext(count, delay, match),
        closeWatches: control.closeWatches,
        openWatches: control.openWatches,
        grant: (g) =>
          Effect.suspend(() => {
            for (const name of g.names) {
              rules.push({ group: g.group, verb: g.verb, apiGroup: g.apiGroup, resource: g.resource, name })
            }
            return control.setAllowed([...rules])
          }),
        registerToken: control.registerToken,
        setPodLog: control.setPodLog,
        count: (verb, plural) => Effect.map(control.actions.get, (all) => all.filter((a) => a.verb === verb && a.plural === plural).length)
      }
    })
  )
  return Layer.provideMerge(harness, memory)
}
