/**
 * The gateway block of the platform CR (`apiFrontend`, the external MCP/A2A gateway) and the web console block.
 */
import { Schema } from "effect"
import { Enum, GoDurationString, Int, Loose, minItems, NonEmpty, optional, withBlockDefault, withDefault } from "../Common.ts"
import { personas } from "../../Personas.ts"
import { HttpsUrl, JwtProviders, Logging, Route, Shutdown } from "./Shared.ts"

/** The six predefined roles (ClusterRoles `tool-<persona>`), from the one persona table in `Personas.ts`. */
export const PersonaRole = Enum(...personas)
export type PersonaRole = typeof PersonaRole.Type

/** Audience expected in gateway tokens when none is configured (the product's fixed default). */
export const DefaultGatewayAudience = "kubemend-gateway"

const RoleBindingFields = Schema.Struct({
  role: optional(PersonaRole),
  clusterRoleName: optional(NonEmpty),
  groups: Schema.Array(NonEmpty).pipe(minItems(1))
}).pipe(
  Schema.filter((b) => {
    if (b.role !== undefined && b.clusterRoleName !== undefined) {
      return { path: ["role"], message: "set exactly one of role or clusterRoleName, not both" }
    }
    if (b.role === undefined && b.clusterRoleName === undefined) {
      return { path: ["role"], message: "one of role or clusterRoleName is required" }
    }
    return true
  })
)

const Groups = Schema.Array(Schema.String)

/**
 * Binds groups to one predefined persona (`role`) or to a custom ClusterRole (`clusterRoleName`), never both.
 * Written as one object with the two optional keys; decoded to the `Personas.RoleBinding` union `renderRbac` takes.
 */
export const RoleBinding = Schema.transform(
  RoleBindingFields,
  Schema.Union(
    Schema.Struct({ role: PersonaRole, groups: Groups }),
    Schema.Struct({ clusterRoleName: Schema.String, groups: Groups })
  ),
  {
    strict: true,
    decode: (b) => b.role !== undefined ? { role: b.role, groups: b.groups } : { clusterRoleName: b.clusterRoleName ?? "", groups: b.groups },
    encode: (b) => ("role" in b ? { role: b.role, groups: b.groups } : { clusterRoleName: b.clusterRoleName, groups: b.groups })
  }
)
export type RoleBinding = typeof RoleBinding.Type

export const Rbac = Schema.Struct({
  /** How long SubjectAccessReview answers are cached. */
  sarCacheTTL: withDefault(GoDurationString, "30s"),
  roleBindings: withDefault(Schema.Array(RoleBinding), []),
  /**
   * Groups allowed through the console-access gate. Unset: the union of all `roleBindings` groups; a non-empty
   * list narrows; an empty list denies everyone. Deliberately no default, absent and empty differ.
   */
  consoleAccessGroups: optional(Schema.Array(Schema.String))
})

const PositiveInt = Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "must be at least 1" }))

export const RateLimit = Schema.Struct({
  ipRequestsPerSec: withDefault(PositiveInt, 50),
  userRequestsPerSec: withDefault(PositiveInt, 20),
  toolCallsPerMinute: withDefault(PositiveInt, 60),
  maxConcurrentSessions: withDefault(PositiveInt, 100)
})

export const Auth = Schema.Struct({
  issuerURL: optional(Schema.String),
  audience: withDefault(NonEmpty, DefaultGatewayAudience),
  /** Bypasses issuer discovery. */
  jwksURL: optional(Schema.String),
  jwtProviders: withDefault(JwtProviders, []),
  allowInsecureIssuers: optional(Schema.Boolean),
  oidcCaFile: optional(Schema.String)
})

/** Workload identity; `enabled` unset is treated as true (kept unset here so the operator can tell). */
export const Spire = Schema.Struct({
  enabled: optional(Schema.Boolean),
  className: optional(Schema.String),
  trustDomain: optional(Schema.String)
})

/** Alert severity triage (`svc_list_alerts`, needs a metrics backend) with an optional dedicated LLM. */
export const SeverityTriage = Schema.Struct({
  enabled: withDefault(Schema.Boolean, false),
  cacheTTLSeconds: withDefault(Int.pipe(Schema.nonNegative()), 30),
  llmConfidence: withDefault(Schema.Number.pipe(Schema.between(0, 1)), 0.7),
  llm: optional(
    Schema.Struct({
      provider: Enum("vertex_ai", "gemini", "anthropic"),
      model: NonEmpty,
      credentialsSecretName: optional(Schema.String)
    })
  )
})

export const ApiFrontend = Schema.Struct({
  enabled: withDefault(Schema.Boolean, true),
  auth: withBlockDefault(Auth),
  rateLimit: withBlockDefault(RateLimit),
  shutdown: withBlockDefault(Shutdown),
  /** Public URL of the gateway; HTTPS; derived from the route when unset. */
  externalURL: optional(HttpsUrl),
  rbac: withBlockDefault(Rbac),
  route: withBlockDefault(Route),
  spire: optional(Spire),
  severityTriage: withBlockDefault(SeverityTriage),
  logging: withBlockDefault(Logging),
  resources: optional(Loose)
})
export interface ApiFrontend extends Schema.Schema.Type<typeof ApiFrontend> {}

/** Web console; `auth.secretName` (keys client-id, client-secret, cookie-secret) is required when enabled. */
export const Console = Schema.Struct({
  enabled: withDefault(Schema.Boolean, false),
  auth: optional(Schema.Struct({ secretName: optional(NonEmpty), issuerURL: optional(Schema.String) })),
  route: withBlockDefault(
    Schema.Struct({ enabled: withDefault(Schema.Boolean, true), host: optional(Schema.String) })
  ),
  resources: optional(Loose)
}).pipe(
  Schema.filter((c) =>
    !c.enabled || c.auth?.secretName !== undefined || {
      path: ["auth", "secretName"],
      message: "is required when console.enabled is true"
    }
  )
)
