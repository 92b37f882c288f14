/**
 * Investigation sessions in memory (lost on restart, as in the original): submit, poll, result, cancel, snapshot
 * and the event stream. Each autonomous run is a fiber in a FiberMap keyed by session id, bounded by the
 * wall-clock limit; finished sessions are swept after the session TTL.
 */
import { Cause, Clock, Duration, Effect, FiberMap, Option, Ref, Schedule, type Stream } from "effect"
import { randomUUID } from "node:crypto"
import { Conflict, ResultNotReady, SessionLimitReached, SessionNotFound } from "@kubemend/core/Errors"
import type { IncidentRequest, IncidentResponse, SessionStatusValue } from "@kubemend/core/domain/Incident"
import { formatGoDuration } from "@kubemend/core/Config"
import { AgentConfig } from "./AgentConfig.ts"
import { AgentMetrics } from "./Metrics.ts"
import { Investigator } from "./Investigation/Investigator.ts"
import { failedResponse } from "./Investigation/Result.ts"
import { InvestigationFailed, isTerminal, makeEventLog, type Session, type SessionEvent, type SessionState, transition } from "./Sessions/Session.ts"

export interface CreateOptions {
  readonly interactive?: boolean
  readonly actingUser?: string
  readonly actingUserGroups?: ReadonlyArray<string>
}

export type Ending =
  | { readonly status: "completed"; readonly result: IncidentResponse }
  | { readonly status: "failed"; readonly reason: string }
  | { readonly status: "cancelled"; readonly reason: string }

const clean = <T extends Record<string, unknown>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> }

