/**
 * The resource types the dev API server serves: a static table of the built-in kinds the platform touches, the
 * platform's CRs in the configured group, and kinds added at run time from stored CustomResourceDefinitions.
 */

export interface ResourceType {
  /** "" for the core group. */
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly singular: string
  readonly kind: string
  readonly namespaced: boolean
  readonly shortNames: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  /** Writes to the object ignore `.status`; writes to `/status` change only `.status`. */
  readonly statusSubresource: boolean
  /** Field selector keys beyond metadata.name / metadata.namespace. */
  readonly selectableFields: ReadonlyArray<string>
  /** A custom resource: list items keep apiVersion/kind (built-in lists drop them, as real servers do). */
  readonly custom: boolean
  /** Set for kinds registered from a CRD at run time (removed again when the CRD goes). */
  readonly fromCrd?: string
}

export const crudVerbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"] as const

export const groupVersion = (rt: Pick<ResourceType, "group" | "version">): string => rt.group === "" ? rt.version : `${rt.group}/${rt.version}`

/** `plural.group` as Kubernetes writes it in messages (`pods`, `deployments.apps`). */
export const groupResource = (rt: Pick<ResourceType, "group" | "plural">): string => rt.group === "" ? rt.plural : `${rt.plural}.${rt.group}`

/** Objects of one kind share storage across the versions of their group. */
export const storageKey = (rt: Pick<ResourceType, "group" | "plural">): string => `${rt.group}/${rt.plural}`

interface Entry {
  readonly plural: string
  readonly kind: string
  readonly namespaced?: boolean
  readonly shortNames?: ReadonlyArray<string>
  readonly status?: boolean
  readonly fields?: ReadonlyArray<string>
  readonly verbs?: ReadonlyArray<string>
  readonly custom?: boolean
}

const make = (group: string, version: string, e: Entry): ResourceType => ({
  group,
  version,
  plural: e.plural,
  singular: e.kind.toLowerCase(),
  kind: e.kind,
  namespaced: e.namespaced ?? true,
  shortNames: e.shortNames ?? [],
  verbs: e.verbs ?? crudVerbs,
  statusSubresource: e.status ?? false,
  selectableFields: e.fields ?? [],
  custom: e.custom ?? false
})

const eventFields = [
  "involvedObject.kind",
  "involvedObject.name",
  "involvedObject.namespace",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.fieldPath",
  "involvedObject.resourceVersion",
  "reason",
  "reportingComponent",
  "source",
  "type"
]
const eventsV1Fields = ["regarding.kind", "regarding.name", "regarding.namespace", "regarding.uid", "reason", "type"]

