/**
 * Whether a remediation target is managed: its namespace or the resource itself carries `{api_group}/managed=true`
 * (`UnmanagedResource` otherwise). Namespaces are cluster-scoped, which the core K8s service does not read, so the
 * namespace lookup is a parameter: the operator's Cluster service in a cluster, the in-memory store or the dev API
 * server in tests. The resource is read through the K8s service's REST mapper (any namespaced kind).
 */
import type { TargetResource } from "@kubemend/core/domain/Meta"
import { managedLabel } from "@kubemend/core/domain/Meta"
import { K8s, type K8sUnavailable } from "@kubemend/core/K8s"
import { Context, Effect, Layer, Option } from "effect"
import { Cluster } from "../runtime/Cluster.ts"

export type NamespaceLabels = (name: string) => Effect.Effect<Option.Option<Readonly<Record<string, string>>>, K8sUnavailable>

export interface ManagedTargetsShape {
  readonly isManaged: (target: TargetResource) => Effect.Effect<boolean, K8sUnavailable>
}

export class ManagedTargets extends Context.Tag("@kubemend/operator/ManagedTargets")<ManagedTargets, ManagedTargetsShape>() {
  /** Managed when the namespace (via `namespaceLabels`) or the resource has the label. */
  static readonly make = (namespaceLabels: NamespaceLabels) =>
    Effect.map(K8s, (k8s): ManagedTargetsShape => {
      const label = managedLabel(k8s.apiGroup)
      const marked = (labels: Option.Option<Readonly<Record<string, string>>>) => Option.exists(labels, (l) => l[label] === "true")
      const resourceLabels = (t: TargetResource & { readonly namespace: string }) =>
        k8s.getResource({
          kind: t.kind,
          name: t.name,
          namespace: t.namespace,
          ...(t.apiVersion === undefined || t.apiVersion === "" ? {} : { apiVersion: t.apiVersion })
        }).pipe(
          Effect.map((o) => Option.fromNullable(o.metadata.labels)),
          // A missing resource or a kind the cluster does not serve has no label to offer.
          Effect.catchTags({
            K8sNotFound: () => Effect.succeed(Option.none()),
            K8sAmbiguousKind: () => Effect.succeed(Option.none()),
            K8sUnknownKind: () => Effect.succeed(Option.none()),
            // The operator may read only the kinds its ClusterRole names (`Rbac.ts`); a target it may not read shows
            // no label, so it blocks as UnmanagedResource (until its namespace is labeled) instead of retrying forever.
            K8sUnavailable: (e) => e.status === 403 ? Effect.succeed(Option.none()) : Effect.fail(e)
          })
        )
      return {
        isManaged: (t) =>
          Effect.gen(function* () {
            const namespace = t.namespace
            if (namespace === undefined || namespace === "") return false
            if (marked(yield* namespaceLabels(namespace))) return true
            return marked(yield* resourceLabels({ ...t, namespace }))
          })
      }
    })

  static readonly layerWith = (namespaceLabels: NamespaceLabels) => Layer.effect(ManagedTargets, ManagedTargets.make(namespaceLabels))

  /** Namespaces read through the operator's Cluster service. */
  static readonly layerCluster = Layer.effect(
    ManagedTargets,
    Effect.flatMap(Cluster, (cluster) =>
      ManagedTargets.make((name) =>
        cluster.get({ apiVersion: "v1", kind: "Namespace", name }).pipe(
          Effect.map(Option.flatMap((o) => Option.fromNullable(o.metadata.labels)))
        )
      ))
  )
}
