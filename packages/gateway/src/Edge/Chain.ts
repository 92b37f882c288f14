/**
 * The edge chain every protocol route runs before its handler, in one place: Origin allow-list -> per-IP limit
 * (pre-auth) -> bearer token -> per-user limit -> console gate (SAR `use` on `console`). `POST /mcp`,
 * `/a2a/invoke` and `/` run all of it (`guard`); the status stream and the access pre-flight stop before the console
 * gate (`identify`); the agent card admits anonymous callers (`identifyOptional`). Failures become RFC 7807
 * problems with the right status (401, 403, 429 + Retry-After, 503) and are audited with the endpoint they hit;
 * nothing past the chain sees an unauthenticated request. A token verified a moment ago costs nothing to check
 * again, so for it the per-IP and per-user limits are taken together, in that order, in one round trip of the shared
 * state.
 */
import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Clock, Effect, Option, Redacted } from "effect"
import { createHash } from "node:crypto"
import { Auth, type Principal } from "@kubemend/core/Auth"
import { type DomainError, Forbidden } from "@kubemend/core/Errors"
import { Sar } from "@kubemend/core/Sar"
import { makeTrustedProxies } from "@kubemend/core/TrustedProxies"
import { problemResponse } from "@kubemend/core/Wire"
import { GatewayAudit } from "../GatewayAudit.ts"
import { GatewayConfig } from "../GatewayConfig.ts"
import { checkOrigin } from "./Origin.ts"
import { RateLimits } from "./RateLimit.ts"

/** An authenticated, console-admitted caller of one request. */
export interface Caller {
  readonly principal: Principal
  readonly clientIp: string
  /**
   * The route the request came in on (`/mcp`, `/a2a/invoke`, `/`, …), for audit events. Always set by the chain;
   * absent only for callers made up outside it (benchmarks, unit tests).
   */
  readonly endpoint?: string
  /** The bearer token as received: delegated to the agent, never logged. */
  readonly token: Redacted.Redacted<string>
}

/**
 * The address the request came from: the socket's peer, or the forwarded client when that peer is a trusted proxy
 * (core `TrustedProxies`).
 */
