/**
 * Cluster-scoped RBAC of one platform: the 14 baseline ClusterRoles `{namespace}-{base}`, the 2 monitoring ones
 * when monitoring is on, the 6 `{namespace}-tool-<persona>` roles and the `{namespace}-console-access` role (from core's
 * persona table), the
 * automation role when ansible is on, and their bindings: service accounts to their roles, `roleBindings` groups to
 * tool roles, console groups, and the agent's `additionalClusterRoleBindings`. The grants to call storage and the
 * agent (`storage-client`, `agent-client`: the platform's ServiceAccounts and the operator's own, as its controllers
 * call both) are RoleBindings in the platform's namespace: storage and the agent review `services/<their name>` in
 * their namespace, so another platform's accounts, named alike, are no clients here.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { type PolicyRule, renderRbac } from "@kubemend/core/Personas"
import { ownerLabels, type RbacSet, rbacSetLabel, type ServiceName, workloadName } from "./Names.ts"

export interface RbacContext {
  readonly namespace: string
  readonly name: string
  readonly apiGroup: string
  readonly toolPrefix: string
  /** The operator's own ServiceAccount: its controllers call storage and the agent. */
  readonly operator: { readonly namespace: string; readonly name: string }
}

const rule = (
  apiGroups: ReadonlyArray<string>,
  resources: ReadonlyArray<string>,
  verbs: ReadonlyArray<string>,
  resourceNames?: ReadonlyArray<string>
): PolicyRule => ({ apiGroups, resources, verbs, ...(resourceNames ? { resourceNames } : {}) })

const read = ["get", "list", "watch"]
const write = ["get", "list", "watch", "create", "update", "patch", "delete"]
const reviews = [
  rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
  rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"])
]
const events = rule([""], ["events"], ["create", "patch"])

/** The 14 baseline roles by base name. Controllers of the remediation lifecycle get theirs ready to bind. */
const baselineRules = (g: string): ReadonlyArray<readonly [string, ReadonlyArray<PolicyRule>]> => [
  ["aianalysis-controller", [rule([g], ["aianalyses", "aianalyses/status"], write), rule([g], ["remediationrequests"], read), events]],
  ["agent-client", [rule([""], ["services"], ["get", "create"], [workloadName("agent")])]],
  ["agent-investigator", [
    rule(["", "apps", "batch", "networking.k8s.io", "policy", "autoscaling"], ["*"], read),
    rule([g], ["*"], read),
    rule([g], ["investigationsessions", "investigationsessions/status"], write),
    // Interactive sessions hold and list leases (release 1.5: lease list permission for the agent).
    rule(["coordination.k8s.io"], ["leases"], ["get", "list", "watch", "create", "update", "patch", "delete"]),
    ...reviews
  ]],
  ["signalprocessing-controller", [rule([g], ["signalprocessings", "signalprocessings/status"], write), rule(["", "apps"], ["*"], read), events]],
  ["remediationorchestrator-controller", [
    rule([g], [
      "remediationrequests",
      "remediationrequests/status",
      "remediationapprovalrequests",
      "remediationapprovalrequests/status",
      "aianalyses",
      "signalprocessings",
      "workflowexecutions",
      "effectivenessassessments",
      "notificationrequests"
    ], write),
    rule([""], ["namespaces"], read),
    events
  ]],
  ["workflowexecution-controller", [rule([g], ["workflowexecutions", "workflowexecutions/status"], write), rule(["batch"], ["jobs"], write), events]],
  ["workflow-runner", [rule(["", "apps", "batch", "autoscaling", "policy"], ["*"], ["get", "list", "watch", "patch", "update"])]],
  ["effectivenessmonitor-controller", [
    rule([g], ["effectivenessassessments", "effectivenessassessments/status"], write),
    rule([g], ["remediationrequests"], read),
    rule(["", "apps"], ["*"], read),
    events
  ]],
  ["notification-controller", [rule([g], ["notificationrequests", "notificationrequests/status"], write), events]],
  ["storage-auth-middleware", reviews],
  ["storage-client", [rule([""], ["services"], ["get", "create"], [workloadName("storage")])]],
  ["authwebhook", [rule([g], ["remediationapprovalrequests", "remediationapprovalrequests/status"], ["get", "update", "patch"]), ...reviews]],
  // Signal ingestion: requests, the owner chains it resolves targets through, Warning events it watches, and the
  // reviews of who may send.
  ["signal-gateway", [
    rule([g], ["remediationrequests", "remediationrequests/status"], write),
    rule(["", "apps", "batch", "autoscaling", "policy"], ["*"], read),
    ...reviews
  ]],
  ["gateway", [
    rule([g], [
      "remediationrequests",
      "remediationrequests/status",
      "remediationapprovalrequests",
      "remediationapprovalrequests/status",
      "investigationsessions"
    ], write),
    rule([g], ["*"], read),
    rule(["", "apps", "batch", "networking.k8s.io"], ["*"], read),
    rule(["coordination.k8s.io"], ["leases"], read),
    ...reviews
  ]]
]

