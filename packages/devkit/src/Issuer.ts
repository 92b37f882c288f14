/**
 * Dev OIDC issuer on loopback: discovery, a JWKS with an RS256 and an ES256 key (rotated on demand), token minting
 * for the personas and arbitrary claims, bad-token helpers, `POST /dev/token` for people and other languages, and
 * the authorization-code flow with PKCE and a persona-picking login page (for the console).
 * Token times come from Effect's Clock, so a test under TestClock mints tokens that agree with its verifier.
 */
import { Context, Effect, Layer, Runtime } from "effect"
import { defaultAudience } from "@kubemend/core/Auth/Config"
import type { DevIdentity } from "@kubemend/core/Personas"
import { makeBadTokens } from "./issuer/BadTokens.ts"
import { makeCodeFlow } from "./issuer/CodeFlow.ts"
import type { BadTokens } from "./issuer/BadTokens.ts"
import { handler } from "./issuer/IssuerRoutes.ts"
import type { JwksFault } from "./issuer/IssuerRoutes.ts"
import { makeKeyRing } from "./issuer/Keys.ts"
import type { KeyPair, SigningAlg } from "./issuer/Keys.ts"
import { personaClaims, sign, withDefaults } from "./issuer/Mint.ts"
import type { Claims, MintOptions } from "./issuer/Mint.ts"
import { listenScoped } from "./Listen.ts"

export type { BadTokens } from "./issuer/BadTokens.ts"
export type { JwksFault } from "./issuer/IssuerRoutes.ts"
export type { KeyPair, SigningAlg } from "./issuer/Keys.ts"
export type { Claims, MintOptions } from "./issuer/Mint.ts"

export interface DevIssuerOptions {
  /** Default 127.0.0.1. */
  readonly host?: string
  /** Default 0 (any free port). */
  readonly port?: number
  /** Default `aud` of minted tokens; default `kubemend`. */
  readonly audience?: string
  /** Lifetime of minted tokens in seconds; default 3600. */
  readonly lifetimeSeconds?: number
  /** OAuth clients of the code flow (id -> secret); unset accepts any client. */
  readonly clients?: Readonly<Record<string, string>>
}

export interface RequestCounts {
  readonly discovery: number
  readonly jwks: number
  readonly token: number
}

export interface DevIssuerService {
  /** The `iss` of minted tokens, e.g. `http://127.0.0.1:41234`. */
  readonly url: string
  readonly jwksUrl: string
  readonly audience: string
  /** Signs exactly these claims. */
  readonly sign: (claims: Claims, options?: MintOptions) => Effect.Effect<string>
  /** Fills the defaults (see `withDefaults`) and signs, as `POST /dev/token` does. */
  readonly token: (claims?: Claims, options?: MintOptions) => Effect.Effect<string>
  /** A token for `<identity>-user` in group `kubemend-<identity>`; `extra` claims override. */
  readonly persona: (identity: DevIdentity, extra?: Claims, options?: MintOptions) => Effect.Effect<string>
  readonly bad: BadTokens
  /** New keys; old public keys stay published only with `keepOld`. */
  readonly rotate: (options?: { readonly keepOld?: boolean }) => Effect.Effect<void>
  readonly currentKey: (alg: SigningAlg) => Effect.Effect<KeyPair>
  /** Make the JWKS endpoint fail (503), answer garbage, or never answer. */
  readonly setJwksFault: (fault: JwksFault) => Effect.Effect<void>
  readonly requests: Effect.Effect<RequestCounts>
}

export const make = (options: DevIssuerOptions = {}) =>
  Effect.gen(function* () {
    const ring = yield* makeKeyRing
    const runtime = yield* Effect.runtime<never>()
    const counts = { discovery: 0, jwks: 0, token: 0 }
    let fault: JwksFault = "none"
    let issuer = ""
    const audience = options.audience ?? defaultAudience
    const defaults = () => ({ issuer, audience, lifetime: options.lifetimeSeconds ?? 3600 })
    const token = (claims: Claims = {}, mintOptions?: MintOptions) => Effect.flatMap(withDefaults(claims, defaults()), (c) => sign(ring, c, mintOptions))

    const listening = yield* listenScoped(
      handler({
        issuer: () => issuer,
        jwks: ring.jwks,
        fault: () => fault,
        mint: (claims, alg) => Runtime.runPromise(runtime)(token(claims, { alg })),
        count: (what) => {
          counts[what]++
        },
        codeFlow: makeCodeFlow({
          issuer: () => issuer,
          access: (identity) => Runtime.runPromise(runtime)(token(personaClaims(identity))),
          idToken: (identity, clientId, nonce) =>
            Runtime.runPromise(runtime)(token({ ...personaClaims(identity), aud: clientId, ...(nonce === undefined ? {} : { nonce }) })),
          lifetimeSeconds: options.lifetimeSeconds ?? 3600,
          clients: options.clients
        })
      }),
      options
    )
    issuer = listening.url

    const service: DevIssuerService = {
      url: issuer,
      jwksUrl: `${issuer}/jwks`,
      audience,
      sign: (claims, mintOptions) => sign(ring, claims, mintOptions),
      token,
      persona: (identity, extra = {}, mintOptions) => token({ ...personaClaims(identity), ...extra }, mintOptions),
      bad: makeBadTokens(ring, defaults()),
      rotate: ring.rotate,
      currentKey: (alg) => Effect.sync(() => ring.current(alg)),
      setJwksFault: (f) =>
        Effect.sync(() => {
          fault = f
        }),
      requests: Effect.sync(() => ({ ...counts }))
    }
    return service
  })

export class DevIssuer extends Context.Tag("@kubemend/core/devkit/DevIssuer")<DevIssuer, DevIssuerService>() {
  static readonly layer = (options: DevIssuerOptions = {}) => Layer.scoped(DevIssuer, make(options))
}
