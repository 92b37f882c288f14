/**
 * A table of allow rules for the `Sar.layerTable` fake. (Reviews answered from real RBAC objects go through the
 * devkit's one RBAC evaluator, `Authorizer`.)
 */
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
