/**
 * The console's routes (document 3's proxy): `/oauth2/*` sign-in, callback, sign-out and who is signed in;
 * `/a2a/` to the gateway with a 3600 s timeout and unbuffered SSE, `/mcp` with 30 s, `/.well-known/` unmodified,
 * `/healthz` answered here, and every other GET the single-page app. Every answer carries the security headers.
 */
import { Cookies, HttpApp, HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Unauthenticated } from "@kubemend/core/Errors"
import { ServerConfig } from "@kubemend/core/Servers"
import { ProblemTypeBase, problemResponse } from "@kubemend/core/Wire"
import { Duration, Effect, Option } from "effect"
import { ConsoleConfig, isSecure } from "./ConsoleConfig.ts"
import { forward } from "./Proxy.ts"
import { Sessions } from "./Sessions.ts"
import { loadApp } from "./Static.ts"

/** `script-src 'self'` and nothing inline; the app talks only to this origin. */
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

export const securityHeaders = (https: boolean): Record<string, string> => ({
  "content-security-policy": contentSecurityPolicy,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  ...(https ? { "strict-transport-security": "max-age=31536000; includeSubDomains" } : {})
})

const withCookies = (response: HttpServerResponse.HttpServerResponse, setCookie: ReadonlyArray<string>) =>
  setCookie.length === 0 ? response : HttpServerResponse.mergeCookies(response, Cookies.fromSetCookie(setCookie))

const redirect = (location: string, setCookie: ReadonlyArray<string>) =>
  withCookies(HttpServerResponse.empty({ status: 302, headers: { location, "cache-control": "no-store" } }), setCookie)

const signInFailedPage = (detail: string) => HttpServerResponse.text(`Sign-in failed: ${detail}\n\nOpen /oauth2/sign_in to try again.\n`, { status: 401 })

export const ConsoleRoutes = Effect.gen(function* () {
  const settings = yield* ConsoleConfig
  const sessions = yield* Sessions
  const https = isSecure(settings) || Option.isSome((yield* ServerConfig).tls)
  const headers = securityHeaders(https)
  const problemBase = yield* ProblemTypeBase
  const app = yield* loadApp(settings.staticDir)

  const proxied = (timeout: Duration.Duration, signedIn: "required" | "optional") =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const current = yield* sessions.current(request.headers.cookie)
      if (signedIn === "required" && Option.isNone(current)) {
        return yield* problemResponse(new Unauthenticated({ reason: "missing_header", detail: "sign in to the console first" }))
      }
      const session = Option.getOrUndefined(current)
      const req = NodeHttpServerRequest.toIncomingMessage(request)
      const res = NodeHttpServerRequest.toServerResponse(request)
      yield* Effect.promise(() =>
        forward(req, res, {
          upstream: settings.gatewayURL,
          timeoutMs: Duration.toMillis(timeout),
          bearer: session?.session.accessToken,
          headers: { ...headers, ...(session === undefined || session.setCookie.length === 0 ? {} : { "set-cookie": session.setCookie }) },
          problemBase
        })
      )
      // Written above; the platform only records it.
      return HttpServerResponse.empty()
    })

  const spa = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = new URL(request.url, "http://console").pathname
    const file = app.file(path)
    if (file !== undefined) {
      return HttpServerResponse.uint8Array(file.body, { contentType: file.contentType, headers: { "cache-control": file.cacheControl } })
    }
    if (path.startsWith("/assets/")) return HttpServerResponse.text("not found", { status: 404 })
    if (Option.isNone(yield* sessions.current(request.headers.cookie))) {
      return redirect(`/oauth2/sign_in?rd=${encodeURIComponent(request.url)}`, [])
    }
    if (app.index === undefined) {
      return HttpServerResponse.text("The console's web app is not built: run `npm run build:web -w @kubemend/console`.", { status: 503 })
    }
    return HttpServerResponse.uint8Array(app.index.body, { contentType: app.index.contentType, headers: { "cache-control": "no-cache" } })
  })

  const router = HttpRouter.empty.pipe(
    HttpRouter.get("/healthz", HttpServerResponse.text("ok")),
    HttpRouter.get(
      "/oauth2/sign_in",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const rd = new URL(request.url, "http://console").searchParams.get("rd")
        return yield* sessions.start(rd).pipe(
          Effect.map(({ location, setCookie }) => redirect(location, [setCookie])),
          Effect.catchTag("SignInFailed", (e) => Effect.succeed(signInFailedPage(e.detail).pipe(HttpServerResponse.setStatus(503))))
        )
      })
    ),
    HttpRouter.get(
      "/oauth2/callback",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        return yield* sessions.callback(new URL(request.url, "http://console").search, request.headers.cookie).pipe(
          Effect.map(({ location, setCookie }) => redirect(location, setCookie)),
          Effect.catchTag("SignInFailed", (e) => Effect.succeed(signInFailedPage(e.detail)))
        )
      })
    ),
    HttpRouter.post(
      "/oauth2/sign_out",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { location, setCookie } = yield* sessions.signOut(request.headers.cookie)
        return withCookies(HttpServerResponse.unsafeJson({ location }), setCookie)
      })
    ),
    HttpRouter.get(
      "/oauth2/userinfo",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const current = yield* sessions.current(request.headers.cookie)
        if (Option.isNone(current)) return yield* problemResponse(new Unauthenticated({ reason: "missing_header", detail: "not signed in" }))
        const { session, setCookie } = current.value
        return withCookies(HttpServerResponse.unsafeJson({ user: session.user, groups: session.groups, expiresAt: session.expiresAt }), setCookie)
      })
    ),
    HttpRouter.all("/a2a/*", proxied(settings.a2aTimeout, "required")),
    HttpRouter.all("/mcp", proxied(settings.mcpTimeout, "required")),
    HttpRouter.all("/.well-known/*", proxied(settings.mcpTimeout, "optional")),
    HttpRouter.get("*", spa)
  )

  /** The security headers on the answers the platform writes (the proxy writes its own). */
  const secured = HttpMiddleware.make((inner) =>
    Effect.gen(function* () {
      yield* HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))
      return yield* inner
    })
  )
  return router.pipe(secured)
})
