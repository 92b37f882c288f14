/**
 * The key that signs exports: ES256 (EC P-256), from `export.signingKeyFile` (PKCS#8 PEM; the operator mounts it
 * from a Secret, the local platform keeps it in `.local/`). A configured file that does not exist yet is created
 * with a new key, so the key outlives restarts and an old export still verifies; without a file the key lives as
 * long as the process. Two signature forms over the same bytes: a detached compact JWS (`<protected>..<signature>`,
 * RFC 7515 appendix F) for JOSE libraries, and a DER ECDSA-SHA256 signature (base64) that `openssl dgst -verify`
 * checks against the PEM public key.
 */
import { Effect, Option } from "effect"
import * as Jose from "jose"
import { generateKeyPairSync, KeyObject, sign as signWith } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { StorageConfig } from "./StorageConfig.ts"

export const SignatureAlgorithm = "ES256"

export class ExportSigner extends Effect.Service<ExportSigner>()("@kubemend/storage/ExportSigner", {
  effect: Effect.gen(function* () {
    const config = yield* StorageConfig
    const { privateKey, publicKey } = yield* Option.match(config.export.signingKeyFile, {
      onNone: () => Effect.promise(() => Jose.generateKeyPair(SignatureAlgorithm, { extractable: true })),
      onSome: (file) =>
        Effect.promise(async () => {
          const pem = await Fs.readFile(file, "utf8").catch(async (e: NodeJS.ErrnoException) => {
            if (e.code !== "ENOENT") throw e
            const created = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()
            await Fs.mkdir(Path.dirname(file), { recursive: true })
            // `wx`: never overwrite a key another process wrote meanwhile; read back what is there.
            await Fs.writeFile(file, created, { mode: 0o600, flag: "wx" }).catch(() => undefined)
            return Fs.readFile(file, "utf8")
          })
          const privateKey = await Jose.importPKCS8(pem, SignatureAlgorithm, { extractable: true })
          const jwk = await Jose.exportJWK(privateKey)
          const { d: _d, ...pub } = jwk
          return { privateKey, publicKey: await Jose.importJWK(pub, SignatureAlgorithm) }
        })
    })
    const jwk = yield* Effect.promise(() => Jose.exportJWK(publicKey))
    const kid = yield* Effect.promise(() => Jose.calculateJwkThumbprint(jwk))
    const publicJwk = { ...jwk, kid, alg: SignatureAlgorithm, use: "sig" }

    const derKey = KeyObject.from(privateKey as CryptoKey)
    const publicKeyPem = KeyObject.from(publicKey as CryptoKey).export({ type: "spki", format: "pem" }).toString()

    /** DER ECDSA-SHA256 over `body`, base64: what `openssl dgst -sha256 -verify key.pem -signature sig` checks. */
    const signDer = (body: Uint8Array) => Effect.sync(() => signWith("sha256", body, { key: derKey, dsaEncoding: "der" }).toString("base64"))

    /** Detached compact JWS over `body`. */
    const sign = (body: Uint8Array) =>
      Effect.promise(async () => {
        const jws = await new Jose.FlattenedSign(body).setProtectedHeader({ alg: SignatureAlgorithm, kid }).sign(privateKey)
        return `${jws.protected}..${jws.signature}`
      }).pipe(Effect.withSpan("ExportSigner.sign"))

    return { sign, signDer, kid, algorithm: SignatureAlgorithm, jwks: { keys: [publicJwk] }, publicKeyPem } as const
  })
}) {}
