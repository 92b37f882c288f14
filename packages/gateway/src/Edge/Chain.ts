/**
 * The edge chain every protocol route runs before its handler, in one place: Origin allow-list -> per-IP limit
 * (pre-auth) -> bearer token -> per-user limit -> console gate (SAR `use` on `console`). `POST /mcp`,
 * `/a2a/invoke` and `/` run all of it (`guard`); the status stream and the access pre-flight stop before the console
 * gate (`identify`); the agent card admits anonymous callers (`identifyOptional`). Failures become RFC 7807
 * problems with the right status (401, 403, 429 + Retry-After, 503) and are audited with the endpoint they hit;
 * nothing past the chain sees an unauthenticated request. A token verified a moment ago costs nothing to check
 * again, so for it the per-IP and per-user limits are taken together, in that order, in one round trip of the shared
 * state. A route may read the request first (`serveRead`, for `POST /mcp`): after the token, before the limits, so
 * that a `tools/call` also takes its tool-call token in that round trip (`RateLimits.withToolCall`); what the read
 * refuses is answered by the handler, after the limits and the console gate, as if it had read the request itself.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Either, Option, Redacted, type Scope } from "effect"
import { createHash } from "node:crypto"
import { Auth, type Principal } from "@kubemend/core/Auth"
import { type DomainError, Forbidden } from "@kubemend/core/Errors"
import { Sar } from "@kubemend/core/Sar"
import { makeTrustedProxies } from "@kubemend/core/TrustedProxies"
import { problemResponse } from "@kubemend/core/Wire"
import type { Caller } from "../Caller.ts"
import { GatewayAudit } from "../GatewayAudit.ts"
import { GatewayConfig } from "../GatewayConfig.ts"
import { RateLimits } from "../Limits/RateLimits.ts"
import { bearer, clientIpOf, identityHeaders } from "./Headers.ts"
import { checkOrigin } from "./Origin.ts"

/** What a route reads of a request before its limits are taken (`Edge.serveRead`). */
export interface Read<I> {
  /** What the handler gets: the route's own answer to refusals it found, if any. */
  readonly input: I
  /** A single `tools/call`: its tool-call token is taken with the request's own limits. */
  readonly toolCall: boolean
}

const readNothing = () => Effect.succeed<Read<undefined>>({ input: undefined, toolCall: false })

/** How long a verified token is reused without a new signature check, in milliseconds. */
const verifiedTokenTTL = 30_000
const verifiedTokenCacheSize = 10_000

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
     * Token, `read` and per-user limit of an admitted request. With `known` (its token verified a moment ago, so
     * checking it costs nothing) the per-IP limit is taken here too, first, in the same round trip of the shared
     * state, and so is a tool call's token when `read` found one.
     */
    const authenticated = <I>(
      request: HttpServerRequest.HttpServerRequest,
      endpoint: string,
      clientIp: string,
      known: Option.Option<Principal>,
      read: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Read<I>>
    ) =>
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
        const { input, toolCall } = yield* read(request)
        const address = Option.isSome(known) ? clientIp : undefined
        const taken = yield* Effect.either(
          toolCall
            ? Effect.map(limits.withToolCall(address, principal.user), Option.some)
            : Effect.as(address === undefined ? limits.user(principal.user) : limits.ipAndUser(address, principal.user), Option.none())
        )
        if (Either.isLeft(taken) && taken.left.scope === "ip") {
          yield* limitDenied("ip", clientIp, endpoint)
          return yield* taken.left
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
        if (Either.isLeft(taken)) {
          yield* limitDenied("user", clientIp, endpoint, principal.user)
          return yield* taken.left
        }
        const caller: Caller = {
          principal,
          clientIp,
          endpoint,
          token: Redacted.make(bearer(header)),
          ...Option.match(taken.right, { onNone: () => ({}), onSome: (prepaidToolCall) => ({ prepaidToolCall }) })
        }
        return { caller, input } as const
      })

    /** Origin, token, `read` and limits: the caller and what was read, or the error to answer (401, 403 origin, 429). */
    const identifyReading = <I>(
      request: HttpServerRequest.HttpServerRequest,
      endpoint: string,
      read: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Read<I>>
    ) =>
      Effect.gen(function* () {
        const known = yield* remembered(request.headers["authorization"])
        return yield* authenticated(request, endpoint, yield* admit(request, endpoint, Option.isSome(known)), known, read)
      })

    /** The chain without the console gate: an authenticated caller or the error to answer (401, 403 origin, 429). */
    const identify = Effect.fn("Edge.identify")(function* (request: HttpServerRequest.HttpServerRequest, endpoint: string) {
      // Nothing read, no tool-call token: nothing to give back later.
      return (yield* Effect.scoped(identifyReading(request, endpoint, readNothing))).caller
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
      return yield* Effect.scoped(authenticated(request, endpoint, clientIp, Option.none(), readNothing)).pipe(
        Effect.map(({ caller }) => Option.some(caller)),
        Effect.catchTag("Unauthenticated", () => Effect.succeed(Option.none<Caller>()))
      )
    })

    /** The console gate's verdict for `principal` (SAR `use` on `console`; a SAR error denies). */
    const consoleAllowed = (principal: Principal) => sar.check(principal, "console")

    /**
     * The full chain for `endpoint`; succeeds with the caller and what `read` read, or fails with the error to
     * answer. A tool-call token taken with the limits goes back when the scope closes unless the call claimed it.
     */
    const guard = <I>(
      request: HttpServerRequest.HttpServerRequest,
      endpoint: string,
      read: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Read<I>>
    ): Effect.Effect<{ readonly caller: Caller; readonly input: I }, DomainError, Scope.Scope> =>
      Effect.gen(function* () {
        const { caller, input } = yield* identifyReading(request, endpoint, read)
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
        return { caller, input } as const
      }).pipe(Effect.withSpan("Edge.guard"))

    /**
     * Runs the chain with `read` in it (see the top of this file), then `handler` with the caller and what was
     * read; chain failures and domain errors of the handler become problem responses. The request's scope (and so
     * its tool-call token, see `guard`) ends with the handler.
     */
    const serveRead = <I, E extends DomainError, R>(
      endpoint: string,
      read: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Read<I>>,
      handler: (caller: Caller, request: HttpServerRequest.HttpServerRequest, input: I) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { caller, input } = yield* guard(request, endpoint, read)
        return yield* handler(caller, request, input)
      }).pipe(
        Effect.scoped,
        Effect.catchIf(isDomainError, (e) =>
          e._tag === "PayloadTooLarge"
            // The unread rest of an oversized body must not be parsed as the next request.
            ? Effect.map(problemResponse(e), HttpServerResponse.setHeader("connection", "close"))
            : problemResponse(e))
      )

    /** `serveRead` for a route that reads nothing before its limits. */
    const serve = <E extends DomainError, R>(
      endpoint: string,
      handler: (caller: Caller, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) => serveRead(endpoint, readNothing, (caller, request) => handler(caller, request))

    const clientIp = (request: HttpServerRequest.HttpServerRequest) => clientIpOf(request, proxies)
    return { admit, identify, identifyOptional, consoleAllowed, serve, serveRead, authenticate, clientIp } as const
  })
}) {}

const isDomainError = (u: unknown): u is DomainError => typeof u === "object" && u !== null && "_tag" in u && typeof (u as { _tag: unknown })._tag === "string"
