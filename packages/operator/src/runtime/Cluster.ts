/**
 * The operator's view of the cluster: server-side apply of any object with our field manager, reads, label-selected
 * lists (any namespace or all), deletes, merge patches of objects and their status, and raw watch streams. The core
 * K8s service is bound to one namespace and the platform's own CRs; the operator writes Deployments, ClusterRoles
 * and everything else, across namespaces.
 *
 *   Cluster.layer({ kubeconfig: kube.kubeConfig() })   // in-process against any kubeconfig
 */
import type { K8sSettingsInput } from "@kubemend/core/K8s/Config"
import type { K8sConflict, K8sNotFound, K8sUnavailable, KubeList, KubeObject } from "@kubemend/core/K8s"
import type { KubeconfigSource } from "@kubemend/core/K8s/Client"
import type { HttpFailure } from "@kubemend/core/K8s/Retry"
import type { RawWatchEvent, WatchSource } from "@kubemend/core/K8s/Watch"
import { Context, Duration, type Effect, type Option, type Stream } from "effect"

/** One object, by apiVersion + kind (the plural comes from the operator's kind table). */
export interface ObjectRef {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  /** Absent for cluster-scoped kinds. */
  readonly namespace?: string
}

/** A collection: one namespace, or every namespace when `namespace` is absent. */
export interface CollectionRef {
  readonly apiVersion: string
  readonly kind: string
  readonly namespace?: string
  readonly labelSelector?: string
}

export interface WatchQuery {
  readonly resourceVersion: string
  /** Server-side timeout of this watch request. */
  readonly timeoutSeconds: number
}

export interface ClusterService {
  /** Server-side apply (`application/apply-patch+yaml`, our field manager, `force`): creates or updates. */
  readonly apply: (object: KubeObject) => Effect.Effect<KubeObject, K8sUnavailable>
  /** None when the object does not exist. */
  readonly get: (ref: ObjectRef) => Effect.Effect<Option.Option<KubeObject>, K8sUnavailable>
  readonly list: (ref: CollectionRef) => Effect.Effect<KubeList, K8sUnavailable>
  /** True when something was deleted (or marked for deletion), false when it was already gone. */
  readonly remove: (ref: ObjectRef) => Effect.Effect<boolean, K8sUnavailable>
  /** JSON merge patch of the object (conflicts retried). */
  readonly patch: (
    ref: ObjectRef,
    patch: Record<string, unknown>
  ) => Effect.Effect<KubeObject, K8sNotFound | K8sConflict | K8sUnavailable>
  /** JSON merge patch of the status subresource: `{ status }` is sent. */
  readonly patchStatus: (
    ref: ObjectRef,
    status: Record<string, unknown>
  ) => Effect.Effect<KubeObject, K8sNotFound | K8sConflict | K8sUnavailable>
  /** The list that starts an informer; failures keep their HTTP status (the informer needs to see 410). */
  readonly listRaw: (ref: CollectionRef) => Effect.Effect<KubeList, HttpFailure>
  /** One watch request; the stream ends when the server closes it. */
  readonly watch: (ref: CollectionRef, query: WatchQuery) => Stream.Stream<RawWatchEvent, HttpFailure>
}

export class Cluster extends Context.Tag("@kubemend/operator/Cluster")<Cluster, ClusterService>() {}

/** A collection as core's informer reads it: its list, and watches that the server closes after `watchTimeout`. */
export const collectionSource = (
  cluster: ClusterService,
  collection: CollectionRef,
  watchTimeout: Duration.Duration
): WatchSource => ({
  list: cluster.listRaw(collection),
  watch: (resourceVersion) => cluster.watch(collection, { resourceVersion, timeoutSeconds: Math.max(1, Math.round(Duration.toSeconds(watchTimeout))) })
})

export interface ClusterOptions extends K8sSettingsInput {
  /** Kubeconfig YAML text, `"in-cluster"`, or absent for `KUBECONFIG` / `~/.kube/config`. */
  readonly kubeconfig?: KubeconfigSource
  /** The platform's API group, so the platform CR kind resolves to its plural. Default `kubemend.io`. */
  readonly apiGroup?: string
  /** Field manager of server-side apply. Default `kubemend-operator`. */
  readonly fieldManager?: string
}
