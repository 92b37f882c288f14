/**
 * The dev issuer's authorization-code flow with PKCE (S256), so a console logs in as it would at a real identity
 * provider: `GET /authorize` shows a page listing the dev identities, picking one redirects back with a code,
 * `POST /token` trades it (client secret basic or post, the PKCE verifier, the same redirect URI) for an access
 * token (the persona's, audience as `/dev/token`), an ID token for the client and a refresh token, and takes
 * `grant_type=refresh_token`. `GET /logout` forgets nothing (tokens are stateless) and redirects back.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { type DevIdentity, noConsole, personas } from "@kubemend/core/Personas"

export const identities: ReadonlyArray<DevIdentity> = [...personas, noConsole]

export interface CodeFlowRoutes {
  readonly issuer: () => string
  /** The identity's access token. */
  readonly access: (identity: DevIdentity) => Promise<string>
  /** An ID token for `clientId` (audience), with the nonce when the request had one. */
  readonly idToken: (identity: DevIdentity, clientId: string, nonce: string | undefined) => Promise<string>
  readonly lifetimeSeconds: number
  /** Registered clients (id -> secret); unset accepts any client id and secret. */
  readonly clients: Readonly<Record<string, string>> | undefined
}

interface Grant {
  readonly identity: DevIdentity
  readonly clientId: string
  readonly redirectUri: string
  readonly challenge: string
  readonly nonce: string | undefined
  readonly expires: number
}

const codeLifetimeMs = 60_000

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
  res.end(JSON.stringify(body))
}

const oauthError = (res: ServerResponse, status: number, error: string, description: string) => json(res, status, { error, error_description: description })

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a), y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** The client from `Authorization: Basic` or the form's `client_id` / `client_secret`. */
const clientOf = (req: IncomingMessage, form: URLSearchParams) => {
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "")
  if (basic !== null) {
    const [id = "", secret = ""] = Buffer.from(basic[1]!, "base64").toString("utf8").split(":").map(decodeURIComponent)
    return { id, secret }
  }
  return { id: form.get("client_id") ?? "", secret: form.get("client_secret") ?? "" }
}

const page = (url: URL) => {
  const hidden = [...url.searchParams.entries()]
    .map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`).join("")
  const buttons = identities
    .map((p) => `<li><button type="submit" name="persona" value="${p}">${p}</button></li>`).join("")
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Kubemend dev login</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Kubemend dev issuer</h1><p>Sign in as one of the dev personas.</p>
<form method="post" action="/authorize">${hidden}<ul>${buttons}</ul></form></main></body></html>`
}

export const makeCodeFlow = (routes: CodeFlowRoutes) => {
  const codes = new Map<string, Grant>()
  const refreshTokens = new Map<string, { readonly identity: DevIdentity; readonly clientId: string }>()

  const knownClient = (id: string) => id !== "" && (routes.clients === undefined || id in routes.clients)

  /** What a bad authorization request gets: an error page, never a redirect to an unchecked URI. */
  const checkAuthorize = (params: URLSearchParams): string | undefined => {
    if (params.get("response_type") !== "code") return "response_type must be code"
    if (!knownClient(params.get("client_id") ?? "")) return "unknown client_id"
    const redirect = params.get("redirect_uri") ?? ""
    if (!URL.canParse(redirect)) return "redirect_uri must be an absolute URL"
    if (params.get("code_challenge_method") !== "S256" || (params.get("code_challenge") ?? "") === "") {
      return "PKCE with code_challenge_method=S256 is required"
    }
    return undefined
  }

  const authorizePage = (res: ServerResponse, url: URL) => {
    const problem = checkAuthorize(url.searchParams)
    if (problem !== undefined) return oauthError(res, 400, "invalid_request", problem)
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; form-action 'self' http: https:; style-src 'unsafe-inline'",
      "x-frame-options": "DENY"
    })
    res.end(page(url))
  }

  const authorizeSubmit = (res: ServerResponse, form: URLSearchParams) => {
    const problem = checkAuthorize(form)
    if (problem !== undefined) return oauthError(res, 400, "invalid_request", problem)
    const identity = identities.find((p) => p === form.get("persona"))
    if (identity === undefined) return oauthError(res, 400, "invalid_request", "pick one of the listed personas")
    const code = randomBytes(24).toString("base64url")
    const redirectUri = form.get("redirect_uri")!
    codes.set(code, {
      identity,
      clientId: form.get("client_id")!,
      redirectUri,
      challenge: form.get("code_challenge")!,
      nonce: form.get("nonce") ?? undefined,
      expires: Date.now() + codeLifetimeMs
    })
    const back = new URL(redirectUri)
    back.searchParams.set("code", code)
    const state = form.get("state")
    if (state !== null) back.searchParams.set("state", state)
    back.searchParams.set("iss", routes.issuer())
    res.writeHead(302, { location: back.toString(), "cache-control": "no-store" })
    res.end()
  }

  const issue = async (res: ServerResponse, identity: DevIdentity, clientId: string, nonce: string | undefined) => {
    const refresh = randomBytes(32).toString("base64url")
    refreshTokens.set(refresh, { identity, clientId })
    json(res, 200, {
      access_token: await routes.access(identity),
      id_token: await routes.idToken(identity, clientId, nonce),
      refresh_token: refresh,
      token_type: "Bearer",
      expires_in: routes.lifetimeSeconds,
      scope: "openid"
    })
  }

  const token = (req: IncomingMessage, res: ServerResponse, form: URLSearchParams): Promise<void> | void => {
    const client = clientOf(req, form)
    const registered = routes.clients?.[client.id]
    if (!knownClient(client.id) || (registered !== undefined && !sameSecret(registered, client.secret))) {
      return oauthError(res, 401, "invalid_client", "client authentication failed")
    }
    const grantType = form.get("grant_type")
    if (grantType === "refresh_token") {
      const held = refreshTokens.get(form.get("refresh_token") ?? "")
      if (held === undefined || held.clientId !== client.id) return oauthError(res, 400, "invalid_grant", "unknown refresh token")
      return issue(res, held.identity, client.id, undefined)
    }
    if (grantType !== "authorization_code") return oauthError(res, 400, "unsupported_grant_type", "authorization_code or refresh_token")
    const code = form.get("code") ?? ""
    const grant = codes.get(code)
    codes.delete(code) // one use, whatever the outcome
    if (grant === undefined || grant.expires < Date.now()) return oauthError(res, 400, "invalid_grant", "unknown or expired code")
    if (grant.clientId !== client.id || grant.redirectUri !== form.get("redirect_uri")) {
      return oauthError(res, 400, "invalid_grant", "client_id or redirect_uri differ from the authorization request")
    }
    const verifier = form.get("code_verifier") ?? ""
    if (createHash("sha256").update(verifier).digest("base64url") !== grant.challenge) {
      return oauthError(res, 400, "invalid_grant", "code_verifier does not match the code_challenge")
    }
    return issue(res, grant.identity, client.id, grant.nonce)
  }

  const logout = (res: ServerResponse, url: URL) => {
    const back = url.searchParams.get("post_logout_redirect_uri")
    if (back !== null && URL.canParse(back)) {
      res.writeHead(302, { location: back, "cache-control": "no-store" })
      return res.end()
    }
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
    res.end("signed out")
  }

  return { authorizePage, authorizeSubmit, token, logout } as const
}

export type CodeFlow = ReturnType<typeof makeCodeFlow>
