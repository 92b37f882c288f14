/**
 * The one table of personas and the tools each may use (spec document 1, Personas column), and its rendering as
 * Kubernetes RBAC: a `tool-<persona>` ClusterRole granting `use` on `tools` by name, and one `console-access`
 * ClusterRole bound to the console groups. The operator and the devkit seed both render from here.
 *
 * Console access is a separate ClusterRole (not a rule inside each persona role) because document 3 lets
 * `consoleAccessGroups` narrow or empty the console gate independently of the per-tool grants.
 */
import { auditGrants, grantResource } from "./EndpointAccess/Rule.ts"

export const personas = ["sre", "ai-orchestrator", "cicd", "observability", "l3-audit", "remediation-approver"] as const
export type Persona = (typeof personas)[number]

/** The devkit's extra identity: its group holds tool grants (the `sre` role) but no console grant. */
export const noConsole = "no-console" as const
export type DevIdentity = Persona | typeof noConsole

/** The dev user and group of a persona, as the dev issuer mints them and the devkit seed binds them. */
export const personaUser = (p: DevIdentity): string => `${p}-user`
export const personaGroup = (p: DevIdentity): string => `kubemend-${p}`

export type ToolSurface = "mcp" | "a2a"

export interface ToolGrant {
  /** Tool name without the configured prefix. */
  readonly name: string
  /** Whether the configured prefix is prepended (`svc_` + name); the A2A `cluster_*` and alert tools are bare. */
  readonly prefixed: boolean
  /** `mcp`: the MCP bridge's 23 tools. `a2a`: internal tools of the A2A agent (SAR-gated, not on the bridge). */
  readonly surface: ToolSurface
  readonly personas: ReadonlyArray<Persona>
}

const SRE = "sre", AIO = "ai-orchestrator", CICD = "cicd", OBS = "observability", L3 = "l3-audit"
const APR = "remediation-approver"
const all: ReadonlyArray<Persona> = personas
const mcp = (name: string, ...ps: ReadonlyArray<Persona>): ToolGrant => ({ name, prefixed: true, surface: "mcp", personas: ps })
const a2a = (name: string, prefixed: boolean, ...ps: ReadonlyArray<Persona>): ToolGrant => ({ name, prefixed, surface: "a2a", personas: ps })

/**
 * Every SAR-gated tool. The A2A internal tools have no Personas column in the spec; they act on the cluster
 * (read it, or create a RemediationRequest), so they go to the two personas that may start investigations on the
 * bridge (`investigate`): SRE and AI orchestrator.
 */
export const toolTable: ReadonlyArray<ToolGrant> = [
  mcp("list_remediations", ...all),
  mcp("get_remediation", ...all),
  mcp("cancel_remediation", SRE),
  mcp("watch", SRE, AIO, CICD, OBS, APR),
  mcp("list_approval_requests", APR),
  mcp("get_approval_request", APR),
  mcp("approve", APR),
  mcp("investigate", SRE, AIO),
  mcp("await_session", SRE, AIO, CICD, OBS, APR),
  mcp("message", SRE, AIO),
  mcp("complete", SRE, AIO),
  mcp("cancel", SRE, AIO),
  mcp("status", SRE, AIO),
  mcp("reconnect", SRE, AIO),
  mcp("complete_no_action", SRE, AIO),
  mcp("discover_workflows", SRE, AIO),
  mcp("select_workflow", SRE, AIO),
  mcp("list_workflows", SRE, OBS, L3),
  mcp("get_remediation_history", SRE, L3),
  mcp("get_effectiveness", SRE, OBS, L3),
  mcp("get_audit_trail", SRE, L3),
  mcp("present_decision", SRE, AIO),
  mcp("list_alerts", SRE),
  a2a("cluster_get", false, SRE, AIO),
  a2a("cluster_list", false, SRE, AIO),
  a2a("cluster_list_events", false, SRE, AIO),
  a2a("check_existing_remediation", true, SRE, AIO),
  a2a("remediate", true, SRE, AIO),
  a2a("list_alerts", false, SRE, AIO),
  a2a("get_alert_details", false, SRE, AIO),
  a2a("investigate_alert", true, SRE, AIO)
]

/** The name a tool is registered and reviewed under, e.g. `svc_list_remediations` or `cluster_get`. */
export const toolName = (prefix: string, tool: ToolGrant): string => tool.prefixed && prefix !== "" ? `${prefix}_${tool.name}` : tool.name

/** Every reviewed tool name under `prefix`, sorted. */
export const allToolNames = (prefix: string): ReadonlyArray<string> => [...new Set(toolTable.map((t) => toolName(prefix, t)))].sort()

/** The tool names a persona may use under `prefix`, sorted. */
export const toolsFor = (persona: Persona, prefix: string): ReadonlyArray<string> =>
  [...new Set(toolTable.filter((t) => t.personas.includes(persona)).map((t) => toolName(prefix, t)))].sort()