const builtins: ReadonlyArray<ResourceType> = [
  make("", "v1", { plural: "pods", kind: "Pod", shortNames: ["po"], status: true, fields: ["spec.nodeName", "status.phase"] }),
  make("", "v1", { plural: "services", kind: "Service", shortNames: ["svc"], status: true }),
  make("", "v1", { plural: "configmaps", kind: "ConfigMap", shortNames: ["cm"] }),
  make("", "v1", { plural: "secrets", kind: "Secret", fields: ["type"] }),
  make("", "v1", { plural: "events", kind: "Event", shortNames: ["ev"], fields: eventFields }),
  make("", "v1", { plural: "serviceaccounts", kind: "ServiceAccount", shortNames: ["sa"] }),
  make("", "v1", { plural: "namespaces", kind: "Namespace", namespaced: false, shortNames: ["ns"], status: true, fields: ["status.phase"] }),
  make("apps", "v1", { plural: "deployments", kind: "Deployment", shortNames: ["deploy"], status: true }),
  make("coordination.k8s.io", "v1", { plural: "leases", kind: "Lease" }),
  make("rbac.authorization.k8s.io", "v1", { plural: "clusterroles", kind: "ClusterRole", namespaced: false }),
  make("rbac.authorization.k8s.io", "v1", { plural: "clusterrolebindings", kind: "ClusterRoleBinding", namespaced: false }),
  make("rbac.authorization.k8s.io", "v1", { plural: "roles", kind: "Role" }),
  make("rbac.authorization.k8s.io", "v1", { plural: "rolebindings", kind: "RoleBinding" }),
  make("networking.k8s.io", "v1", { plural: "networkpolicies", kind: "NetworkPolicy", shortNames: ["netpol"] }),
  make("batch", "v1", { plural: "jobs", kind: "Job", status: true }),
  // Kinds a signal's target is resolved through (owner chains) and that enrichment reads (HPA, PDB).
  make("apps", "v1", { plural: "replicasets", kind: "ReplicaSet", shortNames: ["rs"], status: true }),
  make("apps", "v1", { plural: "statefulsets", kind: "StatefulSet", shortNames: ["sts"], status: true }),
  make("apps", "v1", { plural: "daemonsets", kind: "DaemonSet", shortNames: ["ds"], status: true }),
  make("batch", "v1", { plural: "cronjobs", kind: "CronJob", shortNames: ["cj"], status: true }),
  make("", "v1", { plural: "persistentvolumeclaims", kind: "PersistentVolumeClaim", shortNames: ["pvc"], status: true }),
  make("", "v1", { plural: "nodes", kind: "Node", namespaced: false, shortNames: ["no"], status: true }),
  make("autoscaling", "v2", { plural: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler", shortNames: ["hpa"], status: true }),
  make("policy", "v1", { plural: "poddisruptionbudgets", kind: "PodDisruptionBudget", shortNames: ["pdb"], status: true }),
  make("apiextensions.k8s.io", "v1", {
    plural: "customresourcedefinitions",
    kind: "CustomResourceDefinition",
    namespaced: false,
    shortNames: ["crd", "crds"],
    status: true
  }),
  // Real clusters serve Event in two groups: the ambiguous kind the REST mapper must handle.
  make("events.k8s.io", "v1", { plural: "events", kind: "Event", shortNames: ["ev"], fields: eventsV1Fields }),
  make("authorization.k8s.io", "v1", {
    plural: "subjectaccessreviews",
    kind: "SubjectAccessReview",
    namespaced: false,
    verbs: ["create"]
  }),
  make("authorization.k8s.io", "v1", {
    plural: "localsubjectaccessreviews",
    kind: "LocalSubjectAccessReview",
    verbs: ["create"]
  }),
  make("authentication.k8s.io", "v1", { plural: "tokenreviews", kind: "TokenReview", namespaced: false, verbs: ["create"] }),
  // What an SRE looks at in an incident (nodes, storage, quotas, autoscaling, disruption budgets) and the usage
  // metrics-server answers (seeded like any object here).
  make("", "v1", { plural: "nodes", kind: "Node", namespaced: false, shortNames: ["no"], status: true, fields: ["spec.unschedulable"] }),
  make("", "v1", { plural: "persistentvolumes", kind: "PersistentVolume", namespaced: false, shortNames: ["pv"], status: true }),
  make("", "v1", { plural: "persistentvolumeclaims", kind: "PersistentVolumeClaim", shortNames: ["pvc"], status: true }),
  make("", "v1", { plural: "resourcequotas", kind: "ResourceQuota", shortNames: ["quota"], status: true }),
  make("", "v1", { plural: "limitranges", kind: "LimitRange", shortNames: ["limits"] }),
  make("", "v1", { plural: "endpoints", kind: "Endpoints", shortNames: ["ep"] }),
  make("apps", "v1", { plural: "replicasets", kind: "ReplicaSet", shortNames: ["rs"], status: true }),
  make("apps", "v1", { plural: "statefulsets", kind: "StatefulSet", shortNames: ["sts"], status: true }),
  make("apps", "v1", { plural: "daemonsets", kind: "DaemonSet", shortNames: ["ds"], status: true }),
  make("storage.k8s.io", "v1", { plural: "storageclasses", kind: "StorageClass", namespaced: false, shortNames: ["sc"] }),
  make("autoscaling", "v2", { plural: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler", shortNames: ["hpa"], status: true }),
  make("policy", "v1", { plural: "poddisruptionbudgets", kind: "PodDisruptionBudget", shortNames: ["pdb"], status: true }),
  make("networking.k8s.io", "v1", { plural: "ingresses", kind: "Ingress", shortNames: ["ing"], status: true }),
  make("metrics.k8s.io", "v1beta1", { plural: "pods", kind: "PodMetrics", verbs: ["get", "list"] }),
  make("metrics.k8s.io", "v1beta1", { plural: "nodes", kind: "NodeMetrics", namespaced: false, verbs: ["get", "list"] })
]

/** The platform's CRs (version v1alpha1) in the configured API group. */
export const platformKinds: ReadonlyArray<readonly [plural: string, kind: string]> = [
  ["remediationrequests", "RemediationRequest"],
  ["remediationapprovalrequests", "RemediationApprovalRequest"],
  ["aianalyses", "AIAnalysis"],
  ["signalprocessings", "SignalProcessing"],
  ["workflowexecutions", "WorkflowExecution"],
  ["investigationsessions", "InvestigationSession"],
  ["effectivenessassessments", "EffectivenessAssessment"],
  ["notificationrequests", "NotificationRequest"],
  ["kubemends", "Kubemend"]
]

/** Kinds answered by a handler instead of storage (create-only reviews). */
export const isReview = (rt: ResourceType): boolean => rt.group === "authorization.k8s.io" || rt.group === "authentication.k8s.io"

export class ResourceRegistry {
  private readonly types: Array<ResourceType>

  constructor(apiGroup: string, version = "v1alpha1") {
    this.types = [
      ...builtins,
      ...platformKinds.map(([plural, kind]) => make(apiGroup, version, { plural, kind, status: true, custom: true }))
    ]
  }

  all(): ReadonlyArray<ResourceType> {
    return this.types
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.plural === plural)
  }

  /** Any version of group/plural (storage is shared across versions). */
  findAnyVersion(group: string, plural: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.plural === plural)
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.types.find((t) => groupVersion(t) === apiVersion && t.kind === kind)
  }

  groupVersions(): ReadonlyArray<{ readonly group: string; readonly versions: ReadonlyArray<string> }> {
    const groups = new Map<string, Array<string>>()
    for (const t of this.types) {
      const versions = groups.get(t.group) ?? []
      if (!versions.includes(t.version)) versions.push(t.version)
      groups.set(t.group, versions)
    }
    return [...groups].map(([group, versions]) => ({ group, versions }))
  }

  /** Serve the kinds a CRD declares; a CRD for a kind already served (the platform's CRs) only adds its schema. */
  registerCrd(crd: CrdShape): void {
    const spec = crd.spec
    const names = spec.names
    for (const v of spec.versions ?? []) {
      if (v.served === false || this.find(spec.group, v.name, names.plural) !== undefined) continue
      this.types.push({
        ...make(spec.group, v.name, {
          plural: names.plural,
          kind: names.kind,
          namespaced: spec.scope !== "Cluster",
          shortNames: names.shortNames ?? [],
          status: v.subresources?.status !== undefined,
          custom: true
        }),
        singular: names.singular ?? names.kind.toLowerCase(),
        fromCrd: crd.metadata.name
      })
    }
  }

  unregisterCrd(name: string): void {
    for (let i = this.types.length - 1; i >= 0; i--) if (this.types[i]!.fromCrd === name) this.types.splice(i, 1)
  }
}

/** The part of a CustomResourceDefinition the server reads. */
export interface CrdShape {
  readonly metadata: { readonly name: string }
  readonly spec: {
    readonly group: string
    readonly scope?: string
    readonly names: {
      readonly plural: string
      readonly kind: string
      readonly singular?: string
      readonly shortNames?: ReadonlyArray<string>
    }
    readonly versions?: ReadonlyArray<{
      readonly name: string
      readonly served?: boolean
      readonly schema?: { readonly openAPIV3Schema?: unknown }
      readonly subresources?: { readonly status?: unknown }
    }>
  }
}