const monitoringRules: ReadonlyArray<readonly [string, ReadonlyArray<PolicyRule>]> = [
  ["alertmanager-view", [
    rule(["monitoring.coreos.com"], ["alertmanagers", "prometheuses"], ["get"]),
    rule(["monitoring.coreos.com"], ["alertmanagers/api", "prometheuses/api"], ["get", "create"])
  ]],
  ["gateway-signal-source", [rule([""], ["services"], ["get", "create"], [workloadName("signals")])]]
]

/** Which service account is bound to which baseline/monitoring role, cluster-wide. */
const serviceBindings: ReadonlyArray<readonly [string, ServiceName]> = [
  ["agent-investigator", "agent"],
  ["storage-auth-middleware", "storage"],
  ["storage-auth-middleware", "agent"],
  ["gateway", "gateway"],
  ["signal-gateway", "signals"]
]

/** Which service account may call which platform service: bound in the platform's namespace only. */
const clientBindings: ReadonlyArray<readonly [string, ServiceName]> = [
  ["storage-client", "gateway"],
  ["storage-client", "agent"],
  ["storage-client", "signals"],
  ["agent-client", "gateway"]
]

export interface RenderedClusterRbac {
  readonly clusterRoles: ReadonlyArray<KubeObject>
  readonly clusterRoleBindings: ReadonlyArray<KubeObject>
  /** RoleBindings in the platform's namespace (to its ClusterRoles); the reconciler adds the owner reference. */
  readonly roleBindings: ReadonlyArray<KubeObject>
  /** Names of the bindings made from `apiFrontend.rbac.roleBindings` (status `boundToolRoleBindings`). */
  readonly toolBindingNames: ReadonlyArray<string>
  /** ClusterRoles bound from `agent.additionalClusterRoleBindings` (status `boundAdditionalClusterRoles`). */
  readonly additionalRoles: ReadonlyArray<string>
}

const rbacApi = "rbac.authorization.k8s.io/v1"

