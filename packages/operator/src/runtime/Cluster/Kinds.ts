/**
 * The kinds the operator reads and writes, with their plural and scope. A static table rather than discovery: the
 * set is fixed by what the reconciler renders, and a missing kind is a programming error, not a cluster state.
 */
import { CrVersion } from "@kubemend/core/domain/Meta"
import { PlatformKind, PlatformPlural } from "@kubemend/core/domain/Platform/index"
import { ActionTypeKind, ActionTypePlural, RemediationWorkflowKind, RemediationWorkflowPlural } from "@kubemend/core/domain/CatalogResources"

export interface KindInfo {
  readonly plural: string
  readonly namespaced: boolean
}

const builtins: Record<string, KindInfo> = {
  "v1/ServiceAccount": { plural: "serviceaccounts", namespaced: true },
  "v1/ConfigMap": { plural: "configmaps", namespaced: true },
  "v1/Secret": { plural: "secrets", namespaced: true },
  "v1/Service": { plural: "services", namespaced: true },
  "v1/Event": { plural: "events", namespaced: true },
  "v1/Endpoints": { plural: "endpoints", namespaced: true },
  "v1/Pod": { plural: "pods", namespaced: true },
  "v1/Namespace": { plural: "namespaces", namespaced: false },
  "apps/v1/Deployment": { plural: "deployments", namespaced: true },
  "batch/v1/Job": { plural: "jobs", namespaced: true },
  "networking.k8s.io/v1/NetworkPolicy": { plural: "networkpolicies", namespaced: true },
  "policy/v1/PodDisruptionBudget": { plural: "poddisruptionbudgets", namespaced: true },
  "autoscaling/v2/HorizontalPodAutoscaler": { plural: "horizontalpodautoscalers", namespaced: true },
  "rbac.authorization.k8s.io/v1/ClusterRole": { plural: "clusterroles", namespaced: false },
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": { plural: "clusterrolebindings", namespaced: false },
  "rbac.authorization.k8s.io/v1/Role": { plural: "roles", namespaced: true },
  "rbac.authorization.k8s.io/v1/RoleBinding": { plural: "rolebindings", namespaced: true },
  "apiextensions.k8s.io/v1/CustomResourceDefinition": { plural: "customresourcedefinitions", namespaced: false },
  "tekton.dev/v1/PipelineRun": { plural: "pipelineruns", namespaced: true },
  "cert-manager.io/v1/Issuer": { plural: "issuers", namespaced: true },
  "cert-manager.io/v1/Certificate": { plural: "certificates", namespaced: true }
}

/** The catalog resources in the platform's group (the catalog controller's). */
const catalogKinds: Record<string, KindInfo> = {
  [RemediationWorkflowKind]: { plural: RemediationWorkflowPlural, namespaced: true },
  [ActionTypeKind]: { plural: ActionTypePlural, namespaced: true }
}

export const kindInfo = (apiGroup: string, apiVersion: string, kind: string): KindInfo => {
  if (apiVersion === `${apiGroup}/${CrVersion}` && kind === PlatformKind) return { plural: PlatformPlural, namespaced: true }
  const catalog = apiVersion === `${apiGroup}/${CrVersion}` ? catalogKinds[kind] : undefined
  if (catalog !== undefined) return catalog
  const info = builtins[`${apiVersion}/${kind}`]
  if (info === undefined) throw new Error(`operator: no plural known for ${apiVersion} ${kind}`)
  return info
}

/** `/api/v1/...` or `/apis/<group>/<version>/...`, with the namespace segment for namespaced kinds. */
export const collectionPath = (apiGroup: string, apiVersion: string, kind: string, namespace?: string): string => {
  const info = kindInfo(apiGroup, apiVersion, kind)
  const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`
  return info.namespaced && namespace !== undefined
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${info.plural}`
    : `${base}/${info.plural}`
}

export const objectPath = (apiGroup: string, apiVersion: string, kind: string, name: string, namespace?: string): string => {
  const info = kindInfo(apiGroup, apiVersion, kind)
  if (info.namespaced && namespace === undefined) throw new Error(`operator: ${kind} ${name} needs a namespace`)
  return `${collectionPath(apiGroup, apiVersion, kind, info.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`
}
