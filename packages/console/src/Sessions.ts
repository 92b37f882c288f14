/**
 * Sign-in, the session and sign-out, through `openid-client` (authorization code with PKCE and nonce, a confidential
 * client). The tokens live only inside the sealed session cookie: the browser never sees one, the proxy takes the
 * access token out of it. A token about to expire is refreshed and the cookie rewritten on the same answer.
 */
import { Data, Duration, Effect, Option, Redacted } from "effect"
import * as client from "openid-client"
import { ConsoleConfig, isSecure, publicOrigin } from "./ConsoleConfig.ts"
import { clearCookie, loginCookie, makeSealer, parseCookies, readCookie, sessionCookie, writeCookie } from "./Cookies.ts"

export interface Session {
  readonly accessToken: string
  readonly refreshToken: string | undefined
  /** Access token expiry, Unix seconds. */
  readonly expiresAt: number
  readonly user: string
  readonly groups: ReadonlyArray<string>
}

export class SignInFailed extends Data.TaggedError("SignInFailed")<{ readonly detail: string }> {}

const loginMaxAge = 600

/** Only a path on this console: `/x`, never `//host` or an absolute URL. */
const localPath = (rd: string | null) => (rd !== null && /^\/(?![/\\])/.test(rd) ? rd : "/")

const claimsOf = (tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers) => {
  const claims = tokens.claims()
  const user = typeof claims?.preferred_username === "string" ? claims.preferred_username : String(claims?.sub ?? "")
  const groups = Array.isArray(claims?.groups) ? claims.groups.filter((g): g is string => typeof g === "string") : []
  return { user, groups }
}

