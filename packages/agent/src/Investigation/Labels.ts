/**
 * Cluster characteristics of the remediation target, detected after the root-cause analysis (`detected_labels`):
 * gitOpsManaged, helmManaged, stateful, hpaEnabled, pdbProtected, networkIsolated, serviceMesh. A detection whose
 * lookup failed is named in `failedDetections` rather than guessed.
 */
import { Effect } from "effect"
import type { K8sService, KubeObject } from "@kubemend/core/K8s"
import { type LabelSelector, matchLabels, selectorRequirements } from "@kubemend/core/K8s/LabelSelector"
import type { TargetRef } from "./Run.ts"

const rec = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {})
const strings = (v: unknown): Record<string, string> => rec(v) as Record<string, string>

const hasKey = (m: Record<string, string>, test: (k: string) => boolean) => Object.keys(m).some(test)

/** A PodDisruptionBudget's `selector` (policy/v1: empty selects every pod, absent selects none) finds `labels`. */
const selects = (selector: unknown, labels: Record<string, string>) =>
  typeof selector === "object" && selector !== null && matchLabels(selectorRequirements(selector as LabelSelector), labels)

export const detect = (k8s: K8sService, target: TargetRef, chain: ReadonlyArray<TargetRef>) =>
  Effect.gen(function* () {
    const namespace = target.namespace ?? "default"
    const failed: Array<string> = []
    const labels: Record<string, unknown> = {}

    const object = yield* Effect.option(k8s.getResource({
      kind: target.kind,
      name: target.name,
      namespace,
      ...(target.apiVersion === undefined || target.apiVersion === "" ? {} : { apiVersion: target.apiVersion })
    }))
    const meta = object._tag === "Some" ? object.value.metadata : undefined
    const objLabels = strings(meta?.labels)
    const annotations = strings(meta?.annotations)
    const template = rec(rec(rec(object._tag === "Some" ? object.value.spec : undefined)["template"])["metadata"])
    const podLabels = strings(template["labels"])
    const podAnnotations = strings(template["annotations"])

    if (object._tag === "None") failed.push("gitOpsManaged", "helmManaged", "serviceMesh")
    else {
      labels["gitOpsManaged"] = hasKey({ ...objLabels, ...annotations }, (k) =>
        k.startsWith("argocd.argoproj.io/") || k.startsWith("kustomize.toolkit.fluxcd.io/") || k.startsWith("helm.toolkit.fluxcd.io/"))
      labels["helmManaged"] = objLabels["app.kubernetes.io/managed-by"]?.toLowerCase() === "helm" || "helm.sh/chart" in objLabels ||
        "meta.helm.sh/release-name" in annotations
      labels["serviceMesh"] = hasKey(podAnnotations, (k) =>
        k.startsWith("sidecar.istio.io/") || k.startsWith("linkerd.io/")) ||
        podLabels["sidecar.istio.io/inject"] === "true"
    }
    labels["stateful"] = [target, ...chain].some((t) => t.kind === "StatefulSet")

    const list = (kind: string, detection: string, found: (items: ReadonlyArray<KubeObject>) => boolean) =>
      k8s.listResources({ kind, namespace }).pipe(
        Effect.map((l) => {
          labels[detection] = found(l.items)
        }),
        Effect.catchAll(() => Effect.sync(() => failed.push(detection)))
      )

    yield* Effect.all([
      list("HorizontalPodAutoscaler", "hpaEnabled", (items) =>
        items.some((h) => {
          const ref = rec(rec(h.spec)["scaleTargetRef"])
          return ref["kind"] === target.kind && ref["name"] === target.name
        })),
      list(
        "PodDisruptionBudget",
        "pdbProtected",
        (items) => Object.keys(podLabels).length > 0 && items.some((p) => selects(rec(p.spec)["selector"], podLabels))
      ),
      list("NetworkPolicy", "networkIsolated", (items) => items.length > 0)
    ], { concurrency: 3, discard: true })

    return { ...labels, failedDetections: failed }
  })
