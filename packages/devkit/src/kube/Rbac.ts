/**
 * The one RBAC evaluator: ClusterRoles/ClusterRoleBindings (and Roles/RoleBindings of the request's namespace), the
 * dev API server's stored ones or any given set (`Authorizer.of`, tests answering reviews from rendered RBAC).
 * What a SubjectAccessReview is answered from. `system:masters` is a superuser group, as on real clusters.
 */
import { type LabelSelector, matchLabels, selectorRequirements } from "./Selectors.ts"
import type { Obj } from "./Store.ts"

/** Where the RBAC objects come from, by `group/resource` key (the dev API server's Store is one). */
export interface RbacObjects {
  readonly list: (key: string, namespace?: string) => ReadonlyArray<Obj>
  readonly get: (key: string, namespace: string | undefined, name: string) => Obj | undefined
}

export interface AccessAttributes {
  readonly user: string
  readonly groups: ReadonlyArray<string>
  readonly verb: string
  /** Resource requests. */
  readonly namespace?: string
  readonly group?: string
  readonly resource?: string
  readonly subresource?: string
  readonly name?: string
  /** Non-resource requests (`/healthz`, …). */
  readonly path?: string
}

export interface Decision {
  readonly allowed: boolean
  readonly reason: string
}

interface PolicyRule {
  readonly verbs?: ReadonlyArray<string>
  readonly apiGroups?: ReadonlyArray<string>
  readonly resources?: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string>
  readonly nonResourceURLs?: ReadonlyArray<string>
}

interface Subject {
  readonly kind: string
  readonly name: string
  readonly namespace?: string
}

interface Binding {
  readonly kind: "ClusterRoleBinding" | "RoleBinding"
  readonly name: string
  readonly namespace?: string
  readonly roleRef: { readonly kind: string; readonly name: string }
  readonly subjects: ReadonlyArray<Subject>
}

const rbac = "rbac.authorization.k8s.io"

const has = (list: ReadonlyArray<string> | undefined, value: string) => (list ?? []).includes("*") || (list ?? []).includes(value)

const resourceMatches = (rule: PolicyRule, a: AccessAttributes): boolean => {
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource ?? ""
  return (rule.resources ?? []).some(
    (r) => r === "*" || r === combined || (a.subresource !== undefined && r === `*/${a.subresource}`)
  )
}

const nonResourceMatches = (rule: PolicyRule, path: string): boolean =>
  (rule.nonResourceURLs ?? []).some((u) => u === "*" || u === path || (u.endsWith("*") && path.startsWith(u.slice(0, -1))))

export const ruleAllows = (rule: PolicyRule, a: AccessAttributes): boolean => {
  if (!has(rule.verbs, a.verb)) return false
  if (a.path !== undefined) return nonResourceMatches(rule, a.path)
  if (!has(rule.apiGroups, a.group ?? "") || !resourceMatches(rule, a)) return false
  const names = rule.resourceNames ?? []
  return names.length === 0 || (a.name !== undefined && a.name !== "" && names.includes(a.name))
}

const subjectMatches = (s: Subject, binding: Binding, a: AccessAttributes): boolean => {
  switch (s.kind) {
    case "User":
      return s.name === a.user
    case "Group":
      return a.groups.includes(s.name)
    case "ServiceAccount":
      return a.user === `system:serviceaccount:${s.namespace ?? binding.namespace ?? ""}:${s.name}`
    default:
      return false
  }
}

const asBinding = (o: Obj): Binding => ({
  kind: o.kind as Binding["kind"],
  name: o.metadata.name,
  ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }),
  roleRef: (o["roleRef"] ?? { kind: "", name: "" }) as Binding["roleRef"],
  subjects: (o["subjects"] ?? []) as ReadonlyArray<Subject>
})

export class Authorizer {
  constructor(private readonly store: RbacObjects) {}

  /** An authorizer over fixed objects (each with its `kind`): ClusterRoles, ClusterRoleBindings, Roles, RoleBindings. */
  static of(objects: ReadonlyArray<{ readonly kind: string; readonly metadata: { readonly name: string; readonly namespace?: string } }>) {
    const keys: Record<string, string> = {
      ClusterRole: `${rbac}/clusterroles`,
      ClusterRoleBinding: `${rbac}/clusterrolebindings`,
      Role: `${rbac}/roles`,
      RoleBinding: `${rbac}/rolebindings`
    }
    const list = (key: string, namespace?: string) =>
      objects.filter((o) => keys[o.kind] === key && (namespace === undefined || o.metadata.namespace === namespace)) as ReadonlyArray<Obj>
    return new Authorizer({
      list,
      get: (key, namespace, name) => list(key, namespace).find((o) => o.metadata.name === name)
    })
  }

  /** Rules of a ClusterRole, including those an `aggregationRule` collects from labelled ClusterRoles. */
  private clusterRoleRules(name: string): ReadonlyArray<PolicyRule> {
    const all = this.store.list(`${rbac}/clusterroles`)
    const role = all.find((r) => r.metadata.name === name)
    if (role === undefined) return []
    const own = (role["rules"] ?? []) as ReadonlyArray<PolicyRule>
    const aggregation = role["aggregationRule"] as { clusterRoleSelectors?: ReadonlyArray<LabelSelector> } | undefined
    const selectors = (aggregation?.clusterRoleSelectors ?? []).map(selectorRequirements)
    const aggregated = all
      .filter((r) => r.metadata.name !== name && selectors.some((s) => matchLabels(s, r.metadata.labels)))
      .flatMap((r) => (r["rules"] ?? []) as ReadonlyArray<PolicyRule>)
    return [...own, ...aggregated]
  }

  private rulesOf(binding: Binding): ReadonlyArray<PolicyRule> {
    if (binding.roleRef.kind === "ClusterRole") return this.clusterRoleRules(binding.roleRef.name)
    const role = this.store.get(`${rbac}/roles`, binding.namespace, binding.roleRef.name)
    return (role?.["rules"] ?? []) as ReadonlyArray<PolicyRule>
  }

  authorize(a: AccessAttributes): Decision {
    if (a.groups.includes("system:masters")) return { allowed: true, reason: "superuser group system:masters" }
    const bindings = [
      ...this.store.list(`${rbac}/clusterrolebindings`).map((o) => asBinding({ ...o, kind: "ClusterRoleBinding" })),
      ...(a.namespace
        ? this.store.list(`${rbac}/rolebindings`, a.namespace).map((o) => asBinding({ ...o, kind: "RoleBinding" }))
        : [])
    ]
    for (const binding of bindings) {
      const subject = binding.subjects.find((s) => subjectMatches(s, binding, a))
      if (subject === undefined) continue
      if (this.rulesOf(binding).some((rule) => ruleAllows(rule, a))) {
        const where = binding.namespace ? ` in namespace "${binding.namespace}"` : ""
        return {
          allowed: true,
          reason: `RBAC: allowed by ${binding.kind} "${binding.name}"${where} of ${binding.roleRef.kind} ` +
            `"${binding.roleRef.name}" to ${subject.kind} "${subject.name}"`
        }
      }
    }
    return { allowed: false, reason: `RBAC: no rule allows user "${a.user}" to ${describe(a)}` }
  }
}

const describe = (a: AccessAttributes): string =>
  a.path !== undefined
    ? `${a.verb} ${a.path}`
    : `${a.verb} ${a.resource ?? ""}${a.subresource ? `/${a.subresource}` : ""}` +
      `${a.group ? ` in API group "${a.group}"` : ""}${a.name ? ` named "${a.name}"` : ""}` +
      `${a.namespace ? ` in namespace "${a.namespace}"` : ""}`