export class Sessions extends Effect.Service<Sessions>()("@kubemend/console/Sessions", {
  effect: Effect.gen(function* () {
    const settings = yield* ConsoleConfig
    const sealer = makeSealer(Redacted.value(settings.cookieSecret))
    const cookieOptions = { secure: isSecure(settings) }
    const scope = "openid profile offline_access"

    // Discovery once it succeeds; a failure is retried on the next sign-in (the issuer may start after us).
    let discovered: Promise<client.Configuration> | undefined
    const configuration = Effect.tryPromise({
      try: () => {
        discovered ??= client.discovery(
          new URL(settings.issuerURL),
          settings.clientId,
          undefined,
          client.ClientSecretPost(Redacted.value(settings.clientSecret)),
          new URL(settings.issuerURL).protocol === "http:" ? { execute: [client.allowInsecureRequests] } : undefined
        ).catch((e: unknown) => {
          discovered = undefined
          throw e
        })
        return discovered
      },
      catch: (e) => new SignInFailed({ detail: `the identity provider's discovery failed: ${String(e)}` })
    })

    const sessionCookies = (cookies: Map<string, string>, tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers, previous?: Session) =>
      Effect.promise(async () => {
        const { user, groups } = tokens.id_token === undefined && previous !== undefined ? previous : claimsOf(tokens)
        const expiresAt = Math.floor(Date.now() / 1000) + (tokens.expiresIn() ?? 300)
        const refreshToken = tokens.refresh_token ?? previous?.refreshToken
        const maxAge = refreshToken === undefined ? expiresAt - Math.floor(Date.now() / 1000) : Duration.toSeconds(settings.sessionLifetime)
        const session: Session = { accessToken: tokens.access_token, refreshToken, expiresAt, user, groups }
        const sealed = await sealer.seal({ s: session }, maxAge)
        return { session, setCookie: writeCookie(cookies, sessionCookie, sealed, maxAge, cookieOptions) }
      })

    /** The IdP's authorization URL and the login cookie holding the PKCE verifier, state, nonce and return path. */
    const start = (rd: string | null) =>
      Effect.gen(function* () {
        const config = yield* configuration
        const verifier = client.randomPKCECodeVerifier()
        const state = client.randomState()
        const nonce = client.randomNonce()
        const challenge = yield* Effect.promise(() => client.calculatePKCECodeChallenge(verifier))
        const location = client.buildAuthorizationUrl(config, {
          redirect_uri: settings.redirectURL,
          scope,
          code_challenge: challenge,
          code_challenge_method: "S256",
          state,
          nonce
        })
        const sealed = yield* Effect.promise(() => sealer.seal({ verifier, state, nonce, rd: localPath(rd) }, loginMaxAge))
        return {
          location: location.toString(),
          setCookie: `${loginCookie}=${sealed}; Path=/oauth2; Max-Age=${loginMaxAge}; HttpOnly; SameSite=Lax${cookieOptions.secure ? "; Secure" : ""}`
        }
      })

    /** Trades the code for tokens (checking state, nonce and PKCE) and answers the session cookie and where to go. */
    const callback = (search: string, cookieHeader: string | undefined) =>
      Effect.gen(function* () {
        const cookies = parseCookies(cookieHeader)
        const login = yield* Effect.promise(() => sealer.open(cookies.get(loginCookie)))
        if (login === undefined) return yield* new SignInFailed({ detail: "the sign-in took too long or was started elsewhere; sign in again" })
        const config = yield* configuration
        const current = new URL(settings.redirectURL)
        current.search = search
        const tokens = yield* Effect.tryPromise({
          try: () =>
            client.authorizationCodeGrant(config, current, {
              pkceCodeVerifier: String(login.verifier),
              expectedState: String(login.state),
              expectedNonce: String(login.nonce),
              idTokenExpected: true
            }),
          catch: (e) => new SignInFailed({ detail: e instanceof Error ? e.message : String(e) })
        })
        const { session, setCookie } = yield* sessionCookies(cookies, tokens)
        const clearLogin = `${loginCookie}=; Path=/oauth2; Max-Age=0; HttpOnly; SameSite=Lax${cookieOptions.secure ? "; Secure" : ""}`
        return { session, location: String(login.rd), setCookie: [...setCookie, clearLogin] }
      })

    /**
     * The request's session, refreshed when its access token expires within `refreshBefore` (then `setCookie`
     * carries the new cookie). None when there is no valid cookie, or the token expired and could not be refreshed.
     */
    const current = (cookieHeader: string | undefined) =>
      Effect.gen(function* () {
        const cookies = parseCookies(cookieHeader)
        const opened = yield* Effect.promise(() => sealer.open(readCookie(cookies, sessionCookie)))
        if (opened === undefined) return Option.none()
        const session = opened.s as Session
        const now = Math.floor(Date.now() / 1000)
        const fresh = Option.some({ session, setCookie: [] as Array<string> })
        if (session.expiresAt - now > Duration.toSeconds(settings.refreshBefore)) return fresh
        const refreshed = session.refreshToken === undefined ? Option.none() : yield* Effect.option(Effect.gen(function* () {
          const config = yield* configuration
          const tokens = yield* Effect.tryPromise(() => client.refreshTokenGrant(config, session.refreshToken!))
          return yield* sessionCookies(cookies, tokens, session)
        }))
        if (Option.isSome(refreshed)) return refreshed
        yield* Effect.logWarning("session refresh failed").pipe(Effect.annotateLogs("user", session.user))
        return session.expiresAt > now ? fresh : Option.none()
      })

    /** Clears the session; answers where the browser goes next (the IdP's end-session endpoint when it has one). */
    const signOut = (cookieHeader: string | undefined) =>
      Effect.gen(function* () {
        const cookies = parseCookies(cookieHeader)
        const setCookie = clearCookie(cookies, sessionCookie, cookieOptions)
        const back = `${publicOrigin(settings)}/`
        const config = yield* Effect.option(configuration)
        const location = Option.match(config, {
          onNone: () => back,
          onSome: (c) =>
            c.serverMetadata().end_session_endpoint === undefined
              ? back
              : client.buildEndSessionUrl(c, { post_logout_redirect_uri: back, client_id: settings.clientId }).toString()
        })
        return { location, setCookie }
      })

    return { start, callback, current, signOut, discover: configuration } as const
  })
}) {}
