/** What the edge reads of a request's headers: the client's address, the bearer token, identity claims it ignores. */
import { HttpMiddleware, HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option } from "effect"
import type { makeTrustedProxies } from "@kubemend/core/TrustedProxies"

/**
 * The address the request came from: the socket's peer, or the forwarded client when that peer is a trusted proxy
 * (core `TrustedProxies`).
 */
export const clientIpOf = (request: HttpServerRequest.HttpServerRequest, proxies: ReturnType<typeof makeTrustedProxies>): string =>
  proxies.clientIp(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"]) ?? "unknown"

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

export const bearer = (header: string | undefined) => /^\s*bearer\s+(.*?)\s*$/i.exec(header ?? "")?.[1] ?? ""

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
