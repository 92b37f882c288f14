/**
 * Enrichment of a signal's target from the cluster, as the original's SignalProcessing does: the namespace's labels
 * and annotations, the workload's, its controller owner chain, and detected labels (GitOps-managed by Argo CD or
 * Flux, Helm-managed, scaled by an HPA, protected by a PDB). Each read that fails is recorded with its error type and
 * the context is marked `degradedMode` instead of failing the processing: classification and analysis go on with
 * what could be read.
 */
import type { TargetResource } from "@kubemend/core/domain/Meta"
import type { K8sService, KubeObject } from "@kubemend/core/K8s"
import { Effect } from "effect"

type Labels = Readonly<Record<string, string>>

export interface OwnerChainEntry {
  readonly kind: string
  readonly name: string
  readonly namespace?: string
  readonly api_version?: string
}

export interface KubernetesContext {
  readonly namespace?: { readonly name: string; readonly labels: Labels; readonly annotations: Labels }
  readonly workload?: { readonly kind: string; readonly name: string; readonly labels: Labels; readonly annotations: Labels }
  readonly ownerChain: ReadonlyArray<OwnerChainEntry>
  readonly degradedMode: boolean
}

export interface DetectedLabels {
  readonly gitOpsManaged: boolean
  readonly gitOpsTool?: "argocd" | "flux"
  readonly helmManaged: boolean
  readonly hpaEnabled: boolean
  readonly pdbProtected: boolean
  /** A StatefulSet is the target or in its owner chain. */
  readonly stateful: boolean
  /** Detections that could not be made (their reads failed); their booleans above are then false. */
  readonly failedDetections: ReadonlyArray<string>
}

export interface Enrichment {
  readonly kubernetesContext: KubernetesContext
  readonly detectedLabels: DetectedLabels
  /** `error_type` of each read that failed (the label of `signalprocessing_enrichment_errors_total`). */
  readonly errors: ReadonlyArray<string>
}

const maxOwnerDepth = 5

const labelsOf = (o: KubeObject | undefined): Labels => (o?.metadata.labels ?? {}) as Labels
const annotationsOf = (o: KubeObject | undefined): Labels => ((o?.metadata as { annotations?: Labels } | undefined)?.annotations ?? {})

const errorType = (e: { readonly _tag: string; readonly status?: number | undefined }) =>
  e._tag === "K8sNotFound" ? "target_not_found" : e._tag === "K8sUnavailable" ? (e.status === 403 ? "forbidden" : "api_unavailable") : "unknown_kind"

/** Argo CD's tracking label/annotation or Flux's kustomize/helm controller labels. */
const gitOpsTool = (labels: Labels, annotations: Labels): DetectedLabels["gitOpsTool"] => {
  if (labels["argocd.argoproj.io/instance"] !== undefined || annotations["argocd.argoproj.io/tracking-id"] !== undefined) return "argocd"
  if (Object.keys(labels).some((k) => k.startsWith("kustomize.toolkit.fluxcd.io/") || k.startsWith("helm.toolkit.fluxcd.io/"))) return "flux"
  return undefined
}

const helmManaged = (labels: Labels, annotations: Labels) =>
  labels["app.kubernetes.io/managed-by"] === "Helm" || labels["helm.sh/chart"] !== undefined || annotations["meta.helm.sh/release-name"] !== undefined

/** `selector` (matchLabels only; matchExpressions make it not match) is a subset of `labels`. */
const selects = (selector: unknown, labels: Labels) => {
  const s = selector as { matchLabels?: Labels; matchExpressions?: ReadonlyArray<unknown> } | undefined
  const match = Object.entries(s?.matchLabels ?? {})
  return match.length > 0 && (s?.matchExpressions ?? []).length === 0 && match.every(([k, v]) => labels[k] === v)
}

/**
 * `target` is the workload the signal resolved to; `pod`, when the alert named one, starts the owner chain below it
 * (a pod that is already gone is no error: the chain then starts at the workload).
 */
