/**
 * One investigation session: its request, its mutable state and its event log. The log keeps a bounded history for
 * late subscribers and fans live events out through a sliding PubSub, so a slow SSE reader loses its oldest
 * events instead of slowing the investigation.
 */
import { Clock, Data, Effect, PubSub, Ref, type Scope, Stream } from "effect"
import type { IncidentRequest, IncidentResponse, SessionEventType, SessionStatusValue } from "@kubemend/core/domain/Incident"
import { isTerminalSessionStatus } from "@kubemend/core/domain/Incident"

export interface SessionEvent {
  /** 1-based, increasing per session; the SSE `id`. */
  readonly seq: number
  readonly type: SessionEventType
  readonly timestamp: string
  readonly data: Readonly<Record<string, unknown>>
}

export type InvestigationPhase = "rca" | "workflow_discovery" | "validation"

export interface SessionState {
  readonly status: SessionStatusValue
  readonly progress: string
  readonly error?: string
  readonly result?: IncidentResponse
  readonly actingUser?: string
  readonly actingUserGroups?: ReadonlyArray<string>
  readonly turn: number
  readonly phase: InvestigationPhase
  readonly promptTokens: number
  readonly completionTokens: number
  readonly startedAt?: number
  readonly completedAt?: number
  readonly cancelledPhase?: InvestigationPhase
  readonly cancelledAtTurn?: number
}

/** Ends an investigation run with `failed` and this reason. */
export class InvestigationFailed extends Data.TaggedError("InvestigationFailed")<{ readonly reason: string }> {}

export interface EventLog {
  /** `ephemeral` events (token deltas) reach live subscribers only and are not kept for replay. */
  readonly publish: (
    type: SessionEventType,
    data?: Record<string, unknown>,
    options?: { readonly ephemeral?: boolean }
  ) => Effect.Effect<void>
  /** History after `afterSeq`, then live events; ends after `session_ended`. */
  readonly subscribe: (afterSeq?: number) => Stream.Stream<SessionEvent>
  readonly history: Effect.Effect<ReadonlyArray<SessionEvent>>
}

export const makeEventLog = (historyCap: number, bufferCap: number): Effect.Effect<EventLog> =>
  Effect.gen(function* () {
    // One permit orders publishing against subscribing: a new subscriber sees every event exactly once.
    const lock = yield* Effect.makeSemaphore(1)
    const history = yield* Ref.make<ReadonlyArray<SessionEvent>>([])
    const seq = yield* Ref.make(0)
    const hub = yield* PubSub.sliding<SessionEvent>(bufferCap)

    const publish = (type: SessionEventType, data: Record<string, unknown> = {}, options?: { readonly ephemeral?: boolean }) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          // Ephemeral events carry the id of the last kept one: resuming from it skips nothing replayable.
          const n = options?.ephemeral === true ? yield* Ref.get(seq) : yield* Ref.updateAndGet(seq, (s) => s + 1)
          const event: SessionEvent = { seq: n, type, timestamp: new Date(now).toISOString(), data }
          if (options?.ephemeral !== true) {
            yield* Ref.update(history, (h) => (h.length >= historyCap ? [...h.slice(h.length - historyCap + 1), event] : [...h, event]))
          }
          yield* PubSub.publish(hub, event)
        })
      )

    const open = (afterSeq: number): Effect.Effect<Stream.Stream<SessionEvent>, never, Scope.Scope> =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const past = yield* Ref.get(history)
          const live = yield* PubSub.subscribe(hub)
          return Stream.concat(Stream.fromIterable(past.filter((e) => e.seq > afterSeq)), Stream.fromQueue(live))
        })
      )

    return {
      publish,
      subscribe: (afterSeq = 0) => Stream.unwrapScoped(open(afterSeq)).pipe(Stream.takeUntil((e) => e.type === "session_ended")),
      history: Ref.get(history)
    }
  })

export interface Session {
  readonly id: string
  readonly request: IncidentRequest
  readonly createdAt: number
  /** Created for an interactive start (MCP) rather than an autonomous run. */
  readonly interactive: boolean
  readonly state: Ref.Ref<SessionState>
  readonly log: EventLog
}

export const isTerminal = (state: SessionState) => isTerminalSessionStatus(state.status)

/** Applies `f` unless the session already ended; true when it applied. */
export const transition = (session: Session, f: (s: SessionState) => SessionState) =>
  Ref.modify(session.state, (s) => (isTerminal(s) ? [false, s] : [true, f(s)]))

export const setProgress = (session: Session, progress: string) => Ref.update(session.state, (s) => (isTerminal(s) ? s : { ...s, progress }))
