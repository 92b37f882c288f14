/**
 * Handlers of the session REST contract: submit, poll, result, cancel, snapshot, and the SSE event stream. A cancel
 * of a session an interactive investigation holds goes through it, so its lease is released and its AIAnalysis
 * marked `InteractiveCancelled` as with the MCP `cancel`.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Stream } from "effect"
import { AgentApi } from "@kubemend/core/AgentApi"
import { Drain } from "@kubemend/core/Drain"
import type { DomainError } from "@kubemend/core/Errors"
import type { ConflictProblem, NotFoundProblem, ServiceUnavailableProblem } from "@kubemend/core/Problem"
import { problemResponse, toProblem } from "@kubemend/core/Wire"
import { AgentConfig } from "../AgentConfig.ts"
import { Investigations } from "../Interactive/Investigations.ts"
import { Sessions } from "../Sessions.ts"
import type { SessionEvent } from "../Sessions/Session.ts"

/** A domain error as the problem the endpoint declares (the table decides which). */
export const asProblem = (e: DomainError) =>
  Effect.flatMap(toProblem(e), (p) => Effect.fail(p as NotFoundProblem | ConflictProblem | ServiceUnavailableProblem))

/** One SSE frame; `id` lets a reconnecting client resume with `Last-Event-ID`. */
export const frame = (e: SessionEvent) => `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ type: e.type, timestamp: e.timestamp, ...e.data })}\n\n`

export const IncidentHttpLive = HttpApiBuilder.group(AgentApi, "incident", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const investigations = yield* Investigations
    const config = yield* AgentConfig
    const drain = yield* Drain
    return handlers
      .handle("analyze", ({ payload }) =>
        sessions.submit(payload).pipe(
          Effect.map((session_id) => ({ session_id })),
          Effect.catchAll(asProblem)
        ))
      .handle("sessionStatus", ({ path }) => sessions.status(path.session_id).pipe(Effect.catchAll(asProblem)))
      .handle("sessionResult", ({ path }) => sessions.result(path.session_id).pipe(Effect.catchAll(asProblem)))
      .handle("cancelSession", ({ path }) =>
        investigations.cancelSession(path.session_id).pipe(
          Effect.flatMap(Option.match({ onSome: Effect.succeed, onNone: () => sessions.cancel(path.session_id) })),
          Effect.catchAll(asProblem)
        ))
      .handle("sessionSnapshot", ({ path }) => sessions.snapshot(path.session_id).pipe(Effect.catchAll(asProblem)))
      .handleRaw("sessionStream", ({ path, request }) =>
        Effect.gen(function* () {
          const last = Number(request.headers["last-event-id"] ?? "0")
          const events = yield* sessions.events(path.session_id, Number.isFinite(last) && last > 0 ? last : 0)
          const keepalive = Stream.tick(config.keepaliveInterval).pipe(Stream.drop(1), Stream.as(": keepalive\n\n"))
          // The stream ends with the session (`session_ended`) or when the service drains.
          const body = Stream.merge(Stream.map(events, frame), keepalive, { haltStrategy: "left" }).pipe(
            drain.interruptOnDrain,
            Stream.encodeText
          )
          return HttpServerResponse.stream(body, {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
          })
        }).pipe(Effect.catchTag("SessionNotFound", (e) => problemResponse(e, request.url))))
  }))
