/**
 * The pieces of the live layer that touch client-node directly: loading the kubeconfig, per-call options (abort
 * signal, merge-patch content type) and running one call under the request policy.
 */
import { KubeConfig, Observable, type ObservableMiddleware, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { Effect } from "effect"
import { K8sUnavailable } from "../K8s.ts"
import { pooled } from "./Agents.ts"
import type { K8sSettings } from "./Config.ts"
import { type HttpFailure, requestWithin, withRetries } from "./Retry.ts"

/** Kubeconfig YAML text, `"in-cluster"` (the pod's service account), or absent: `KUBECONFIG` / `~/.kube/config`. */
export type KubeconfigSource = string | "in-cluster" | undefined

export const loadKubeConfig = (source: KubeconfigSource): Effect.Effect<KubeConfig, K8sUnavailable> =>
  Effect.try({
    try: () => {
      const kc = new KubeConfig()
      if (source === "in-cluster") kc.loadFromCluster()
      else if (source === undefined) kc.loadFromDefault()
      else kc.loadFromString(source)
      const cluster = kc.getCurrentCluster()
      if (cluster === null) throw new Error("no current cluster in the kubeconfig")
      // Outside a pod, in-cluster config yields `https://undefined:undefined`; refuse it here, not on the first call.
      new URL(cluster.server)
      return pooled(kc)
    },
    catch: (cause) => new K8sUnavailable({ message: `cannot load the kubeconfig: ${String(cause)}`, cause })
  })

/** client-node's fetch takes the signal from the request context; a middleware is the only per-call way to set it. */
const abortWith = (signal: AbortSignal): ObservableMiddleware => ({
  pre: (context) => {
    context.setSignal(signal)
    return new Observable(Promise.resolve(context))
  },
  post: (response) => new Observable(Promise.resolve(response))
})

/** Options for one typed call: aborts with the signal; `mergePatch` sends `application/merge-patch+json`. */
export const callOptions = (signal: AbortSignal, mergePatch = false) => {
  const base = { middleware: [abortWith(signal)], middlewareMergeStrategy: "append" as const }
  return mergePatch ? setHeaderOptions("Content-Type", PatchStrategy.MergePatch, base) : base
}

export type Call = <A>(
  attempt: (signal: AbortSignal) => Promise<A>,
  options?: { readonly retryConflicts?: boolean }
) => Effect.Effect<A, HttpFailure>

/** One API request under the shared deadline + retry policy (the deadline on a timer: `requestWithin`). */
export const makeCall = (settings: K8sSettings): Call => (attempt, options) =>
  withRetries(settings, { retryConflicts: options?.retryConflicts ?? false })(requestWithin(settings.requestTimeout, attempt))
