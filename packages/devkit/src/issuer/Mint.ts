/** Signing and claim defaults of the dev issuer. */
import { Clock, Effect } from "effect"
import { SignJWT } from "jose"
import type { CryptoKey, JWTPayload } from "jose"
import type { DevIdentity } from "@kubemend/core/Personas"
import { personaGroup, personaUser } from "@kubemend/core/Personas"
import type { KeyRing, SigningAlg } from "./Keys.ts"

export type Claims = Record<string, unknown>

export interface MintOptions {
  /** RS256 (default) or ES256, with the issuer's current key of that type. */
  readonly alg?: SigningAlg
  /** Overrides the `kid` header (the signature still uses `key` or the current key). */
  readonly kid?: string
  /** Extra protected header parameters. */
  readonly header?: Record<string, unknown>
  /** Sign with this private key instead of the issuer's. */
  readonly key?: CryptoKey
}

/** Signs exactly `claims`; no defaults are added. */
export const sign = (ring: KeyRing, claims: Claims, options: MintOptions = {}) =>
  Effect.promise(() => {
    const alg = options.alg ?? "RS256"
    const pair = ring.current(alg)
    return new SignJWT(claims as JWTPayload)
      .setProtectedHeader({ typ: "JWT", ...options.header, alg, kid: options.kid ?? pair.kid })
      .sign(options.key ?? pair.privateKey)
  })

export interface Defaults {
  readonly issuer: string
  readonly audience: string
  /** Token lifetime in seconds. */
  readonly lifetime: number
}

/**
 * Fills `sub`, `preferred_username`, `groups`, `aud`, `iss`, `iat` and `exp` (now + lifetime) where `claims` leaves
 * them out; a claim given as `null` is removed (so `{"exp": null}` mints a token without expiry).
 */
export const withDefaults = (claims: Claims, defaults: Defaults) =>
  Effect.map(Clock.currentTimeMillis, (millis): Claims => {
    const now = Math.floor(millis / 1000)
    const name = typeof claims.preferred_username === "string" ?
      claims.preferred_username
      : typeof claims.sub === "string"
      ? claims.sub
      : "dev-user"
    const merged: Claims = {
      sub: name,
      preferred_username: name,
      groups: [],
      aud: defaults.audience,
      iss: defaults.issuer,
      iat: now,
      exp: now + defaults.lifetime,
      ...claims
    }
    return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== null))
  })

/** `<persona>-user` in group `kubemend-<persona>`. */
export const personaClaims = (identity: DevIdentity): Claims => ({
  sub: personaUser(identity),
  preferred_username: personaUser(identity),
  groups: [personaGroup(identity)]
})
