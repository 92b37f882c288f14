/**
 * A table of allow rules for the `Sar.layerTable` fake and in-test K8s fakes, and the conversion of rendered
 * ClusterRoles/Bindings into such rules (so tests can answer reviews from `Personas.renderRbac` without a server).
 */
import type { RenderedRbac } from "../Personas.ts"

export type SarResource = "tools" | "console"

/** Who is asking: the authenticated user and their groups. */
export interface SarSubject {
  readonly user: string
  readonly groups: ReadonlyArray<string>
}

/** One allow rule. Omitted `users` and `groups` match nobody; omitted `names` matches any name. */
export interface SarRule {
  readonly users?: ReadonlyArray<string>
  readonly groups?: ReadonlyArray<string>
  readonly resource: SarResource
  readonly names?: ReadonlyArray<string>
}

export interface SarQuery extends SarSubject {
  readonly resource: string
  readonly name?: string | undefined
}

export const rulesAllow = (rules: ReadonlyArray<SarRule>, q: SarQuery): boolean =>
  rules.some((r) =>
    r.resource === q.resource &&
    ((r.users ?? []).includes(q.user) || (r.groups ?? []).some((g) => q.groups.includes(g))) &&
    (r.names === undefined || (q.name !== undefined && r.names.includes(q.name)))
  )

/**
 * The rules that the bindings in `rbac` grant for verb `use` in `apiGroup` (wildcards `*` honoured), evaluated the
 * way the API server's RBAC authorizer would. Only `tools` and `console` are kept.
 */
export const rulesFromRbac = (rbac: RenderedRbac, apiGroup: string): ReadonlyArray<SarRule> =>
  rbac.clusterRoleBindings.flatMap((binding) => {
    const role = rbac.clusterRoles.find((r) => r.metadata.name === binding.roleRef.name)
    if (role === undefined) return []
    const users = binding.subjects.filter((s) => s.kind === "User").map((s) => s.name)
    const groups = binding.subjects.filter((s) => s.kind === "Group").map((s) => s.name)
    return role.rules
      .filter((rule) =>
        (rule.apiGroups.includes(apiGroup) || rule.apiGroups.includes("*")) &&
        (rule.verbs.includes("use") || rule.verbs.includes("*")))
      .flatMap((rule) =>
        (["tools", "console"] as const)
          .filter((res) => rule.resources.includes(res) || rule.resources.includes("*"))
          .map((resource): SarRule => ({
            users,
            groups,
            resource,
            ...(rule.resourceNames !== undefined && rule.resourceNames.length > 0 ? { names: rule.resourceNames } : {})
          })))
  })
