/**
 * The access rule an endpoint declares beside itself in its HttpApi contract (`.annotate(AccessRule, AccessRule.write)`);
 * `EndpointAccess.ts` checks it. Kept apart so contracts do not import the checker's dependencies.
 */
import { Context } from "effect"

export type AccessRuleShape =
  /** `get` / `create` on the core `services/<the serving service's name>`. */
  | { readonly _tag: "Service"; readonly verb: "get" | "create" }
  /** `use` on `<apiGroup>/audit/<name>`: a persona grant. */
  | { readonly _tag: "Grant"; readonly name: string }
  | { readonly _tag: "Public" }

export class AccessRule extends Context.Tag("@kubemend/core/EndpointAccess/AccessRule")<AccessRule, AccessRuleShape>() {
  static readonly read: AccessRuleShape = { _tag: "Service", verb: "get" }
  static readonly write: AccessRuleShape = { _tag: "Service", verb: "create" }
  static readonly grant = (name: string): AccessRuleShape => ({ _tag: "Grant", name })
  static readonly public: AccessRuleShape = { _tag: "Public" }
}

/** The resource persona grants beyond tools are reviewed on (`use` on `<apiGroup>/audit/<name>`). */
export const grantResource = "audit"

/** The grants storage's audit endpoints review, held by the `tool-l3-audit` role. */
export const auditGrants = ["export", "legal-hold-release"] as const
