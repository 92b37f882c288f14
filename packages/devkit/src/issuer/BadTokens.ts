/**
 * Tokens a verifier must reject (RELIABILITY.md cases 1–7), all built for the `sre` persona so that only the one
 * flaw differs from a good token.
 */
import { Clock, Effect } from "effect"
import { SignJWT, base64url } from "jose"
import { generate, publicKeyPem } from "./Keys.ts"
import type { KeyPair, KeyRing } from "./Keys.ts"
import { personaClaims, sign, withDefaults } from "./Mint.ts"
import type { Claims, Defaults } from "./Mint.ts"

export interface BadTokens {
  /** `exp` an hour ago. */
  readonly expired: Effect.Effect<string>
  /** `nbf` an hour ahead (far beyond the 60 s skew). */
  readonly futureNbf: Effect.Effect<string>
  /** `iat` an hour ahead. */
  readonly futureIat: Effect.Effect<string>
  /** Signed without `exp`. */
  readonly missingExp: Effect.Effect<string>
  /** `aud` of another service. */
  readonly wrongAudience: Effect.Effect<string>
  /** Signed by this issuer's key but claiming another `iss`. */
  readonly wrongIssuer: Effect.Effect<string>
  /** HS256 with the issuer's RSA public key PEM as the HMAC secret (key confusion). */
  readonly hs256WithPublicKey: Effect.Effect<string>
  /** `alg` none / None / NONE with an empty signature. */
  readonly algNone: (spelling?: string) => Effect.Effect<string>
  /** Signed by a key the JWKS does not hold, under `kid` (default random). */
  readonly unknownKid: (kid?: string) => Effect.Effect<string>
  /** ES256 with r = s = 0 (CVE-2022-21449). */
  readonly psychicEcdsa: Effect.Effect<string>
  /** Signed by an attacker key that is also embedded in the `jwk` header. */
  readonly embeddedJwk: Effect.Effect<string>
  /** Signed by an attacker key whose JWKS is at `url` (`jku`). */
  readonly jku: (url: string) => Effect.Effect<string>
  /** Signed by an attacker key with an `x5u` certificate URL. */
  readonly x5u: (url: string) => Effect.Effect<string>
  /** A good token with its signature removed. */
  readonly emptySignature: Effect.Effect<string>
  /** A good token padded past `bytes` (default 9 KiB) with a filler claim. */
  readonly oversized: (bytes?: number) => Effect.Effect<string>
}

// One attacker key per process: RSA generation is slow and the key's only job is to be unknown to every JWKS.
let attackerKey: Promise<KeyPair> | undefined
const attacker = Effect.suspend(() => {
  attackerKey ??= Effect.runPromise(generate("RS256", "attacker"))
  return Effect.promise(() => attackerKey!)
})

const unsigned = (header: Record<string, unknown>, claims: Claims, signature: string) =>
  `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(claims))}.${signature}`

export const makeBadTokens = (ring: KeyRing, defaults: Defaults): BadTokens => {
  const claims = (extra: Claims = {}) => withDefaults({ ...personaClaims("sre"), ...extra }, defaults)
  const nowSec = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
  const attackerSigned = (header: (jwk: Record<string, unknown>) => Record<string, unknown>) =>
    Effect.gen(function* () {
      const pair = yield* attacker
      return yield* sign(ring, yield* claims(), { key: pair.privateKey, kid: pair.kid, header: header({ ...pair.publicJwk }) })
    })

  return {
    expired: Effect.flatMap(nowSec, (now) => Effect.flatMap(claims({ iat: now - 7200, exp: now - 3600 }), (c) => sign(ring, c))),
    futureNbf: Effect.flatMap(nowSec, (now) => Effect.flatMap(claims({ nbf: now + 3600 }), (c) => sign(ring, c))),
    futureIat: Effect.flatMap(nowSec, (now) => Effect.flatMap(claims({ iat: now + 3600, exp: now + 7200 }), (c) => sign(ring, c))),
    missingExp: Effect.flatMap(claims({ exp: null }), (c) => sign(ring, c)),
    wrongAudience: Effect.flatMap(claims({ aud: "another-service" }), (c) => sign(ring, c)),
    wrongIssuer: Effect.flatMap(claims({ iss: "https://evil.example.com" }), (c) => sign(ring, c)),
    hs256WithPublicKey: Effect.gen(function* () {
      const pem = yield* publicKeyPem(ring.current("RS256"))
      const c = yield* claims()
      return yield* Effect.promise(() =>
        new SignJWT(c).setProtectedHeader({ alg: "HS256", typ: "JWT", kid: ring.current("RS256").kid })
          .sign(new TextEncoder().encode(pem))
      )
    }),
    algNone: (spelling = "none") => Effect.map(claims(), (c) => unsigned({ alg: spelling, typ: "JWT" }, c, "")),
    unknownKid: (kid) =>
      Effect.gen(function* () {
        const pair = yield* attacker
        return yield* sign(ring, yield* claims(), { key: pair.privateKey, kid: kid ?? `unknown-${Math.random().toString(36).slice(2)}` })
      }),
    psychicEcdsa: Effect.map(claims(), (c) => unsigned({ alg: "ES256", typ: "JWT", kid: ring.current("ES256").kid }, c, base64url.encode(new Uint8Array(64)))),
    embeddedJwk: attackerSigned((jwk) => ({ jwk })),
    jku: (url) => attackerSigned(() => ({ jku: url })),
    x5u: (url) => attackerSigned(() => ({ x5u: url })),
    emptySignature: Effect.map(Effect.flatMap(claims(), (c) => sign(ring, c)), (t) => t.slice(0, t.lastIndexOf(".") + 1)),
    oversized: (bytes = 9216) => Effect.flatMap(claims({ filler: "x".repeat(bytes) }), (c) => sign(ring, c))
  }
}
