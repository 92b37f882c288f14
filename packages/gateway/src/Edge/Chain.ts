/**
 * The edge chain every protocol route runs before its handler (`POST /mcp` now; `/a2a/invoke`, `/` and the
 * status stream reuse it): Origin allow-list -> per-IP limit (pre-auth) -> bearer token -> per-user limit ->
 * console gate (SAR `use` on `console`). Failures become RFC 7807 problems with the right status (401, 403, 429 +
 * Retry-After, 503) and are audited; nothing past the chain sees an unauthenticated request.
 */
import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Clock, Effect, Option, Redacted } from "effect"
import { createHash } from "node:crypto"
import { Auth, type Principal } from "@kubemend/core/Auth"
import { type DomainError, Forbidden } from "@kubemend/core/Errors"
import { Sar } from "@kubemend/core/Sar"
import { problemResponse } from "@kubemend/core/Wire"
import { GatewayAudit } from "../GatewayAudit.ts"
import { GatewayConfig } from "../GatewayConfig.ts"
import { checkOrigin } from "./Origin.ts"
import { RateLimits } from "./RateLimit.ts"

/** An authenticated, console-admitted caller of one request. */
export interface Caller {
  readonly principal: Principal
  readonly clientIp: string
  /** The bearer token as received: delegated to the agent, never logged. */
  readonly token: Redacted.Redacted<string>
}

/** The address the request came from (IPv4-mapped IPv6 shown as IPv4). */
export const clientIpOf = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => "unknown").replace(/^::ffff:/, "")

/** How long a verified token is reused without a new signature check, in milliseconds. */
const verifiedTokenTTL = 30_000
const verifiedTokenCacheSize = 10_000

const isImpersonation = (name: string) => name.toLowerCase().startsWith("impersonate-")

/**
 * Removes inbound `Impersonate-*` headers from the request itself, so no later reader (handlers, the MCP
 * transport, anything forwarded) can see them. The gateway acts as itself towards the cluster, always.
 */
export const stripImpersonation = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const node = NodeHttpServerRequest.toIncomingMessage(request)
    for (const name of Object.keys(node.headers)) if (isImpersonation(name)) delete node.headers[name]
    return yield* app
  })
)

export class Edge extends Effect.Service<Edge>()("@kubemend/gateway/Edge", {
  effect: Effect.gen(function* () {
    const auth = yield* Auth
    const sar = yield* Sar
    const limits = yield* RateLimits
    const audit = yield* GatewayAudit
    const config = yield* GatewayConfig

    // ServiceAccount tokens are not from a configured issuer; TokenReview vouches for them instead.
    const verify = (header: string | undefined) =>
      auth.authenticate(header).pipe(
        Effect.catchTag("Unauthenticated", (e) =>
          e.reason === "unknown_issuer" ? auth.authenticateServiceAccount(header) : Effect.fail(e))
      )

    // A token verified a moment ago is taken from memory: signature checks dominate the chain's cost, and a
    // client sends the same token on every request. Entries live at most `verifiedTokenTTL` and never past the
    // token's expiry; failures are never kept, so a bad token is checked every time.
    const verified = new Map<string, { readonly principal: Principal; readonly until: number }>()
    const authenticate = (header: string | undefined) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const key = createHash("sha256").update(header ?? "").digest("base64")
        const hit = verified.get(key)
        if (hit !== undefined && hit.until > now) return hit.principal
        const principal = yield* verify(header)
        if (verified.size >= verifiedTokenCacheSize) verified.delete(verified.keys().next().value!)
        verified.set(key, { principal, until: Math.min(now + verifiedTokenTTL, principal.expiresAt.getTime()) })
        return principal
      })

    /** The chain for `endpoint`; succeeds with the caller or fails with the error to answer. */
    const guard = Effect.fn("Edge.guard")(function* (request: HttpServerRequest.HttpServerRequest, endpoint: string) {
      const clientIp = clientIpOf(request)
      yield* checkOrigin(request.headers["origin"], config.allowedOrigins)
      yield* limits.ip(clientIp).pipe(Effect.tapError(() => audit.emit({
        type: "ratelimit.denied", outcome: "failure", clientIp, data: { scope: "ip", endpoint }
      })))
      const header = request.headers["authorization"]
      const principal = yield* authenticate(header).pipe(Effect.tapError((e) =>
        e._tag === "Unauthenticated"
          ? audit.emit({
            type: "auth.failure", outcome: "failure", clientIp,
            data: { auth_method: "jwt", failure_reason: e.reason, endpoint }
          })
          : Effect.void
      ))
      yield* limits.user(principal.user).pipe(Effect.tapError(() => audit.emit({
        type: "ratelimit.denied", outcome: "failure", userId: principal.user, clientIp, data: { scope: "user", endpoint }
      })))
      if (!(yield* sar.check(principal, "console"))) {
        yield* audit.emit({
          type: "auth.access_denied", outcome: "failure", userId: principal.user, clientIp,
          data: { resource: "console", endpoint, groups: principal.groups.join(",") }
        })
        return yield* new Forbidden({ detail: "console access denied: your groups are not granted the console" })
      }
      const token = /^\s*bearer\s+(.*?)\s*$/i.exec(header ?? "")?.[1] ?? ""
      return { principal, clientIp, token: Redacted.make(token) } satisfies Caller as Caller
    })

    /**
     * Runs the chain, then `handler` with the caller; chain failures and domain errors of the handler become
     * problem responses.
     */
    const serve = <E extends DomainError, R>(
      endpoint: string,
      handler: (caller: Caller, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const caller = yield* guard(request, endpoint)
        return yield* handler(caller, request)
      }).pipe(Effect.catchIf(isDomainError, (e) =>
        e._tag === "PayloadTooLarge"
          // The unread rest of an oversized body must not be parsed as the next request.
          ? Effect.map(problemResponse(e), HttpServerResponse.setHeader("connection", "close"))
          : problemResponse(e)))

    return { guard, serve, authenticate } as const
  })
}) {}

const isDomainError = (u: unknown): u is DomainError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof (u as { _tag: unknown })._tag === "string"