export const clientIpOf = (request: HttpServerRequest.HttpServerRequest, proxies: ReturnType<typeof makeTrustedProxies>): string =>
  proxies.clientIp(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"]) ?? "unknown"

/** How long a verified token is reused without a new signature check, in milliseconds. */
const verifiedTokenTTL = 30_000
const verifiedTokenCacheSize = 10_000

const isImpersonation = (name: string) => name.toLowerCase().startsWith("impersonate-")

/**
 * Headers by which a proxy or another service could claim who the user is. The gateway believes only the token, so
 * each one a request carries is ignored and audited (`auth.identity_ignored`): someone tried, or a proxy in front
 * is set up to authenticate users, which does not work here.
 */
export const identityHeaders = [
  "x-kubemend-user",
  "x-kubemend-groups",
  "x-forwarded-user",
  "x-forwarded-groups",
  "x-forwarded-email",
  "x-forwarded-preferred-username",
  "x-remote-user",
  "x-remote-group",
  "x-auth-request-user"
] as const

const bearer = (header: string | undefined) => /^\s*bearer\s+(.*?)\s*$/i.exec(header ?? "")?.[1] ?? ""

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
    const proxies = makeTrustedProxies(config.trustedProxyCIDRs)

    // ServiceAccount tokens are not from a configured issuer; TokenReview vouches for them instead.
    const verify = (header: string | undefined) =>
      auth.authenticate(header).pipe(
        Effect.catchTag("Unauthenticated", (e) => e.reason === "unknown_issuer" ? auth.authenticateServiceAccount(header) : Effect.fail(e))
      )

    // A token verified a moment ago is taken from memory: signature checks dominate the chain's cost, and a
    // client sends the same token on every request. Entries live at most `verifiedTokenTTL` and never past the
    // token's expiry; failures are never kept, so a bad token is checked every time.
    const verified = new Map<string, { readonly principal: Principal; readonly until: number }>()
    const keyOf = (header: string | undefined) => createHash("sha256").update(header ?? "").digest("base64")
    /** The principal of `header` when it was verified a moment ago. */
    const remembered = (header: string | undefined) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const hit = verified.get(keyOf(header))
        return hit !== undefined && hit.until > now ? Option.some(hit.principal) : Option.none<Principal>()
      })
    const authenticate = (header: string | undefined) =>
      Effect.gen(function* () {
        const hit = yield* remembered(header)
        if (Option.isSome(hit)) return hit.value
        const principal = yield* verify(header)
        const now = yield* Clock.currentTimeMillis
        if (verified.size >= verifiedTokenCacheSize) verified.delete(verified.keys().next().value!)
        verified.set(keyOf(header), { principal, until: Math.min(now + verifiedTokenTTL, principal.expiresAt.getTime()) })
        return principal
      })

    const limitDenied = (scope: "ip" | "user", clientIp: string, endpoint: string, userId?: string) =>
      audit.emit({
        type: "ratelimit.denied",
        outcome: "failure",
        ...(userId === undefined ? {} : { userId }),
        clientIp,
        data: { scope, endpoint }
      })

    /** Origin and, unless `known` (then `authenticated` limits it with the user), the per-IP limit. */
    const admit = Effect.fn("Edge.admit")(function* (request: HttpServerRequest.HttpServerRequest, endpoint: string, known = false) {
      const clientIp = clientIpOf(request, proxies)
      yield* checkOrigin(request.headers["origin"], config.allowedOrigins).pipe(Effect.tapError(() =>
        audit.emit({
          type: "auth.access_denied",
          outcome: "failure",
          clientIp,
          data: { resource: "origin", endpoint, origin: String(request.headers["origin"]).slice(0, 256) }
        })
      ))
      if (!known) yield* limits.ip(clientIp).pipe(Effect.tapError(() => limitDenied("ip", clientIp, endpoint)))
      return clientIp
    })

    /**
     * Token and per-user limit of an admitted request. With `known` (its token verified a moment ago, so checking it
     * costs nothing) the per-IP limit is taken here too, first, in the same round trip of the shared state.
     */
    const authenticated = (request: HttpServerRequest.HttpServerRequest, endpoint: string, clientIp: string, known = Option.none<Principal>()) =>
      Effect.gen(function* () {
        const header = request.headers["authorization"]
        const principal = Option.isSome(known) ? known.value : yield* authenticate(header).pipe(Effect.tapError((e) =>
          e._tag === "Unauthenticated"
            ? audit.emit({
              type: "auth.failure",
              outcome: "failure",
              clientIp,
              data: { auth_method: "jwt", failure_reason: e.reason, endpoint }
            })
            : Effect.void
        ))
        const both = Option.isSome(known) ? yield* Effect.either(limits.ipAndUser(clientIp, principal.user)) : undefined
        if (both?._tag === "Left" && both.left.scope === "ip") {
          yield* limitDenied("ip", clientIp, endpoint)
          return yield* both.left
        }
        const claimed = identityHeaders.filter((h) => request.headers[h] !== undefined)
        if (claimed.length > 0) {
          yield* audit.emit({
            type: "auth.identity_ignored",
            outcome: "failure",
            userId: principal.user,
            clientIp,
            data: { endpoint, headers: claimed.join(","), claimed: String(request.headers[claimed[0]!]).slice(0, 256) }
          })
        }
        yield* (both === undefined ? limits.user(principal.user) : both).pipe(Effect.tapError(() => limitDenied("user", clientIp, endpoint, principal.user)))
        return { principal, clientIp, endpoint, token: Redacted.make(bearer(header)) } satisfies Caller as Caller
      })

    /** The chain without the console gate: an authenticated caller or the error to answer (401, 403 origin, 429). */
    const identify = Effect.fn("Edge.identify")(function* (request: HttpServerRequest.HttpServerRequest, endpoint: string) {
      const known = yield* remembered(request.headers["authorization"])
      return yield* authenticated(request, endpoint, yield* admit(request, endpoint, Option.isSome(known)), known)
    })

    /**
     * For routes where authentication is optional: the caller when a usable token came with the request, none
     * without a token or with an unusable one. Origin and rate limits still answer their problems.
     */
    const identifyOptional = Effect.fn("Edge.identifyOptional")(function* (
      request: HttpServerRequest.HttpServerRequest,
      endpoint: string
    ) {
      const clientIp = yield* admit(request, endpoint)
      if (request.headers["authorization"] === undefined) return Option.none<Caller>()
      return yield* authenticated(request, endpoint, clientIp).pipe(
        Effect.map(Option.some),
        Effect.catchTag("Unauthenticated", () => Effect.succeed(Option.none<Caller>()))
      )
    })

    /** The console gate's verdict for `principal` (SAR `use` on `console`; a SAR error denies). */
    const consoleAllowed = (principal: Principal) => sar.check(principal, "console")

    /** The full chain for `endpoint`; succeeds with the caller or fails with the error to answer. */
    const guard = Effect.fn("Edge.guard")(function* (request: HttpServerRequest.HttpServerRequest, endpoint: string) {
      const caller = yield* identify(request, endpoint)
      const { principal, clientIp } = caller
      if (!(yield* consoleAllowed(principal))) {
        yield* audit.emit({
          type: "auth.access_denied",
          outcome: "failure",
          userId: principal.user,
          clientIp,
          data: { resource: "console", endpoint, groups: principal.groups.join(",") }
        })
        return yield* new Forbidden({ detail: "console access denied: your groups are not granted the console" })
      }
      return caller
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

    const clientIp = (request: HttpServerRequest.HttpServerRequest) => clientIpOf(request, proxies)
    return { admit, identify, identifyOptional, consoleAllowed, guard, serve, authenticate, clientIp } as const
  })
}) {}

const isDomainError = (u: unknown): u is DomainError => typeof u === "object" && u !== null && "_tag" in u && typeof (u as { _tag: unknown })._tag === "string"
