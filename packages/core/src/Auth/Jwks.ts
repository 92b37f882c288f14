/**
 * One provider's signing keys: discovered or configured JWKS URL, fetched with a deadline, cached, refreshed when old
 * or when a token names an unknown `kid` (at most once per cooldown, so a flood of forged kids makes one request),
 * and kept while the JWKS is unreachable until they are `jwksStaleTTL` old. Time comes from Effect's Clock.
 */
import { Clock, Data, Duration, Effect } from "effect"
import { createLocalJWKSet } from "jose"
import type { AuthConfigShape, JwtProvider } from "./Config.ts"

export type KeySet = ReturnType<typeof createLocalJWKSet>

export class JwksFetchError extends Data.TaggedError("JwksFetchError")<{ readonly url: string; readonly message: string }> {}

/** Largest discovery or JWKS document read. */
const maxDocumentBytes = 1024 * 1024

const trimSlash = (u: string) => u.replace(/\/+$/, "")

const fetchJson = (url: string, timeout: Duration.Duration) =>
  Effect.tryPromise({
    try: async (signal) => {
      const res = await fetch(url, { signal, redirect: "error", headers: { accept: "application/json" } })
      if (!res.ok) throw new Error(`HTTP ${res.status}`)
      const text = await res.text()
      if (text.length > maxDocumentBytes) throw new Error("document too large")
      return JSON.parse(text) as unknown
    },
    catch: (e) => new JwksFetchError({ url, message: e instanceof Error ? e.message : String(e) })
  }).pipe(
    Effect.timeoutFail({ duration: timeout, onTimeout: () => new JwksFetchError({ url, message: "timed out" }) })
  )

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** `http:` only when insecure issuers are allowed. */
export const checkScheme = (url: string, allowInsecure: boolean): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `not a URL: ${url}`
  }
  if (parsed.protocol === "https:") return undefined
  if (parsed.protocol === "http:" && allowInsecure) return undefined
  return `${url} must use https (set allowInsecureIssuers for http)`
}

export interface KeyStore {
  /** Keys to verify a token naming `kid`; a kid the cached set lacks asks for a refresh first (within the cooldown). */
  readonly keys: (kid: string | undefined) => Effect.Effect<{ readonly set: KeySet; readonly kids: ReadonlySet<string> }, JwksFetchError>
}

export const makeKeyStore = (provider: JwtProvider, config: AuthConfigShape): KeyStore => {
  const cooldown = Duration.toMillis(config.jwksRefreshCooldown)
  const interval = Duration.toMillis(config.jwksRefreshInterval)
  const staleTTL = Duration.toMillis(config.jwksStaleTTL)
  const lock = Effect.unsafeMakeSemaphore(1)
  let jwksUri = provider.jwksURL
  let current: { set: KeySet; kids: ReadonlySet<string>; fetchedAt: number } | undefined
  let attemptedAt: number | undefined
  let lastError: JwksFetchError | undefined

  const resolveJwksUri = Effect.gen(function* () {
    if (jwksUri !== undefined) return jwksUri
    const url = `${trimSlash(provider.issuerURL)}/.well-known/openid-configuration`
    const doc = yield* fetchJson(url, config.jwksTimeout)
    if (!isRecord(doc) || typeof doc.jwks_uri !== "string") {
      return yield* new JwksFetchError({ url, message: "discovery document has no jwks_uri" })
    }
    if (typeof doc.issuer !== "string" || trimSlash(doc.issuer) !== trimSlash(provider.issuerURL)) {
      return yield* new JwksFetchError({ url, message: "discovery document names another issuer" })
    }
    const bad = checkScheme(doc.jwks_uri, config.allowInsecureIssuers)
    if (bad !== undefined) return yield* new JwksFetchError({ url, message: bad })
    jwksUri = doc.jwks_uri
    return doc.jwks_uri
  })

  const refresh = (now: number) =>
    Effect.gen(function* () {
      const url = yield* resolveJwksUri
      const doc = yield* fetchJson(url, config.jwksTimeout)
      const set = yield* Effect.try({
        try: () => createLocalJWKSet(doc as Parameters<typeof createLocalJWKSet>[0]),
        catch: () => new JwksFetchError({ url, message: "not a JSON Web Key Set" })
      })
      const kids = new Set<string>()
      for (const k of (doc as { keys: ReadonlyArray<unknown> }).keys) {
        if (isRecord(k) && typeof k.kid === "string") kids.add(k.kid)
      }
      current = { set, kids, fetchedAt: now }
      lastError = undefined
    }).pipe(
      Effect.tapError((e) =>
        Effect.sync(() => {
          lastError = e
        }).pipe(Effect.zipRight(Effect.logWarning(`JWKS refresh for provider ${provider.name} failed: ${e.message}`)))
      )
    )

  const fresh = (now: number, kid: string | undefined) =>
    current !== undefined && now - current.fetchedAt < interval && (kid === undefined || current.kids.has(kid))

  // Fresh keys that know the kid are served without the lock, so a refresh in flight (up to `jwksTimeout`, e.g.
  // triggered by a forged kid) never delays good tokens.
  const keys = (kid: string | undefined) => Effect.flatMap(Clock.currentTimeMillis, (now) => fresh(now, kid) ? Effect.succeed(current!) : locked(kid))

  const locked = (unknownKid: string | undefined) =>
    lock.withPermits(1)(Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const wanted = current === undefined || now - current.fetchedAt >= interval ||
        (unknownKid !== undefined && !current.kids.has(unknownKid))
      const allowed = attemptedAt === undefined || now - attemptedAt >= cooldown
      if (wanted && allowed) {
        attemptedAt = now
        yield* Effect.ignore(refresh(now))
      }
      // Fail closed once the last good keys are too old to trust without a successful refresh.
      if (current === undefined || now - current.fetchedAt > staleTTL) {
        return yield* (lastError ?? new JwksFetchError({ url: jwksUri ?? provider.issuerURL, message: "no keys" }))
      }
      return current
    }))

  return { keys }
}
