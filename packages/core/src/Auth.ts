/**
 * Who is calling: bearer JWTs verified with jose against the keys of the provider named by the token's `iss`, or
 * Kubernetes ServiceAccount tokens checked by TokenReview. Failures are `Unauthenticated` with an audit reason.
 */
import { Clock, ConfigError, Duration, Effect, Either, Layer, Option } from "effect"
import { decodeJwt, jwtVerify } from "jose"
import { AuthConfig } from "./Auth/Config.ts"
import type { JwtProvider } from "./Auth/Config.ts"
import { checkScheme, makeKeyStore } from "./Auth/Jwks.ts"
import type { KeyStore } from "./Auth/Jwks.ts"
import { allowedAlgorithms, bearerToken, hasControlChars, identity, inspect, reasonOf } from "./Auth/Token.ts"
import { DependencyUnavailable, Unauthenticated } from "./Errors.ts"
import { K8s } from "./K8s.ts"

export { AuthConfig, authConfig, defaultAudience, providersFrom } from "./Auth/Config.ts"
export type { AuthConfigShape, ClaimMappings, FrontendAuth, JwtProvider } from "./Auth/Config.ts"
export { Unauthenticated } from "./Errors.ts"

/** An authenticated caller. */
export interface Principal {
  readonly user: string
  readonly groups: ReadonlyArray<string>
  /** The token's `iss`; `kubernetes` for ServiceAccount tokens. */
  readonly issuer: string
  readonly expiresAt: Date
  readonly subject: string
  readonly tokenKind: "jwt" | "serviceaccount"
}

const trimSlash = (u: string) => u.replace(/\/+$/, "")

const validateProviders = (providers: ReadonlyArray<JwtProvider>, allowInsecure: boolean) =>
  Effect.forEach(providers, (p, i) => {
    const bad = [p.issuerURL, ...(p.jwksURL === undefined ? [] : [p.jwksURL])]
      .map((u) => checkScheme(u, allowInsecure))
      .find((m) => m !== undefined) ??
      (p.audiences.length === 0 ? "audiences must not be empty" : undefined)
    return bad === undefined ? Effect.void : Effect.fail(ConfigError.InvalidData(["jwtProviders", String(i)], bad))
  }, { discard: true })

export class Auth extends Effect.Service<Auth>()("@kubemend/core/Auth", {
  effect: Effect.gen(function* () {
    const config = yield* AuthConfig
    const k8s = yield* K8s
    yield* validateProviders(config.providers, config.allowInsecureIssuers)
    const skewSeconds = Duration.toSeconds(config.clockSkew)
    const stores = new Map<string, KeyStore>(config.providers.map((p) => [p.name, makeKeyStore(p, config)]))

    // Several providers may share an issuer (different audiences); the one whose audiences the token names wins.
    const providerFor = (iss: string, aud: ReadonlyArray<string>) => {
      const candidates = config.providers.filter((p) => trimSlash(p.issuerURL) === trimSlash(iss))
      return candidates.find((p) => p.audiences.some((a) => aud.includes(a))) ?? candidates[0]
    }

    const verify = (token: string, provider: JwtProvider, kid: string | undefined, now: number) =>
      Effect.gen(function* () {
        const store = stores.get(provider.name)!
        const keys = yield* store.keys(kid).pipe(
          Effect.mapError((e) => new Unauthenticated({ reason: "jwks_unavailable", detail: e.message }))
        )
        return yield* Effect.tryPromise({
          try: () =>
            jwtVerify(token, keys.set, {
              algorithms: [...allowedAlgorithms],
              audience: [...provider.audiences],
              requiredClaims: ["exp"],
              clockTolerance: skewSeconds,
              currentDate: new Date(now)
            }),
          catch: reasonOf
        })
      })

    const authenticate = Effect.fn("Auth.authenticate")(function* (authorization: string | undefined) {
      const token = yield* bearerToken(authorization, config.maxTokenBytes)
      const unverified = yield* inspect(token)
      const provider = providerFor(unverified.iss, unverified.aud)
      if (provider === undefined) {
        return yield* new Unauthenticated({ reason: "unknown_issuer", detail: `issuer ${unverified.iss} is not configured` })
      }
      const now = yield* Clock.currentTimeMillis
      const { payload } = yield* verify(token, provider, unverified.kid, now)
      // jose grants `exp` the same leeway as `nbf`; expiry is strict here, and `iat` must not be in the future.
      if ((payload.exp as number) * 1000 <= now) {
        return yield* new Unauthenticated({ reason: "token_expired", detail: "token has expired" })
      }
      if (typeof payload.iat === "number" && payload.iat > now / 1000 + skewSeconds) {
        return yield* new Unauthenticated({ reason: "not_yet_valid", detail: "iat is in the future" })
      }
      const who = yield* identity(payload as Record<string, unknown>, provider.claimMappings)
      return {
        user: who.user,
        groups: who.groups,
        issuer: unverified.iss,
        expiresAt: new Date((payload.exp as number) * 1000),
        subject: typeof payload.sub === "string" ? payload.sub : who.user,
        tokenKind: "jwt"
      } satisfies Principal as Principal
    })

    const authenticateServiceAccount = Effect.fn("Auth.authenticateServiceAccount")(function* (
      authorization: string | undefined
    ) {
      const token = yield* bearerToken(authorization, config.maxTokenBytes)
      const reviewed = yield* k8s.tokenReview(token).pipe(
        Effect.mapError((e) => new DependencyUnavailable({ dependency: "kubernetes", detail: `TokenReview failed: ${e.message}` }))
      )
      if (Option.isNone(reviewed)) {
        return yield* new Unauthenticated({ reason: "token_review_failed", detail: "TokenReview did not authenticate the token" })
      }
      const user = reviewed.value
      if (hasControlChars(user.username) || user.groups.some(hasControlChars)) {
        return yield* new Unauthenticated({ reason: "control_chars", detail: "reviewed identity contains control characters" })
      }
      const now = yield* Clock.currentTimeMillis
      // TokenReview already verified the token; its `exp` (when it is a JWT) only bounds how long we trust the answer.
      const exp = Either.getOrUndefined(Either.try(() => decodeJwt(token).exp))
      const fallback = now + Duration.toMillis(config.serviceAccountTokenTTL)
      return {
        user: user.username,
        groups: user.groups,
        issuer: "kubernetes",
        expiresAt: new Date(typeof exp === "number" ? Math.min(exp * 1000, fallback) : fallback),
        subject: user.uid ?? user.username,
        tokenKind: "serviceaccount"
      } satisfies Principal as Principal
    })

    return { authenticate, authenticateServiceAccount }
  })
}) {
  /**
   * For unit tests of callers: each known bearer token maps to a principal; anything else fails the way the real
   * layer would for a missing header or an unverifiable token.
   */
  static readonly layerStatic = (principals: Readonly<Record<string, Principal>>) => {
    const lookup = (authorization: string | undefined) =>
      Effect.flatMap(bearerToken(authorization, AuthConfig.defaults.maxTokenBytes), (token) =>
        Object.hasOwn(principals, token)
          ? Effect.succeed(principals[token]!)
          : Effect.fail(new Unauthenticated({ reason: "invalid_signature", detail: "unknown test token" })))
    return Layer.succeed(Auth, Auth.make({ authenticate: lookup, authenticateServiceAccount: lookup }))
  }
}
