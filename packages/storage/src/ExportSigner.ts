/**
 * The key that signs exports: ES256 (EC P-256), from `export.signingKeyFile` (PKCS#8 PEM) or generated at start.
 * Signatures are detached compact JWS (`<protected>..<signature>`, RFC 7515 appendix F) over the exact body
 * bytes; the public key is published as a JWKS so any JOSE library can check an export.
 */
import { Effect, Option } from "effect"
import * as Jose from "jose"
import * as Fs from "node:fs/promises"
import { StorageConfig } from "./StorageConfig.ts"

export const SignatureAlgorithm = "ES256"

export class ExportSigner extends Effect.Service<ExportSigner>()("@kubemend/storage/ExportSigner", {
  effect: Effect.gen(function* () {
    const config = yield* StorageConfig
    const { privateKey, publicKey } = yield* Option.match(config.export.signingKeyFile, {
      onNone: () => Effect.promise(() => Jose.generateKeyPair(SignatureAlgorithm, { extractable: true })),
      onSome: (file) =>
        Effect.promise(async () => {
          const pem = await Fs.readFile(file, "utf8")
          const privateKey = await Jose.importPKCS8(pem, SignatureAlgorithm, { extractable: true })
          const jwk = await Jose.exportJWK(privateKey)
          const { d: _d, ...pub } = jwk
          return { privateKey, publicKey: await Jose.importJWK(pub, SignatureAlgorithm) }
        })
    })
    const jwk = yield* Effect.promise(() => Jose.exportJWK(publicKey))
    const kid = yield* Effect.promise(() => Jose.calculateJwkThumbprint(jwk))
    const publicJwk = { ...jwk, kid, alg: SignatureAlgorithm, use: "sig" }

    /** Detached compact JWS over `body`. */
    const sign = (body: Uint8Array) =>
      Effect.promise(async () => {
        const jws = await new Jose.FlattenedSign(body).setProtectedHeader({ alg: SignatureAlgorithm, kid }).sign(privateKey)
        return `${jws.protected}..${jws.signature}`
      }).pipe(Effect.withSpan("ExportSigner.sign"))

    return { sign, kid, algorithm: SignatureAlgorithm, jwks: { keys: [publicJwk] } } as const
  })
}) {}