export const personaRoleName = (p: Persona): string => `tool-${p}`
export const consoleRoleName = "console-access"

export interface PolicyRule {
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string>
}

export interface ClusterRole {
  readonly apiVersion: "rbac.authorization.k8s.io/v1"
  readonly kind: "ClusterRole"
  readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> }
  readonly rules: ReadonlyArray<PolicyRule>
}

export interface Subject {
  readonly kind: "Group" | "User"
  readonly apiGroup: "rbac.authorization.k8s.io"
  readonly name: string
}

export interface ClusterRoleBinding {
  readonly apiVersion: "rbac.authorization.k8s.io/v1"
  readonly kind: "ClusterRoleBinding"
  readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> }
  readonly roleRef: { readonly apiGroup: "rbac.authorization.k8s.io"; readonly kind: "ClusterRole"; readonly name: string }
  readonly subjects: ReadonlyArray<Subject>
}

const labels = { "app.kubernetes.io/managed-by": "kubemend", "app.kubernetes.io/component": "rbac" } as const

export const renderPersonaClusterRole = (persona: Persona, opts: { apiGroup: string; toolPrefix: string }): ClusterRole => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: personaRoleName(persona), labels },
  rules: [
    { apiGroups: [opts.apiGroup], resources: ["tools"], verbs: ["use"], resourceNames: toolsFor(persona, opts.toolPrefix) },
    // Storage's export and legal-hold release review this grant (EndpointAccess `grant` rules).
    ...(persona === "l3-audit" ? [{ apiGroups: [opts.apiGroup], resources: [grantResource], verbs: ["use"], resourceNames: [...auditGrants] }] : [])
  ]
})

export const renderConsoleClusterRole = (opts: { apiGroup: string }): ClusterRole => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: consoleRoleName, labels },
  rules: [{ apiGroups: [opts.apiGroup], resources: ["console"], verbs: ["use"] }]
})

const groupSubjects = (groups: ReadonlyArray<string>): ReadonlyArray<Subject> =>
  [...new Set(groups)].sort().map((name) => ({ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name }))

export const renderClusterRoleBinding = (name: string, roleName: string, groups: ReadonlyArray<string>): ClusterRoleBinding => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name, labels },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
  subjects: groupSubjects(groups)
})

/** A document 3 `roleBindings[]` item: exactly one of `role` (a persona) or `clusterRoleName` (custom). */
export type RoleBinding =
  | { readonly role: Persona; readonly groups: ReadonlyArray<string> }
  | { readonly clusterRoleName: string; readonly groups: ReadonlyArray<string> }

export interface RbacSpec {
  readonly apiGroup: string
  readonly toolPrefix: string
  readonly roleBindings: ReadonlyArray<RoleBinding>
  /** Unset: the union of all roleBindings' groups. Non-empty: exactly these. Empty: nobody has console access. */
  readonly consoleAccessGroups?: ReadonlyArray<string>
}

/** The groups the console gate admits, per document 3's `consoleAccessGroups` semantics. */
export const consoleGroups = (spec: Pick<RbacSpec, "roleBindings" | "consoleAccessGroups">): ReadonlyArray<string> =>
  spec.consoleAccessGroups !== undefined
    ? [...new Set(spec.consoleAccessGroups)].sort()
    : [...new Set(spec.roleBindings.flatMap((b) => b.groups))].sort()

export interface RenderedRbac {
  readonly clusterRoles: ReadonlyArray<ClusterRole>
  readonly clusterRoleBindings: ReadonlyArray<ClusterRoleBinding>
}

/**
 * All six persona ClusterRoles, the console ClusterRole, one binding per roleBindings item
 * (`<role>-<index>`), and the console binding. The console binding is always rendered, with no subjects when the
 * list is empty, so a reconciler can apply it unconditionally and an emptied list revokes access.
 */
export const renderRbac = (spec: RbacSpec): RenderedRbac => ({
  clusterRoles: [
    ...personas.map((p) => renderPersonaClusterRole(p, spec)),
    renderConsoleClusterRole(spec)
  ],
  clusterRoleBindings: [
    ...spec.roleBindings.map((b, i) => {
      const role = "role" in b ? personaRoleName(b.role) : b.clusterRoleName
      return renderClusterRoleBinding(`${role}-${i}`, role, b.groups)
    }),
    renderClusterRoleBinding(consoleRoleName, consoleRoleName, consoleGroups(spec))
  ]
})

/**
 * The devkit's bindings: each persona's group to its role, plus the `no-console` group to the `sre` role; the
 * console gate narrowed to the six persona groups so `no-console-user` has tool grants but no console access.
 */
export const devkitRbacSpec = (opts: { apiGroup: string; toolPrefix: string }): RbacSpec => ({
  ...opts,
  roleBindings: [
    ...personas.map((p) => ({ role: p, groups: [personaGroup(p)] })),
    { role: "sre", groups: [personaGroup(noConsole)] }
  ],
  consoleAccessGroups: personas.map(personaGroup)
})
