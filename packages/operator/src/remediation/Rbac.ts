/**
 * What the lifecycle controllers do to the cluster, as RBAC: one row per (API group, resource) with the verbs their
 * K8s and Cluster calls use and who makes them. The operator's ClusterRole in deploy/operator/operator.yaml must grant
 * every row and nothing more for these resources; test/Deploy.test.ts checks the manifest against this table and runs
 * the pipeline as the operator's ServiceAccount, so a controller that starts making a new call fails that test until
 * the call has a row here and a rule in the manifest.
 *
 * Discovery (`/api`, `/apis/...`, which the REST mapper reads before a target lookup) is not listed: clusters grant it
 * to every authenticated user (`system:discovery`).
 */
import type { CrPlural } from "@kubemend/core/K8s"
import { DefaultApiGroup } from "@kubemend/core/domain/Meta"

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete"

export interface LifecycleAccess {
  /** API group (`""` is the core group). */
  readonly group: string
  /** Plural resource, `<plural>/status` for the status subresource. */
  readonly resource: string
  readonly verbs: ReadonlyArray<Verb>
  /** Which controller makes these calls. */
  readonly why: string
}

/**
 * Kinds a remediation targets whose own `{api_group}/managed` label is read when their namespace has none (`get`
 * only). Kept to the workload kinds: a wildcard would also grant Secrets.
 */
export const managedTargetResources: ReadonlyArray<{ readonly group: string; readonly resources: ReadonlyArray<string> }> = [
  { group: "", resources: ["pods"] },
  { group: "apps", resources: ["deployments", "statefulsets", "daemonsets", "replicasets"] },
  { group: "batch", resources: ["jobs", "cronjobs"] }
]

/** The table for the platform's API group. */
export const lifecycleRbac = (apiGroup: string = DefaultApiGroup): ReadonlyArray<LifecycleAccess> => {
  const cr = (plural: CrPlural, verbs: ReadonlyArray<Verb>, why: string): LifecycleAccess => ({ group: apiGroup, resource: plural, verbs, why })
  const status = (plural: CrPlural, why: string): LifecycleAccess => ({ group: apiGroup, resource: `${plural}/status`, verbs: ["patch"], why })
  return [
    cr("remediationrequests", ["get", "list", "watch", "delete"], "orchestrator: watch + resync, routing reads other RRs, GC deletes"),
    status("remediationrequests", "orchestrator: every phase transition, block and timeout"),
    cr("aianalyses", ["get", "list", "watch", "create", "delete"], "orchestrator creates one per attempt; analysis controller watches; cascade, GC"),
    status("aianalyses", "analysis controller: session, phase and result; cascade: Failed/ParentCancelled"),
    cr(
      "remediationapprovalrequests",
      ["get", "list", "watch", "create", "delete"],
      "approval: created below the confidence threshold, watched for decisions; GC"
    ),
    status("remediationapprovalrequests", "approval: requiredBy/timeRemaining, Expired decision"),
    cr(
      "workflowexecutions",
      ["get", "list", "watch", "create", "delete"],
      "execution: created when approved, watched for completion; routing (ResourceBusy, RecentlyRemediated); GC"
    ),
    status("workflowexecutions", "workflow execution controller: phase, run, failure details; cascade: Failed"),
    cr("signalprocessings", ["get", "list", "watch", "create", "delete"], "Processing: one per RR, watched by the signal-processing controller; cascade, GC"),
    status("signalprocessings", "signal processing: enrichment and classification; cascade: Failed"),
    { group: "autoscaling", resource: "horizontalpodautoscalers", verbs: ["list"], why: "signal processing: whether an HPA scales the target (hpaEnabled)" },
    { group: "policy", resource: "poddisruptionbudgets", verbs: ["list"], why: "signal processing: whether a PDB protects the target's pods (pdbProtected)" },
    { group: "", resource: "configmaps", verbs: ["get"], why: "policy sync: policy.rego and approval.rego from the ConfigMaps the platform CR names" },
    cr(
      "effectivenessassessments",
      ["get", "list", "watch", "create", "delete"],
      "Verifying: one per executed RR, its verdict read back; the effectiveness monitor watches them; GC"
    ),
    status("effectivenessassessments", "effectiveness monitor: timeline, component scores, verdict"),
    cr(
      "notificationrequests",
      ["get", "list", "watch", "create", "delete"],
      "escalations, approvals waiting; GC; the notification controller watches and delivers them"
    ),
    status("notificationrequests", "notification controller: phase and per-receiver deliveries"),
    { group: "", resource: "secrets", verbs: ["get"], why: "notification controller: receiver credentials (webhook URLs, routing keys, SMTP login)" },
    {
      group: "batch",
      resource: "jobs",
      verbs: ["get", "list", "watch", "create", "patch", "delete"],
      why: "workflow execution: one Job per execution (server-side apply), watched; deleted on cancellation"
    },
    { group: "", resource: "pods", verbs: ["list"], why: "workflow execution: a Job's pods, for the exit code and a failed run's log" },
    { group: "", resource: "pods/log", verbs: ["get"], why: "workflow execution: the redacted log tail of a failed run" },
    {
      group: "tekton.dev",
      resource: "pipelineruns",
      verbs: ["get", "list", "create", "patch", "delete"],
      why: "workflow execution (tekton.enabled): one PipelineRun per execution, polled; deleted on cancellation"
    },
    cr("kubemends", ["list"], "platform settings: the CR's remediationOrchestrator/aiAnalysis overrides"),
    ...(["remediationworkflows", "actiontypes"] as const).flatMap((plural): ReadonlyArray<LifecycleAccess> => [
      {
        group: apiGroup,
        resource: plural,
        verbs: ["get", "list", "watch", "patch"],
        why: "catalog: watched into the storage catalog; patch adds and removes its finalizer"
      },
      {
        group: apiGroup,
        resource: `${plural}/status`,
        verbs: ["patch"],
        why: "catalog: workflow id, content hash, catalog status and the Registered condition"
      }
    ]),
    {
      group: "coordination.k8s.io",
      resource: "leases",
      verbs: ["get", "create", "update", "delete"],
      why: "leader election: the operator's Lease (acquire, renew, release on shutdown)"
    },
    {
      group: "",
      resource: "namespaces",
      verbs: ["get"],
      why: "routing: the target namespace's managed label (UnmanagedResource); signal processing: its labels"
    },
    { group: "", resource: "nodes", verbs: ["get"], why: "effectiveness monitor: a Node target's Ready condition (health component)" },
    ...managedTargetResources.flatMap(({ group, resources }) =>
      resources.map((resource): LifecycleAccess =>
        group === "" && resource === "pods"
          ? {
            group,
            resource,
            verbs: ["get", "list"],
            why: "routing: a Pod target's managed label; signal processing: owner chain; effectiveness monitor: a workload's pods (health)"
          }
          : {
            group,
            resource,
            verbs: ["get"],
            why:
              "routing: the target's own managed label when its namespace has none; signal processing: workload and owner chain; effectiveness monitor: its spec hash"
          }
      )
    )
  ]
}

/** The table for the default API group (`kubemend.io`), as deploy/ installs it. */
export const LifecycleRbac: ReadonlyArray<LifecycleAccess> = lifecycleRbac()