export class Sessions extends Effect.Service<Sessions>()("@kubemend/agent/Sessions", {
  scoped: Effect.gen(function* () {
    const config = yield* AgentConfig
    const investigator = yield* Investigator
    const metrics = yield* AgentMetrics
    const store = yield* Ref.make(new Map<string, Session>())
    const runs = yield* FiberMap.make<string>()

    const find = (id: string) =>
      Effect.flatMap(Ref.get(store), (m) => {
        const s = m.get(id)
        return s === undefined ? Effect.fail(new SessionNotFound({ sessionId: id })) : Effect.succeed(s)
      })

    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const ttl = Duration.toMillis(config.sessionTTL)
      for (const session of (yield* Ref.get(store)).values()) {
        const state = yield* Ref.get(session.state)
        if (isTerminal(state) && (state.completedAt ?? 0) + ttl <= now) {
          yield* Ref.update(store, (m) => (m.delete(session.id), m))
        } else if (state.status === "pending" && session.createdAt + ttl <= now) {
          yield* finish(session, { status: "failed", reason: "the interactive session was never started" })
        }
      }
    })
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(config.sessionGcInterval)))

    const create = Effect.fn("Sessions.create")(function* (request: IncidentRequest, options: CreateOptions = {}) {
      if ((yield* Ref.get(store)).size >= config.maxSessions) yield* sweep
      if ((yield* Ref.get(store)).size >= config.maxSessions) {
        return yield* new SessionLimitReached({ limit: config.maxSessions, detail: "too many investigation sessions" })
      }
      const now = yield* Clock.currentTimeMillis
      const initial: SessionState = clean({
        status: "pending" as SessionStatusValue,
        progress: options.interactive ? "waiting for an interactive start" : "queued",
        turn: 0,
        phase: "rca" as const,
        promptTokens: 0,
        completionTokens: 0,
        actingUser: options.actingUser,
        actingUserGroups: options.actingUserGroups
      })
      const session: Session = {
        id: randomUUID(),
        request,
        createdAt: now,
        interactive: options.interactive ?? false,
        state: yield* Ref.make(initial),
        log: yield* makeEventLog(config.eventHistory, config.streamBuffer)
      }
      yield* Ref.update(store, (m) => m.set(session.id, session))
      return session
    })

    /** Moves a session to its end state once; later calls (a cancel racing a completion) change nothing. */
    const finish = (session: Session, ending: Ending) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const applied = yield* transition(session, (s) => ({
          ...s,
          status: ending.status,
          progress: ending.status === "completed" ? "completed" : ending.reason,
          completedAt: now,
          ...(ending.status === "completed"
            ? { result: ending.result }
            : ending.status === "failed"
            ? { error: ending.reason, result: failedResponse(session.request, ending.reason, new Date(now)) }
            : { error: ending.reason, cancelledPhase: s.phase, cancelledAtTurn: s.turn })
        }))
        if (!applied) return false
        const state = yield* Ref.get(session.state)
        if (ending.status === "completed") yield* session.log.publish("complete", { result: ending.result })
        else if (ending.status === "failed") yield* session.log.publish("error", { error: ending.reason })
        else yield* session.log.publish("cancelled", { reason: ending.reason })
        yield* session.log.publish("session_ended", { status: ending.status })
        metrics.investigations.inc({ status: ending.status })
        if (state.startedAt !== undefined) metrics.investigationDuration.observe((now - state.startedAt) / 1000)
        yield* Effect.logInfo("session ended").pipe(
          Effect.annotateLogs({ session_id: session.id, status: ending.status, ...(ending.status === "completed" ? {} : { reason: ending.reason }) })
        )
        return true
      })

    const limitReason = `investigation exceeded the ${formatGoDuration(config.investigationTimeout)} wall-clock limit`

    /** Marks the session investigating and runs `work` in the background under the wall-clock limit. */
    const run = (session: Session, work: Effect.Effect<IncidentResponse, InvestigationFailed>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* transition(session, (s) => ({ ...s, status: "investigating", progress: "investigating", startedAt: now }))
        const guarded = work.pipe(
          Effect.timeoutFail({ duration: config.investigationTimeout, onTimeout: () => new InvestigationFailed({ reason: limitReason }) }),
          Effect.matchCauseEffect({
            onSuccess: (result) => finish(session, { status: "completed", result }),
            onFailure: (cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.succeed(false)
                : Option.match(Cause.failureOption(cause), {
                  onSome: (e) => finish(session, { status: "failed", reason: e.reason }),
                  onNone: () =>
                    Effect.logError("investigation crashed", cause).pipe(
                      Effect.zipRight(finish(session, { status: "failed", reason: "internal error" }))
                    )
                })
          }),
          Effect.annotateLogs({ session_id: session.id, remediation_id: session.request.remediation_id })
        )
        yield* FiberMap.run(runs, session.id, guarded)
      })

    /** An interactive session starts (or changes hands): investigating, driven by this user. */
    const begin = (session: Session, actingUser: string, actingUserGroups: ReadonlyArray<string>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        transition(session, (s) => ({
          ...s,
          status: "investigating",
          progress: `interactive investigation driven by ${actingUser}`,
          startedAt: s.startedAt ?? now,
          actingUser,
          actingUserGroups
        })))

    /** Runs one interactive turn in the session's slot, so a cancel interrupts it like an autonomous run. */
    const fork = <A, E>(session: Session, effect: Effect.Effect<A, E>) => FiberMap.run(runs, session.id, effect)
    const interrupt = (session: Session) => FiberMap.remove(runs, session.id)

    const submit = Effect.fn("Sessions.submit")(function* (request: IncidentRequest) {
      const interactive = request.interactive === true
      // A user may start the interactive investigation before the analysis controller submits (svc_investigate on a
      // target creates the RR and starts at once): the submit then joins that session instead of waiting for a
      // start that already happened.
      if (interactive) {
        const started = yield* newestInteractive(request.remediation_id)
        if (Option.isSome(started)) return started.value.id
      }
      const session = yield* create(request, { interactive })
      if (!interactive) yield* run(session, investigator.investigate(session))
      return session.id
    })

    const cancel = Effect.fn("Sessions.cancel")(function* (id: string, reason = "cancelled by request") {
      const session = yield* find(id)
      const done = yield* finish(session, { status: "cancelled", reason })
      if (!done) return yield* new Conflict({ detail: `session ${id} already ended` })
      yield* FiberMap.remove(runs, id)
      return { session_id: id, status: "cancelled" }
    })

    const status = Effect.fn("Sessions.status")(function* (id: string) {
      const session = yield* find(id)
      const s = yield* Ref.get(session.state)
      return clean({
        session_id: id,
        status: s.status,
        progress: s.progress,
        error: s.error,
        acting_user: s.actingUser,
        acting_user_groups: s.actingUserGroups
      })
    })

    const result = Effect.fn("Sessions.result")(function* (id: string) {
      const s = yield* Ref.get((yield* find(id)).state)
      if (s.result === undefined) return yield* new ResultNotReady({ sessionId: id, status: s.status })
      return s.result
    })

    const snapshot = Effect.fn("Sessions.snapshot")(function* (id: string) {
      const session = yield* find(id)
      const s = yield* Ref.get(session.state)
      if (!isTerminal(s)) return yield* new ResultNotReady({ sessionId: id, status: s.status })
      return clean({
        session_id: id,
        status: s.status,
        created_at: new Date(session.createdAt).toISOString(),
        metadata: { incident_id: session.request.incident_id, remediation_id: session.request.remediation_id },
        error: s.error,
        cancelled_phase: s.cancelledPhase,
        cancelled_at_turn: s.cancelledAtTurn,
        rca_summary: s.result?.root_cause ?? s.result?.analysis,
        total_prompt_tokens: s.promptTokens,
        total_completion_tokens: s.completionTokens
      })
    })

    const events = (id: string, afterSeq?: number): Effect.Effect<Stream.Stream<SessionEvent>, SessionNotFound> =>
      Effect.map(find(id), (session) => session.log.subscribe(afterSeq))

    /** The newest interactive session of a remediation that a user started (open or already ended). */
    const newestInteractive = (remediationId: string) =>
      Effect.gen(function* () {
        let best: Session | undefined
        for (const session of (yield* Ref.get(store)).values()) {
          if (session.request.remediation_id !== remediationId || !session.interactive) continue
          if ((yield* Ref.get(session.state)).status === "pending") continue
          if (best === undefined || session.createdAt > best.createdAt) best = session
        }
        return Option.fromNullable(best)
      })

    /** The newest session of a remediation that has not ended (only autonomous ones with `{ interactive: false }`). */
    const findOpen = (remediationId: string, only: { readonly interactive?: boolean } = {}) =>
      Effect.gen(function* () {
        let best: Session | undefined
        for (const session of (yield* Ref.get(store)).values()) {
          if (session.request.remediation_id !== remediationId) continue
          if (only.interactive !== undefined && session.interactive !== only.interactive) continue
          if (isTerminal(yield* Ref.get(session.state))) continue
          if (best === undefined || session.createdAt > best.createdAt) best = session
        }
        return Option.fromNullable(best)
      })

    return { create, submit, run, begin, fork, interrupt, finish, find, findOpen, cancel, status, result, snapshot, events } as const
  })
}) {}
