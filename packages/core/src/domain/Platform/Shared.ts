/**
 * Pieces of the platform CR used by several service blocks: logging, resources, routes, shutdown, JWT providers.
 */
import { Schema } from "effect"
import { Enum, Int, Loose, maxItems, minItems, NonEmpty, optional, withDefault } from "../Common.ts"

export const LogLevel = Enum("debug", "info", "warn", "error", "DEBUG", "INFO", "WARN", "ERROR")

export const Logging = Schema.Struct({ level: withDefault(LogLevel, "info") })

/** Kubernetes `ResourceRequirements`, passed through to the workload. */
export const Resources = Loose

/** An OpenShift Route / ingress host switch. */
export const Route = Schema.Struct({
  enabled: withDefault(Schema.Boolean, false),
  hostname: optional(Schema.String)
})

/** Graceful shutdown: in-flight requests and streams get up to `drainSeconds` (0–300, default 15). */
export const Shutdown = Schema.Struct({
  drainSeconds: withDefault(Int.pipe(Schema.between(0, 300, { message: () => "must be between 0 and 300" })), 15)
})

/** A key in a Secret. */
export const secretKeyRef = (defaultKey: string) => Schema.Struct({ name: NonEmpty, key: withDefault(Schema.String, defaultKey) })

export const HttpsUrl = Schema.String.pipe(Schema.filter((s) => s.startsWith("https://") || "must be an https:// URL"))

/** Claim names (dot notation for nested claims) for user name and groups; there is no uid mapping. */
export const ClaimMappings = Schema.Struct({
  username: optional(Schema.String),
  groups: optional(Schema.String)
})

/** A trusted token issuer. Without `jwksURL` its keys are found through issuer discovery. */
export const JwtProvider = Schema.Struct({
  name: Schema.String.pipe(
    Schema.filter((s) => (s.length >= 1 && s.length <= 63) || "must be 1 to 63 characters", {
      jsonSchema: { minLength: 1, maxLength: 63 }
    })
  ),
  issuerURL: NonEmpty,
  jwksURL: optional(HttpsUrl.pipe(Schema.maxLength(2048, { message: () => "must be at most 2048 characters" }))),
  audiences: Schema.Array(NonEmpty).pipe(minItems(1)),
  claimMappings: optional(ClaimMappings)
})
export interface JwtProvider extends Schema.Schema.Type<typeof JwtProvider> {}

/** JWT providers with unique names; a duplicate is reported on its own `name`. */
export const JwtProviders = Schema.Array(JwtProvider).pipe(
  Schema.filter((providers) => {
    const seen = new Set<string>()
    for (const [i, p] of providers.entries()) {
      if (seen.has(p.name)) return { path: [i, "name"], message: `duplicate provider name "${p.name}"` }
      seen.add(p.name)
    }
    return true
  })
)

/** Names of pre-existing ClusterRoles (at most 64). */
export const ClusterRoleNames = Schema.Array(NonEmpty).pipe(maxItems(64))
