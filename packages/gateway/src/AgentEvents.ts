/**
 * Investigation events between calls. The agent keeps each session's events in a bounded log served as SSE
 * (`GET /api/v1/incident/session/<id>/stream`, core AgentApi, behind its `agent-client` access rule: the gateway
 * presents its own ServiceAccount token). While a user's MCP session holds an investigation, its agent link follows
 * that stream from where the call that answered left it (`event_seq`), so what the agent does after the call
 * returned (the opening analysis going on, a takeover, a lapse, the session ending) reaches the user as
 * `notifications/message` on their MCP session and the RR's status-stream subscribers (`listen`).
 *
 * With Valkey (`SharedState`) the events any replica sees reach every replica's `listen`ers (announced on
 * `status:investigation`), so a status-stream subscriber need not be on the replica serving the holder; each event
 * reaches a listener once, though a call and the follow after it both carry the events of that call.
 *
 * A dropped connection is resumed with `Last-Event-ID` after a capped, jittered backoff; a stream silent for four
 * of the agent's keep-alive intervals counts as dropped. After an agent restart the session is gone (404): the user is told it was
 * lost. A follow ends after `session_ended`, when another user took the session over, or with its link's scope.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { Data, Duration, Effect, Option, Queue, Ref, Schedule, Stream } from "effect"
import { describeSessionEvent } from "@kubemend/core/domain/Incident"
import { tokenSource } from "@kubemend/core/ServiceToken"
import { GatewayConfig } from "./GatewayConfig.ts"
import { SharedState } from "./SharedState.ts"

/** One investigation event as users get it: the agent's event fields plus what it is about and a readable line. */
export interface InvestigationEvent {
  readonly event: string
  readonly message: string
  readonly rr_id: string
  readonly session_id: string
  readonly seq: number
  readonly [field: string]: unknown
}

export interface Follow {
  readonly rrId: string
  readonly sessionId: string
  /** The last event the caller already has (the answer's `event_seq`). */
  readonly after: number
  /** Who holds the session; an `interactive_state` naming someone else ends the follow. */
  readonly user: string
  readonly deliver: (event: InvestigationEvent) => Effect.Effect<void>
}

class Dropped extends Data.TaggedError("Dropped")<{ readonly reason: string }> {}

type Item =
  | { readonly _tag: "Event"; readonly seq: number; readonly type: string; readonly data: Record<string, unknown> }
  | { readonly _tag: "Gone" }

