/**
 * The interactive investigations this agent holds, keyed by RR, and their progress as a stream: `follow` gives the
 * events of an RR's session from now on and switches to a session opened for the RR later (a start or takeover
 * in progress), so a caller sees the opening analysis of the session its own call creates.
 */
import { Effect, PubSub, type Scope, Stream } from "effect"
import type { SessionEvent } from "../Sessions/Session.ts"
import type { InteractiveSession } from "./State.ts"

export interface FollowedEvent {
  readonly sessionId: string
  readonly event: SessionEvent
}

export interface LogPosition {
  readonly sessionId: string
  /** The last kept event (0 before any). */
  readonly seq: number
}

const lastSeq = (st: InteractiveSession) => Effect.map(st.session.log.history, (h) => h.at(-1)?.seq ?? 0)

export class Registry extends Effect.Service<Registry>()("@kubemend/agent/InteractiveRegistry", {
  effect: Effect.gen(function* () {
    const states = new Map<string, InteractiveSession>()
    // Sessions as they are opened, with the event to follow them from; a subscriber that lags loses old openings.
    const opened = yield* PubSub.sliding<{ readonly st: InteractiveSession; readonly after: number }>(64)

    const get = (rr: string) => states.get(rr)
    const bySession = (sessionId: string) => [...states.values()].find((st) => st.session.id === sessionId)

    /** `st` now holds its RR; followers switch to it from its current event on. */
    const put = (st: InteractiveSession) =>
      Effect.gen(function* () {
        const after = yield* lastSeq(st)
        states.set(st.rr, st)
        yield* PubSub.publish(opened, { st, after })
      })

    /** Where the RR's current session's event log stands. */
    const position = (rr: string): Effect.Effect<LogPosition | undefined> => {
      const st = states.get(rr)
      return st === undefined ? Effect.succeed(undefined) : Effect.map(lastSeq(st), (seq) => ({ sessionId: st.session.id, seq }))
    }

    /** The subscription is taken when this runs: nothing published after that is missed. */
    const follow = (rr: string): Effect.Effect<Stream.Stream<FollowedEvent>, never, Scope.Scope> =>
      Effect.gen(function* () {
        const later = yield* PubSub.subscribe(opened)
        const current = states.get(rr)
        const now = yield* position(rr)
        const sources = Stream.concat(
          current === undefined || now === undefined ? Stream.empty : Stream.make({ st: current, after: now.seq }),
          Stream.fromQueue(later).pipe(Stream.filter((o) => o.st.rr === rr))
        )
        return sources.pipe(
          Stream.flatMap((o) => Stream.map(o.st.session.log.subscribe(o.after), (event) => ({ sessionId: o.st.session.id, event })), {
            switch: true
          })
        )
      })

    return { get, bySession, put, position, follow } as const
  })
}) {}