export const renderClusterRbac = (spec: PlatformSpec, ctx: RbacContext): RenderedClusterRbac => {
  const labels = (set: RbacSet) => ({ ...ownerLabels(ctx.apiGroup, ctx.namespace, ctx.name), [rbacSetLabel(ctx.apiGroup)]: set })
  const prefixed = (base: string) => `${ctx.namespace}-${base}`
  const role = (name: string, rules: ReadonlyArray<PolicyRule>, set: RbacSet): KubeObject => ({
    apiVersion: rbacApi,
    kind: "ClusterRole",
    metadata: { name, labels: labels(set) },
    rules
  })
  const binding = (name: string, roleName: string, subjects: ReadonlyArray<object>): KubeObject => ({
    apiVersion: rbacApi,
    kind: "ClusterRoleBinding",
    metadata: { name, labels: labels("binding") },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
    subjects
  })
  const roleBinding = (name: string, roleName: string, subjects: ReadonlyArray<object>): KubeObject => {
    const b = binding(name, roleName, subjects)
    return { ...b, kind: "RoleBinding", metadata: { ...b.metadata, namespace: ctx.namespace } }
  }
  const sa = (svc: ServiceName) => ({ kind: "ServiceAccount", name: workloadName(svc), namespace: ctx.namespace })

  const personaRbac = renderRbac({
    apiGroup: ctx.apiGroup,
    toolPrefix: ctx.toolPrefix,
    roleBindings: spec.apiFrontend.rbac.roleBindings,
    ...(spec.apiFrontend.rbac.consoleAccessGroups === undefined ? {} : { consoleAccessGroups: spec.apiFrontend.rbac.consoleAccessGroups })
  })
  // The persona and console roles are cluster-scoped and granted per platform, so each platform names its own
  // (`{namespace}-tool-sre`): two platforms in one cluster neither share nor prune each other's. A custom
  // `clusterRoleName` is the user's role and keeps its name.
  const ownRoles = new Set(personaRbac.clusterRoles.map((r) => r.metadata.name))
  const roleRefOf = (name: string) => (ownRoles.has(name) ? prefixed(name) : name)
  const toolBindings = personaRbac.clusterRoleBindings.map((b) => binding(prefixed(b.metadata.name), roleRefOf(b.roleRef.name), b.subjects))
  const toolBindingNames = toolBindings.slice(0, spec.apiFrontend.rbac.roleBindings.length).map((b) => b.metadata.name)
  const additionalRoles = [...new Set(spec.agent.additionalClusterRoleBindings ?? [])]

  const clusterRoles = [
    ...baselineRules(ctx.apiGroup).map(([base, rules]) => role(prefixed(base), rules, "baseline")),
    ...(spec.monitoring.enabled ? monitoringRules.map(([base, rules]) => role(prefixed(base), rules, "monitoring")) : []),
    ...personaRbac.clusterRoles.map((r) => role(prefixed(r.metadata.name), r.rules, r.metadata.name.startsWith("tool-") ? "tool" : "console")),
    ...(spec.ansible.enabled
      ? [role(
        prefixed("workflow-automation"),
        [
          rule([ctx.apiGroup], ["workflowexecutions", "workflowexecutions/status"], ["get", "list", "watch", "patch", "update"]),
          rule(
            [""],
            ["secrets"],
            ["get"],
            [spec.ansible.tokenSecretRef?.name, spec.ansible.caCertSecretRef?.name]
              .filter((n): n is string => n !== undefined)
          )
        ].filter((r) => r.resourceNames === undefined || r.resourceNames.length > 0),
        "automation"
      )]
      : [])
  ]
  const clusterRoleBindings = [
    ...serviceBindings.map(([base, svc]) => binding(prefixed(`${base}-${svc}`), prefixed(base), [sa(svc)])),
    ...(spec.monitoring.enabled ? [binding(prefixed("alertmanager-view-gateway"), prefixed("alertmanager-view"), [sa("gateway")])] : []),
    ...(spec.ansible.enabled ? [binding(prefixed("workflow-automation-agent"), prefixed("workflow-automation"), [sa("agent")])] : []),
    ...toolBindings,
    ...additionalRoles.map((r) => binding(prefixed(`agent-additional-${r}`), r, [sa("agent")]))
  ]
  const roleBindings = [
    ...clientBindings.map(([base, svc]) => roleBinding(`${base}-${svc}`, prefixed(base), [sa(svc)])),
    ...(["storage-client", "agent-client"] as const).map((base) =>
      roleBinding(`${base}-operator`, prefixed(base), [{ kind: "ServiceAccount", ...ctx.operator }])
    )
  ]
  return { clusterRoles, clusterRoleBindings, roleBindings, toolBindingNames, additionalRoles }
}
