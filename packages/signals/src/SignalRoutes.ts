/**
 * The signal API: `POST /api/v1/signals/prometheus` (Alertmanager webhook) and `POST /api/v1/signals/kubernetes-event`
 * (one core/v1 Event). 201 `{status: "accepted", fingerprint, remediationRequestRef}` when a request was made, 202
 * `{status: "deduplicated", fingerprint, count, remediationRequestRef}` when folded into one, 200 when only resolved
 * alerts or ignored events came; every error an RFC 7807 problem. A webhook's alerts are answered together: any
 * made -> 201, else any folded -> 202, every firing one unresolvable -> 400; `results[]` has one entry per alert.
 */
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { DomainError } from "@kubemend/core/Errors"
import { Forbidden, PayloadTooLarge, ValidationError } from "@kubemend/core/Errors"
import { AccessRefused, auditRefusal } from "@kubemend/core/EndpointAccess"
import { Audit } from "@kubemend/core/Audit"
import { problemResponse } from "@kubemend/core/Wire"
import { Clock, Effect, Either, Option } from "effect"
import { Access } from "./Access.ts"
import { alertSignals, decodeAlertmanager } from "./Alertmanager.ts"
import { parseJson } from "./Decode.ts"
import { Intake, type Outcome, Unresolvable } from "./Intake.ts"
import { decodeKubeEvent, eventSignal } from "./KubeEvent.ts"
import { makePeers } from "./Peers.ts"
import type { Signal } from "./Signal.ts"
import { SignalsConfig } from "./SignalsConfig.ts"
import { SignalsMetrics } from "./SignalsMetrics.ts"

export const paths = { prometheus: "/api/v1/signals/prometheus", kubernetesEvent: "/api/v1/signals/kubernetes-event" } as const

type Result = Outcome | { readonly status: "rejected"; readonly reason: string; readonly detail: string }

const json = (body: unknown, status: number) => HttpServerResponse.unsafeJson(body, { status })

/** One answer for a webhook's alerts (see the module comment). */
export const answer = (results: ReadonlyArray<Result>): Either.Either<HttpServerResponse.HttpServerResponse, DomainError> => {
  const first = (s: Result["status"]) => results.find((r) => r.status === s)
  const lead = first("accepted") ?? first("deduplicated")
  const extra = results.length > 1 ? { results } : {}
  if (lead !== undefined) return Either.right(json({ ...lead, ...extra }, lead.status === "accepted" ? 201 : 202))
  const resolved = first("resolved")
  if (resolved !== undefined) return Either.right(json({ ...resolved, status: "recorded", ...extra }, 200))
  const index = results.findIndex((r) => r.status === "rejected")
  const rejected = results[index] as Extract<Result, { status: "rejected" }>
  return Either.left(
    new ValidationError({
      field: results.length > 1 ? `alerts.${index}.labels` : "labels",
      detail: `no resolvable target (${rejected.reason}): ${rejected.detail}`
    })
  )
}

export const SignalRoutes = Effect.gen(function* () {
  const config = yield* SignalsConfig
  const access = yield* Access
  const intake = yield* Intake
  const metrics = yield* SignalsMetrics
  const audit = yield* Audit
  const peers = makePeers(config.trustedProxyCIDRs, config.corsAllowedOrigins)

  const readBody = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function* () {
      const length = Number(request.headers["content-length"] ?? "0")
      if (Number.isFinite(length) && length > config.maxBodyBytes) return yield* new PayloadTooLarge({ limitBytes: config.maxBodyBytes })
      const text = yield* request.text.pipe(
        Effect.mapError((e) =>
          String(e.cause).includes("maxBytes")
            ? new PayloadTooLarge({ limitBytes: config.maxBodyBytes })
            : new ValidationError({ detail: "the request body could not be read" })
        ),
        HttpIncomingMessage.withMaxBodySize(Option.some(config.maxBodyBytes))
      )
      return yield* parseJson(text)
    })

  // A lone signal (most webhooks) is ingested on the request's fiber: a concurrent forEach forks and joins a fiber
  // per item, which cost more CPU than the whole ingestion of a duplicate.
  const ingestAll = (signals: ReadonlyArray<Signal>) =>
    Effect.forEach(signals, (s) =>
      intake.ingest(s).pipe(
        Effect.map((o): Result => o),
        Effect.catchIf(
          (e): e is Unresolvable => e instanceof Unresolvable,
          (e) => Effect.succeed<Result>({ status: "rejected", reason: e.reason, detail: e.detail })
        )
      ), { concurrency: signals.length === 1 ? 1 : 8 })

  const handle = (endpoint: string, toSignals: (body: unknown, receivedAt: string) => Effect.Effect<ReadonlyArray<Signal> | string, ValidationError>) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const start = yield* Clock.currentTimeMillis
      const origin = request.headers["origin"]
      const clientIp = peers.clientIp(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"])
      const response = yield* Effect.gen(function* () {
        const refusedOrigin = peers.refusedOrigin(origin)
        yield* (refusedOrigin === undefined
          ? access.authorize(request.headers["authorization"])
          : Effect.fail(new AccessRefused({ error: new Forbidden({ detail: `origin ${refusedOrigin} is not allowed` }), user: undefined }))).pipe(
            Effect.tapError((refused) => auditRefusal("signals", audit.emit, request, refused, clientIp)),
            Effect.mapError((refused) => refused.error)
          )
        const body = yield* readBody(request)
        const signals = yield* toSignals(body, new Date(start).toISOString())
        if (typeof signals === "string") {
          yield* metrics.rejected(signals)
          return json({ status: "ignored", reason: signals }, 200)
        }
        return yield* Either.match(answer(yield* ingestAll(signals)), { onLeft: Effect.fail, onRight: Effect.succeed })
      }).pipe(
        Effect.catchAll((e: DomainError) => problemResponse(e, request.url)),
        Effect.annotateLogs({ endpoint, client: clientIp ?? "unknown" })
      )
      const end = yield* Clock.currentTimeMillis
      yield* metrics.observe(endpoint, request.method, response.status, (end - start) / 1000)
      return peers.allowsOrigin(origin) ? HttpServerResponse.setHeader(response, "access-control-allow-origin", origin!) : response
    })

  const preflight = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const origin = request.headers["origin"]
    if (!peers.allowsOrigin(origin)) return HttpServerResponse.empty({ status: 403 })
    return HttpServerResponse.empty({
      status: 204,
      headers: {
        "access-control-allow-origin": origin!,
        "access-control-allow-methods": "POST",
        "access-control-allow-headers": "authorization, content-type",
        "access-control-max-age": "600"
      }
    })
  })

  const prometheus = handle(paths.prometheus, (body) => Effect.map(decodeAlertmanager(body), alertSignals))
  const kubernetesEvent = handle(paths.kubernetesEvent, (body, receivedAt) =>
    Effect.map(decodeKubeEvent(body), (event) => {
      if (event.type !== undefined && event.type !== "Warning") return "not_warning"
      if (!config.events.reasons.includes(event.reason)) return "reason_not_allowed"
      return [eventSignal(event, receivedAt)]
    }))

  return HttpRouter.empty.pipe(
    HttpRouter.post(paths.prometheus, prometheus),
    HttpRouter.post(paths.kubernetesEvent, kubernetesEvent),
    HttpRouter.options(paths.prometheus, preflight),
    HttpRouter.options(paths.kubernetesEvent, preflight)
  )
})
