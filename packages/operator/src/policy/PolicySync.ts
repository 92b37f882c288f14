/**
 * Keeps the policy engine loaded with the platform's policies: every `policy.syncInterval` it reads the ConfigMaps
 * the platform CR names (`spec.signalProcessing.policy.configMapName`, key `policy.rego`;
 * `spec.aiAnalysis.policy.configMapName`, key `approval.rego`) and pushes a module whose text changed since its last
 * accepted push; every module is pushed again each `repushEvery` passes anyway, so an engine that restarted empty
 * is refilled. A module the engine rejects is logged (once per text) and the engine keeps the previous one.
 */
import { K8s } from "@kubemend/core/K8s"
import { Effect, Option, Ref, Schedule } from "effect"
import { createHash } from "node:crypto"
import { Cluster } from "../runtime/Cluster.ts"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import * as Manager from "../runtime/Manager.ts"
import { OpaClient } from "../clients/OpaClient.ts"

/** Module ids in the engine; each file declares its own package (`signalprocessing`, `approval`). */
export const policyModules = [
  { id: "kubemend/policy.rego", block: "signalProcessing", key: "policy.rego" },
  { id: "kubemend/approval.rego", block: "aiAnalysis", key: "approval.rego" }
] as const

const repushEvery = 6

const obj = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {})

interface SyncState {
  readonly pushed: ReadonlyMap<string, string>
  readonly rejected: ReadonlyMap<string, string>
  readonly passes: number
}

export const makePolicySync = Effect.gen(function* () {
  const k8s = yield* K8s
  const cluster = yield* Cluster
  const opa = yield* OpaClient
  const state = yield* Ref.make<SyncState>({ pushed: new Map(), rejected: new Map(), passes: 0 })

  const moduleText = (configMapName: string, key: string) =>
    cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: configMapName, namespace: k8s.namespace }).pipe(
      Effect.map(Option.flatMap((cm) => Option.fromNullable(obj((cm as { data?: unknown }).data)[key]))),
      Effect.map(Option.filter((text): text is string => typeof text === "string"))
    )

  /** One pass; the number of modules pushed. */
  const syncOnce = Effect.gen(function* () {
    const platform = (yield* k8s.listCr("kubemends")).items[0]
    if (platform === undefined) return 0
    const s = yield* Ref.get(state)
    const full = s.passes % repushEvery === 0
    const pushed = new Map(s.pushed)
    const rejected = new Map(s.rejected)
    let count = 0
    for (const m of policyModules) {
      const name = obj(obj(obj(platform.spec)[m.block])["policy"])["configMapName"]
      if (typeof name !== "string" || name === "") continue
      const text = yield* moduleText(name, m.key)
      if (Option.isNone(text)) {
        yield* Effect.logWarning(`policy: ConfigMap ${k8s.namespace}/${name} has no key ${m.key}; the engine keeps what it has`)
        continue
      }
      const hash = createHash("sha256").update(text.value).digest("hex")
      if (!full && pushed.get(m.id) === hash) continue
      if (rejected.get(m.id) === hash) continue
      const result = yield* Effect.either(opa.putPolicy(m.id, text.value))
      if (result._tag === "Right") {
        pushed.set(m.id, hash)
        rejected.delete(m.id)
        count++
        if (s.pushed.get(m.id) !== hash) yield* Effect.logInfo(`policy: loaded ${m.key} from ConfigMap ${name}`)
      } else if (result.left._tag === "PolicyRejected") {
        rejected.set(m.id, hash)
        yield* Effect.logWarning(`policy: ${m.key} from ConfigMap ${name} was rejected; the engine keeps the previous one: ${result.left.detail}`)
      } else {
        yield* Effect.logWarning(`policy: engine unreachable, ${m.key} not loaded yet: ${result.left.detail}`)
      }
    }
    yield* Ref.set(state, { pushed, rejected, passes: s.passes + 1 })
    return count
  })

  return { syncOnce } as const
})

/** The sync loop, on every replica (each one's engine needs the policies); the first pass at once. */
export const policySync = Effect.gen(function* () {
  const config = yield* LifecycleConfig
  const sync = yield* makePolicySync
  return Manager.loop(
    "policy-sync",
    sync.syncOnce.pipe(
      Effect.catchAll((e) => Effect.logWarning("policy: sync pass failed", e)),
      Effect.repeat(Schedule.spaced(config.policy.syncInterval)),
      Effect.asVoid
    )
  )
})
