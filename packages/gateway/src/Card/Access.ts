/**
 * `GET /a2a/access` (release 1.5.6): an advisory pre-flight of the console gate. It authenticates like the
 * protocol endpoints (401/429 problems) but answers the gate's verdict instead of enforcing it, so a console can
 * explain a refusal before the first tool call: `{allowed, user, groups, reason?}`.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { DomainError } from "@kubemend/core/Errors"
import { problemResponse, wire } from "@kubemend/core/Wire"
import { Edge } from "../Edge/Chain.ts"

export const accessPath = "/a2a/access"

const isDomainError = (u: unknown): u is DomainError => typeof u === "object" && u !== null && "_tag" in u && (u as { _tag: string })._tag in wire

export const accessHandler = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const edge = yield* Edge
  const { principal } = yield* edge.identify(request, accessPath)
  const allowed = yield* edge.consoleAllowed(principal)
  return HttpServerResponse.unsafeJson({
    allowed,
    user: principal.user,
    groups: principal.groups,
    ...(allowed
      ? {}
      : { reason: `console access denied: none of the groups of ${principal.user} is granted use of the console` })
  }, { headers: { "cache-control": "no-store" } })
}).pipe(Effect.catchIf(isDomainError, (e) => problemResponse(e)), Effect.withSpan("Card.access"))