export const enrich = (k8s: K8sService, target: TargetResource, pod?: string) =>
  Effect.gen(function* () {
    const errors: Array<string> = []
    const read = <A>(effect: Effect.Effect<A, { readonly _tag: string; readonly status?: number | undefined }>) =>
      effect.pipe(
        Effect.map((a): A | undefined => a),
        Effect.catchAll((e) => Effect.sync(() => void errors.push(errorType(e))).pipe(Effect.as(undefined)))
      )
    const namespace = target.namespace
    const nsObject = namespace === undefined || namespace === ""
      ? undefined
      : yield* read(k8s.getResource({ kind: "Namespace", name: namespace, namespace: "" }))
    const workload = yield* read(k8s.getResource({
      kind: target.kind,
      name: target.name,
      namespace: namespace ?? "",
      ...(target.apiVersion === undefined || target.apiVersion === "" ? {} : { apiVersion: target.apiVersion })
    }))

    const podObject = pod === undefined || namespace === undefined || target.kind === "Pod"
      ? undefined
      : yield* Effect.orElseSucceed(k8s.getResource({ kind: "Pod", name: pod, namespace }), () => undefined)
    const ownerChain: Array<OwnerChainEntry> = []
    let current = podObject ?? workload
    for (let depth = 0; current !== undefined && depth < maxOwnerDepth; depth++) {
      const owner = (current.metadata.ownerReferences as ReadonlyArray<{ apiVersion?: string; kind?: string; name?: string; controller?: boolean }> | undefined)
        ?.find((r) => r.controller === true && r.kind !== undefined && r.name !== undefined)
      if (owner === undefined) break
      ownerChain.push({
        kind: owner.kind!,
        name: owner.name!,
        ...(namespace === undefined ? {} : { namespace }),
        ...(owner.apiVersion === undefined ? {} : { api_version: owner.apiVersion })
      })
      current = yield* read(
        k8s.getResource({
          kind: owner.kind!,
          name: owner.name!,
          namespace: namespace ?? "",
          ...(owner.apiVersion === undefined ? {} : { apiVersion: owner.apiVersion })
        })
      )
    }

    const podLabels = ((workload?.spec as { template?: { metadata?: { labels?: Labels } } } | undefined)?.template?.metadata?.labels) ?? labelsOf(workload)
    const inNamespace = (kind: string) =>
      namespace === undefined || workload === undefined
        ? Effect.succeed(undefined)
        : read(Effect.map(k8s.listResources({ kind, namespace }), (l) => l.items))
    const hpas = yield* inNamespace("HorizontalPodAutoscaler")
    const pdbs = yield* inNamespace("PodDisruptionBudget")
    const hpaEnabled = (hpas ?? []).some((h) => {
      const ref = (h.spec as { scaleTargetRef?: { kind?: string; name?: string } } | undefined)?.scaleTargetRef
      return ref?.kind === target.kind && ref.name === target.name
    })
    const pdbProtected = (pdbs ?? []).some((p) => selects((p.spec as { selector?: unknown } | undefined)?.selector, podLabels))

    const wl = labelsOf(workload)
    const wa = annotationsOf(workload)
    const tool = gitOpsTool(wl, wa) ?? gitOpsTool(labelsOf(nsObject), annotationsOf(nsObject))
    return {
      kubernetesContext: {
        ...(nsObject === undefined || namespace === undefined
          ? {}
          : { namespace: { name: namespace, labels: labelsOf(nsObject), annotations: annotationsOf(nsObject) } }),
        ...(workload === undefined ? {} : { workload: { kind: target.kind, name: target.name, labels: wl, annotations: wa } }),
        ownerChain,
        degradedMode: errors.length > 0
      },
      detectedLabels: {
        gitOpsManaged: tool !== undefined,
        ...(tool === undefined ? {} : { gitOpsTool: tool }),
        helmManaged: helmManaged(wl, wa),
        hpaEnabled,
        pdbProtected,
        stateful: target.kind === "StatefulSet" || ownerChain.some((o) => o.kind === "StatefulSet"),
        failedDetections: [...(hpas === undefined ? ["hpaEnabled"] : []), ...(pdbs === undefined ? ["pdbProtected"] : [])]
      },
      errors
    } satisfies Enrichment
  })