const parseData = (m: EventSourceMessage): Record<string, unknown> => {
  try {
    const o = JSON.parse(m.data) as unknown
    return typeof o === "object" && o !== null && !Array.isArray(o) ? (o as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** Four of the agent's keep-alives (`session.keepaliveInterval`, 15 s): silence longer than that is a dead link. */
const idle = Duration.seconds(60)

/** Where replicas tell each other the investigation events they see, for their status-stream subscribers. */
const statusTopic = "status:investigation"
/** Events not yet told on; past it the oldest are dropped (a stalled store). */
const outboxCapacity = 1024
/** Events remembered to drop repeats: the overlap of a call and a follow is a handful. */
const maxRemembered = 4096

const backoff = Schedule.exponential(Duration.millis(250)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(10))), Schedule.jittered)

export class AgentEvents extends Effect.Service<AgentEvents>()("@kubemend/gateway/AgentEvents", {
  scoped: Effect.gen(function* () {
    const config = yield* GatewayConfig
    const shared = yield* SharedState
    const token = yield* tokenSource(config.agentToken)
    const listeners = new Map<string, Set<(e: InvestigationEvent) => void>>()
    const seen = new Set<string>()

    /** To this replica's listeners, each event once (a call and a follow both carry the events of a call). */
    const tell = (e: InvestigationEvent) => {
      if (e.seq > 0) {
        const key = `${e.session_id}:${e.seq}`
        if (seen.has(key)) return
        seen.add(key)
        if (seen.size > maxRemembered) seen.delete(seen.values().next().value!)
      }
      listeners.get(e.rr_id)?.forEach((f) => f(e))
    }
    // With Valkey every replica's listeners get the events any replica sees: the status stream's subscriber and the
    // holder's calls need not share a replica. In order, from one queue (callers are outside any fiber).
    const outbox = yield* Queue.sliding<InvestigationEvent>(outboxCapacity)
    const publish = (e: InvestigationEvent) => void Queue.unsafeOffer(outbox, e)
    const sharing = shared.backend === "valkey"
    yield* Queue.take(outbox).pipe(
      Effect.flatMap((e) => sharing ? shared.announce(statusTopic, JSON.stringify(e)) : Effect.sync(() => tell(e))),
      Effect.forever,
      Effect.forkScoped
    )
    if (sharing) {
      yield* shared.notices(statusTopic).pipe(
        Stream.runForEach((n) =>
          n._tag === "Announced" ? Effect.try(() => tell(JSON.parse(n.message) as InvestigationEvent)).pipe(Effect.ignore) : Effect.void
        ),
        Effect.forkScoped
      )
    }

    /** One connection to the session's stream from `last` on; ends after `session_ended`, fails when dropped. */
    const connect = (base: string, sessionId: string, last: Ref.Ref<number>): Stream.Stream<Item, Dropped> =>
      Stream.unwrapScoped(Effect.gen(function* () {
        const abort = yield* Effect.acquireRelease(Effect.sync(() => new AbortController()), (c) => Effect.sync(() => c.abort()))
        const after = yield* Ref.get(last)
        const bearer = yield* token
        const res = yield* Effect.tryPromise({
          try: () =>
            fetch(`${base}/api/v1/incident/session/${encodeURIComponent(sessionId)}/stream`, {
              headers: { accept: "text/event-stream", authorization: `Bearer ${bearer}`, ...(after > 0 ? { "last-event-id": String(after) } : {}) },
              signal: abort.signal
            }),
          catch: (e) => new Dropped({ reason: e instanceof Error ? e.message : String(e) })
        })
        if (res.status === 404) return Stream.succeed<Item>({ _tag: "Gone" })
        if (res.status === 401 || res.status === 403) {
          // A misconfiguration (no `agent-client` grant, no token), not an outage: retrying changes nothing.
          yield* Effect.logWarning("the agent refused the investigation event stream").pipe(Effect.annotateLogs({ status: res.status }))
          return Stream.empty as Stream.Stream<Item, Dropped>
        }
        if (!res.ok || res.body === null) return yield* new Dropped({ reason: `HTTP ${res.status}` })
        const pending: Array<EventSourceMessage> = []
        const parser = createParser({ onEvent: (m) => void pending.push(m) })
        const body = res.body
        return Stream.fromReadableStream(() => body, (e) => new Dropped({ reason: String(e) })).pipe(
          Stream.timeoutFail(() => new Dropped({ reason: "no keep-alive from the agent" }), idle),
          Stream.decodeText(),
          Stream.mapConcat((chunk) => (parser.feed(chunk), pending.splice(0))),
          Stream.map((m): Item => ({ _tag: "Event", seq: Number(m.id ?? "0"), type: m.event ?? "message", data: parseData(m) })),
          Stream.tap((i) => (i._tag === "Event" && i.seq > 0 ? Ref.set(last, i.seq) : Effect.void)),
          // A stream that closed before `session_ended` was cut (an agent restart, a proxy): resume it.
          Stream.concat(Stream.fail(new Dropped({ reason: "closed before session_ended" }))),
          Stream.takeUntil((i) => i._tag === "Event" && i.type === "session_ended")
        )
      }))

    const follow = (f: Follow): Effect.Effect<void> =>
      Option.match(config.agentUrl, {
        onNone: () => Effect.void,
        onSome: (url) =>
          Effect.gen(function* () {
            const last = yield* Ref.make(f.after)
            const base = url.replace(/\/+$/, "")
            const about = { rr_id: f.rrId, session_id: f.sessionId }
            const send = (e: InvestigationEvent) => Effect.zipRight(Effect.sync(() => publish(e)), f.deliver(e))
            yield* connect(base, f.sessionId, last).pipe(
              Stream.tapError((e) => Effect.logDebug("investigation event stream dropped; resuming", e.reason)),
              Stream.retry(backoff),
              Stream.takeUntil((i) => i._tag === "Gone" || (i.type === "interactive_state" && i.data["holder"] !== f.user)),
              Stream.runForEach((i) => {
                if (i._tag === "Gone") {
                  return send({
                    event: "session_lost",
                    message: `the agent no longer has the session of ${f.rrId} (it restarted or the session expired); start it again`,
                    ...about,
                    seq: 0
                  })
                }
                const message = describeSessionEvent(i.type, i.data)
                return message === undefined ? Effect.void : send({ ...i.data, event: i.type, message, ...about, seq: i.seq })
              }),
              // The backoff never gives up: only the scope (the MCP session) or the session's end stops a follow.
              Effect.catchTag("Dropped", () => Effect.void)
            )
          }).pipe(Effect.withSpan("AgentEvents.follow", { attributes: { rr_id: f.rrId } }))
      })

    /** Call-time events (the agent's notifications on an open call) go to the status stream too. */
    const fromCall = (params: unknown) => {
      const data = (params as { data?: Record<string, unknown> } | undefined)?.data
      if (data === undefined || typeof data.rr_id !== "string" || typeof data.session_id !== "string") return
      if (typeof data.event !== "string" || typeof data.message !== "string") return
      publish({ ...data, event: data.event, message: data.message, rr_id: data.rr_id, session_id: data.session_id, seq: Number(data.seq ?? 0) })
    }

    /** `f` receives the RR's investigation events until the returned function is called. */
    const listen = (rrId: string, f: (e: InvestigationEvent) => void) => {
      const set = listeners.get(rrId) ?? new Set()
      listeners.set(rrId, set.add(f))
      return () => {
        set.delete(f)
        if (set.size === 0 && listeners.get(rrId) === set) listeners.delete(rrId)
      }
    }

    return { follow, fromCall, listen } as const
  })
}) {}
