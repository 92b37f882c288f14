/**
 * The edge chain without the console gate, for the routes that must not apply it: the status stream ("every
 * authenticated user may subscribe"), the access pre-flight (it reports the gate instead of enforcing it) and the
 * agent card (authentication optional). Same order and audit events as `Edge.guard`: Origin allow-list ->
 * per-IP limit -> bearer token -> per-user limit.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { Edge, type Caller, clientIpOf } from "../Edge/Chain.ts"
import { checkOrigin } from "../Edge/Origin.ts"
import { RateLimits } from "../Edge/RateLimit.ts"
import { GatewayAudit } from "../GatewayAudit.ts"
import { GatewayConfig } from "../GatewayConfig.ts"

const bearer = (header: string | undefined) => /^\s*bearer\s+(.*?)\s*$/i.exec(header ?? "")?.[1] ?? ""

/** Origin and per-IP limit: what every request pays before its token is looked at. */
export const preAuth = Effect.fn("Identify.preAuth")(function* (request: HttpServerRequest.HttpServerRequest, endpoint: string) {
  const config = yield* GatewayConfig
  const limits = yield* RateLimits
  const audit = yield* GatewayAudit
  const clientIp = clientIpOf(request)
  yield* checkOrigin(request.headers["origin"], config.allowedOrigins)
  yield* limits.ip(clientIp).pipe(Effect.tapError(() =>
    audit.emit({ type: "ratelimit.denied", outcome: "failure", clientIp, data: { scope: "ip", endpoint } })
  ))
  return clientIp
})

/** The full chain minus the console gate: an authenticated caller or the error to answer (401, 403 origin, 429). */
export const authenticated = Effect.fn("Identify.authenticated")(function* (
  request: HttpServerRequest.HttpServerRequest,
  endpoint: string
) {
  const edge = yield* Edge
  const limits = yield* RateLimits
  const audit = yield* GatewayAudit
  const clientIp = yield* preAuth(request, endpoint)
  const header = request.headers["authorization"]
  const principal = yield* edge.authenticate(header).pipe(Effect.tapError((e) =>
    e._tag === "Unauthenticated"
      ? audit.emit({
        type: "auth.failure",
        outcome: "failure",
        clientIp,
        data: { auth_method: "jwt", failure_reason: e.reason, endpoint }
      })
      : Effect.void
  ))
  yield* limits.user(principal.user).pipe(Effect.tapError(() =>
    audit.emit({ type: "ratelimit.denied", outcome: "failure", userId: principal.user, clientIp, data: { scope: "user", endpoint } })
  ))
  return { principal, clientIp, token: Redacted.make(bearer(header)) } satisfies Caller as Caller
})
