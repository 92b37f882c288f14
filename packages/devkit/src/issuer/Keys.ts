/**
 * The dev issuer's signing keys: one RS256 and one ES256 pair at a time, rotated on demand, with the previous
 * public keys optionally kept in the JWKS (the way a real IdP overlaps keys during rotation).
 */
import { Effect } from "effect"
import { exportJWK, exportSPKI, generateKeyPair } from "jose"
import type { CryptoKey, JWK } from "jose"

export type SigningAlg = "RS256" | "ES256"

export interface KeyPair {
  readonly alg: SigningAlg
  readonly kid: string
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
  readonly publicJwk: JWK
}

let serial = 0
const newKid = (alg: SigningAlg) => `${alg.toLowerCase()}-${Date.now().toString(36)}-${(serial++).toString(36)}`

export const generate = (alg: SigningAlg, kid: string = newKid(alg)) =>
  Effect.promise(async (): Promise<KeyPair> => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
    const jwk = await exportJWK(publicKey)
    return { alg, kid, privateKey, publicKey, publicJwk: { ...jwk, kid, alg, use: "sig" } }
  })

export const publicKeyPem = (pair: KeyPair) => Effect.promise(() => exportSPKI(pair.publicKey))

export interface KeyRing {
  readonly current: (alg: SigningAlg) => KeyPair
  readonly jwks: () => { readonly keys: ReadonlyArray<JWK> }
  /** New RS256 and ES256 keys; the old public keys stay in the JWKS only when `keepOld`. */
  readonly rotate: (options?: { readonly keepOld?: boolean }) => Effect.Effect<void>
}

export const makeKeyRing = Effect.gen(function* () {
  let active = { RS256: yield* generate("RS256"), ES256: yield* generate("ES256") }
  let retired: ReadonlyArray<JWK> = []
  const ring: KeyRing = {
    current: (alg) => active[alg],
    jwks: () => ({ keys: [active.RS256.publicJwk, active.ES256.publicJwk, ...retired] }),
    rotate: (options) =>
      Effect.gen(function* () {
        const next = { RS256: yield* generate("RS256"), ES256: yield* generate("ES256") }
        retired = options?.keepOld === true ? [active.RS256.publicJwk, active.ES256.publicJwk, ...retired] : []
        active = next
      })
  }
  return ring
})
