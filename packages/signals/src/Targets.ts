/**
 * Target resolution: the object a signal names, walked up its controller owner chain (Pod -> ReplicaSet ->
 * Deployment, Pod -> Job -> CronJob) to the workload a workflow acts on. A target that does not exist or whose kind
 * the cluster does not serve is rejected with its reason; an API outage fails as `K8sUnavailable` (the caller
 * answers 503 so the sender retries).
 */
import { K8s, type K8sUnavailable, type KubeObject } from "@kubemend/core/K8s"
import { Effect } from "effect"
import type { RawTarget, Target } from "./Signal.ts"

/** Why a signal has no target; the `reason` label of `gateway_signals_rejected_total`. */
export class Unresolvable {
  readonly _tag = "Unresolvable"
  constructor(readonly reason: string, readonly detail: string) {}
}

const maxDepth = 5

interface OwnerRef {
  readonly apiVersion?: string
  readonly kind?: string
  readonly name?: string
  readonly controller?: boolean
}

const controllerOf = (o: KubeObject): OwnerRef | undefined =>
  (o.metadata.ownerReferences as ReadonlyArray<OwnerRef> | undefined)?.find((r) => r.controller === true && r.kind && r.name)

const asTarget = (o: KubeObject, fallback: RawTarget): Target => ({
  apiVersion: o.apiVersion ?? fallback.apiVersion ?? "v1",
  kind: o.kind ?? fallback.kind,
  name: o.metadata.name,
  ...(fallback.namespace === undefined ? {} : { namespace: fallback.namespace })
})

export const resolveTarget = Effect.fn("Targets.resolve")(function* (raw: RawTarget) {
  const k8s = yield* K8s
  // Nodes are cluster-scoped and own nothing a workflow would act on instead.
  if (raw.kind === "Node" || raw.namespace === undefined) {
    return { apiVersion: raw.apiVersion ?? "v1", kind: raw.kind, name: raw.name } satisfies Target as Target
  }
  const namespace = raw.namespace
  const fetch = (kind: string, name: string, apiVersion?: string) =>
    k8s.getResource({ kind, name, namespace, ...(apiVersion === undefined ? {} : { apiVersion }) }).pipe(
      Effect.map((o): KubeObject | undefined => o),
      Effect.catchTags({
        K8sNotFound: () => Effect.succeed(undefined),
        K8sUnknownKind: () => Effect.fail(new Unresolvable("unknown_kind", `the cluster serves no kind ${kind}`)),
        K8sAmbiguousKind: () => Effect.fail(new Unresolvable("ambiguous_kind", `kind ${kind} is served by several API groups`))
      })
    )
  const first = yield* fetch(raw.kind, raw.name, raw.apiVersion)
  if (first === undefined) {
    return yield* Effect.fail(new Unresolvable("target_not_found", `${raw.kind} ${namespace}/${raw.name} does not exist`))
  }
  let current = first
  for (let depth = 0; depth < maxDepth; depth++) {
    const owner = controllerOf(current)
    if (owner === undefined) break
    const next = yield* fetch(owner.kind!, owner.name!, owner.apiVersion).pipe(
      // An owner of a kind we cannot read ends the walk where we are, rather than losing the signal.
      Effect.catchIf((e): e is Unresolvable => e instanceof Unresolvable, () => Effect.succeed(undefined))
    )
    if (next === undefined) break
    current = next
  }
  return asTarget(current, raw)
}) as (raw: RawTarget) => Effect.Effect<Target, Unresolvable | K8sUnavailable, K8s>
