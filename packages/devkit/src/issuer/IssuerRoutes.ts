/**
 * The dev issuer's HTTP surface: OIDC discovery, the JWKS (with injectable faults), `POST /dev/token` and the
 * authorization-code flow (`/authorize`, `/token`, `/logout`, in `CodeFlow.ts`).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { CodeFlow } from "./CodeFlow.ts"

export type JwksFault = "none" | "error" | "garbage" | "hang"

export interface Routes {
  readonly issuer: () => string
  readonly jwks: () => unknown
  readonly fault: () => JwksFault
  readonly mint: (claims: Record<string, unknown>, alg: "RS256" | "ES256") => Promise<string>
  readonly count: (what: "discovery" | "jwks" | "token") => void
  readonly codeFlow: CodeFlow
}

const maxBody = 64 * 1024

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "cache-control": "no-store",
    ...(status === 413 ? { connection: "close" } : {})
  })
  res.end(text)
}

const readBody = (req: IncomingMessage) =>
  new Promise<string | undefined>((resolve) => {
    let size = 0
    const chunks: Array<Buffer> = []
    const onData = (c: Buffer) => {
      size += c.length
      if (size <= maxBody) return chunks.push(c)
      // Stop keeping the body but let it drain, so the client reads the 413 instead of a reset.
      req.off("data", onData)
      req.resume()
      resolve(undefined)
    }
    req.on("data", onData)
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", () => resolve(undefined))
  })

export const handler = (routes: Routes) => (req: IncomingMessage, res: ServerResponse): void => {
  const url = new URL(req.url ?? "/", "http://localhost")
  if (req.method === "GET" && url.pathname === "/.well-known/openid-configuration") {
    routes.count("discovery")
    const issuer = routes.issuer()
    return send(res, 200, {
      issuer,
      jwks_uri: `${issuer}/jwks`,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      end_session_endpoint: `${issuer}/logout`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      scopes_supported: ["openid", "profile", "offline_access"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256", "ES256"]
    })
  }
  if (req.method === "GET" && url.pathname === "/jwks") {
    routes.count("jwks")
    switch (routes.fault()) {
      case "error":
        return send(res, 503, { error: "jwks unavailable (injected)" })
      case "garbage":
        return send(res, 200, "{not json")
      case "hang":
        return // answered never; the server's close destroys the socket
      case "none":
        return send(res, 200, routes.jwks())
    }
  }
  if (req.method === "POST" && url.pathname === "/dev/token") {
    routes.count("token")
    const alg = url.searchParams.get("alg") === "ES256" ? "ES256" : "RS256"
    void readBody(req).then((text) => {
      if (text === undefined) return send(res, 413, { error: "body too large" })
      let claims: unknown
      try {
        claims = text.trim() === "" ? {} : JSON.parse(text)
      } catch {
        return send(res, 400, { error: "body must be a JSON object of claims" })
      }
      if (typeof claims !== "object" || claims === null || Array.isArray(claims)) {
        return send(res, 400, { error: "body must be a JSON object of claims" })
      }
      return routes.mint(claims as Record<string, unknown>, alg).then(
        (token) => send(res, 200, { token }),
        () => send(res, 500, { error: "minting failed" })
      )
    })
    return
  }
  if (req.method === "GET" && url.pathname === "/authorize") return void routes.codeFlow.authorizePage(res, url)
  if (req.method === "GET" && url.pathname === "/logout") return void routes.codeFlow.logout(res, url)
  if (req.method === "POST" && (url.pathname === "/authorize" || url.pathname === "/token")) {
    void readBody(req).then((text) => {
      if (text === undefined) return send(res, 413, { error: "body too large" })
      const form = new URLSearchParams(text)
      if (url.pathname === "/authorize") return routes.codeFlow.authorizeSubmit(res, form)
      return Promise.resolve(routes.codeFlow.token(req, res, form)).catch(() => send(res, 500, { error: "minting failed" }))
    })
    return
  }
  send(res, 404, { error: "not found" })
}
