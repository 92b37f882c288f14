/**
 * Token validation settings. Document 3 has two shapes, the single `apiFrontend.auth` block (`issuerURL`,
 * `audience`, `jwksURL`) and the `jwtProviders[]` list; both become `JwtProvider` entries here.
 */
import { Config, Context, Duration, Layer, Option } from "effect"
import { duration } from "../Config.ts"
import { DefaultGatewayAudience } from "../domain/Platform/ApiFrontend.ts"

export interface ClaimMappings {
  /** Claim holding the user name, dot notation for nested claims (`user.name`). */
  readonly username?: string
  /** Claim holding the group list, dot notation for nested claims. */
  readonly groups?: string
}

export interface JwtProvider {
  /** Unique name (audit, logs). */
  readonly name: string
  /** Must equal the token's `iss`. */
  readonly issuerURL: string
  /** Skips discovery when set. */
  readonly jwksURL?: string
  /** The token's `aud` must contain at least one of these. */
  readonly audiences: ReadonlyArray<string>
  readonly claimMappings?: ClaimMappings
}

export interface AuthConfigShape {
  readonly providers: ReadonlyArray<JwtProvider>
  /** Allow `http:` issuer and JWKS URLs (the local platform and tests). */
  readonly allowInsecureIssuers: boolean
  /** Minimum time between two JWKS fetches of one provider, also when a token names an unknown `kid`. */
  readonly jwksRefreshCooldown: Duration.Duration
  /** Keys older than this are refetched on next use (the original refetched every 300 s). */
  readonly jwksRefreshInterval: Duration.Duration
  /** How long the last good keys keep serving, counted from their fetch, while the JWKS is unreachable. */
  readonly jwksStaleTTL: Duration.Duration
  /** Deadline of one discovery or JWKS request. */
  readonly jwksTimeout: Duration.Duration
  /** Leeway for `nbf` and `iat` in the future. `exp` gets none. */
  readonly clockSkew: Duration.Duration
  /** Longest bearer token accepted, in bytes. */
  readonly maxTokenBytes: number
  /** Principal lifetime for a reviewed ServiceAccount token that carries no readable `exp`. */
  readonly serviceAccountTokenTTL: Duration.Duration
}

/** The product's default audience when `apiFrontend.auth.audience` is unset: the one the platform CR defaults to. */
export const defaultAudience = DefaultGatewayAudience

export class AuthConfig extends Context.Tag("@kubemend/core/AuthConfig")<AuthConfig, AuthConfigShape>() {
  static readonly defaults: AuthConfigShape = {
    providers: [],
    allowInsecureIssuers: false,
    jwksRefreshCooldown: Duration.seconds(30),
    jwksRefreshInterval: Duration.minutes(5),
    jwksStaleTTL: Duration.minutes(10),
    jwksTimeout: Duration.seconds(5),
    clockSkew: Duration.seconds(60),
    maxTokenBytes: 8192,
    serviceAccountTokenTTL: Duration.minutes(5)
  }
  static readonly layer = (overrides: Partial<AuthConfigShape> = {}) => Layer.succeed(AuthConfig, { ...AuthConfig.defaults, ...overrides })
  /** From the current ConfigProvider; the gateway nests it: `AuthConfig.layerConfig(Config.nested(authConfig, "auth"))`. */
  static readonly layerConfig = (config: Config.Config<AuthConfigShape>) => Layer.effect(AuthConfig, config)
}

/** Document 3's `apiFrontend.auth` block. */
export interface FrontendAuth {
  readonly issuerURL?: string
  readonly audience?: string
  readonly jwksURL?: string
  readonly jwtProviders?: ReadonlyArray<JwtProvider>
}

/** The single issuer (named `default`) first, then `jwtProviders[]`. */
export const providersFrom = (auth: FrontendAuth): ReadonlyArray<JwtProvider> => [
  ...(auth.issuerURL === undefined || auth.issuerURL === "" ? [] : [{
    name: "default",
    issuerURL: auth.issuerURL,
    audiences: [auth.audience ?? defaultAudience],
    ...(auth.jwksURL === undefined ? {} : { jwksURL: auth.jwksURL })
  }]),
  ...(auth.jwtProviders ?? [])
]

const optional = <A>(c: Config.Config<A>) => Config.option(c).pipe(Config.map(Option.getOrUndefined))
const clean = <T extends Record<string, unknown>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> }

const providerConfig: Config.Config<JwtProvider> = Config.all({
  name: Config.string("name"),
  issuerURL: Config.string("issuerURL"),
  jwksURL: optional(Config.string("jwksURL")),
  audiences: Config.array(Config.string(), "audiences"),
  claimMappings: optional(
    Config.all({
      username: optional(Config.string("username")),
      groups: optional(Config.string("groups"))
    }).pipe(Config.map(clean), Config.nested("claimMappings"))
  )
}).pipe(Config.map(clean))

/**
 * Reads the `apiFrontend.auth` keys (`issuerURL`, `audience`, `jwksURL`, `jwtProviders`, `allowInsecureIssuers`,
 * Go-duration `jwksRefreshCooldown`/`jwksStaleTTL`) relative to where the caller nests it.
 */
export const authConfig: Config.Config<AuthConfigShape> = Config.all({
  issuerURL: optional(Config.string("issuerURL")),
  audience: optional(Config.string("audience")),
  jwksURL: optional(Config.string("jwksURL")),
  jwtProviders: Config.array(providerConfig, "jwtProviders").pipe(Config.withDefault([] as ReadonlyArray<JwtProvider>)),
  allowInsecureIssuers: Config.boolean("allowInsecureIssuers").pipe(Config.withDefault(false)),
  jwksRefreshCooldown: duration("jwksRefreshCooldown").pipe(Config.withDefault(AuthConfig.defaults.jwksRefreshCooldown)),
  jwksStaleTTL: duration("jwksStaleTTL").pipe(Config.withDefault(AuthConfig.defaults.jwksStaleTTL))
}).pipe(Config.map(({ allowInsecureIssuers, jwksRefreshCooldown, jwksStaleTTL, ...auth }) => ({
  ...AuthConfig.defaults,
  providers: providersFrom(clean(auth)),
  allowInsecureIssuers,
  jwksRefreshCooldown,
  jwksStaleTTL
})))
