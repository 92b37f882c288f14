/**
 * The notifications of an MCP session that answer no request (the agent's investigation events, during a call and
 * between calls) go out on the session's standalone `GET /mcp` stream, which the SDK writes only on the replica
 * holding it. With Valkey the replica producing one announces it (`mcp:notify`) and every replica holding a copy of
 * the session hands it to that copy's transport: only the copy with the GET stream writes it (the SDK drops it on
 * the others), so the client gets it once, also when producer and stream share a replica (that replica hears its
 * own announcement and sends nothing directly). Without Valkey (or before the session has its id) it goes to the
 * local copy at once. While Valkey is unreachable, announcements stay on their replica.
 *
 * An event reaches the client once even where two sources carry it: the agent sends a call's events on the call and
 * on the session's event stream that a follow reads, and two replicas may follow for a moment while one takes the
 * follow over. An event is known by its agent session and `seq`; each copy remembers the last ones it sent.
 *
 * One replica follows an investigation of a session at a time: the one that starts following (it served a call
 * whose answer says the user holds the investigation) claims it (`mcp:follows`), and a replica that hears another's
 * claim stops its own follow, unless its own claim is still on the way: Valkey delivers the claims in one order to
 * every replica, so that claim is the later one, and the last claimant follows.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Effect, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { SharedStateService } from "../Shared/Store.ts"

/** A session copy as notifications reach it. */
export interface Holder {
  readonly server: Server
  /** Stops this copy's follow of `rrId`'s investigation. */
  readonly unfollow: (rrId: string) => Effect.Effect<void>
}

const notifyTopic = "mcp:notify"
const followTopic = "mcp:follows"
/** Events remembered per copy: two sources overlap by a handful of events, a takeover by a resumed stream's backlog. */
const maxRemembered = 512

/** `<agent session>:<seq>` of an investigation event; none for anything else (always sent). */
const eventKey = (params: unknown) => {
  const data = (params as { readonly data?: { readonly session_id?: unknown; readonly seq?: unknown } } | undefined)?.data
  return typeof data?.session_id === "string" && typeof data.seq === "number" && data.seq > 0 ? `${data.session_id}:${data.seq}` : undefined
}

interface Routed {
  readonly session: string
  readonly params: unknown
}

interface Claim {
  readonly session: string
  readonly rr: string
  readonly replica: string
}

const decode = <A>(message: string, use: (a: A) => Effect.Effect<void>) => Effect.try(() => JSON.parse(message) as A).pipe(Effect.flatMap(use), Effect.ignore)

/** Routing for this replica's session copies (`held`); its listeners live with the scope. */
export const sessionNotifications = (shared: SharedStateService, held: (sessionId: string) => Holder | undefined) =>
  Effect.gen(function* () {
    const sharing = shared.backend === "valkey"
    const replica = randomUUID()
    const sent = new WeakMap<Holder, Set<string>>()
    /** This replica's claims not heard back yet, per session and RR. */
    const pending = new Map<string, number>()
    const claimKey = (session: string, rr: string) => JSON.stringify([session, rr])

    const send = (holder: Holder, params: unknown) =>
      Effect.suspend(() => {
        const key = eventKey(params)
        if (key !== undefined) {
          const seen = sent.get(holder) ?? new Set<string>()
          sent.set(holder, seen)
          if (seen.has(key)) return Effect.void
          seen.add(key)
          if (seen.size > maxRemembered) seen.delete(seen.values().next().value!)
        }
        return Effect.promise(() => holder.server.sendLoggingMessage(params as Parameters<Server["sendLoggingMessage"]>[0]).catch(() => undefined))
      })

    /** Sends `params` on session `sessionId`'s GET stream, wherever that is. */
    const deliver = (sessionId: string | undefined, holder: Holder, params: unknown) =>
      sharing && sessionId !== undefined ? shared.announce(notifyTopic, JSON.stringify({ session: sessionId, params } satisfies Routed)) : send(holder, params)

    /** Tells the other replicas that this one follows `rrId` for session `sessionId` (they stop theirs). */
    const claim = (sessionId: string | undefined, rrId: string) =>
      !sharing || sessionId === undefined ? Effect.void : Effect.suspend(() => {
        const key = claimKey(sessionId, rrId)
        pending.set(key, (pending.get(key) ?? 0) + 1)
        return shared.announce(followTopic, JSON.stringify({ session: sessionId, rr: rrId, replica } satisfies Claim))
      })

    const heard = (c: Claim) =>
      Effect.suspend(() => {
        const key = claimKey(c.session, c.rr)
        const mine = pending.get(key) ?? 0
        if (c.replica === replica) {
          if (mine <= 1) pending.delete(key)
          else pending.set(key, mine - 1)
          return Effect.void
        }
        const holder = mine > 0 ? undefined : held(c.session)
        return holder === undefined ? Effect.void : holder.unfollow(c.rr)
      })

    if (sharing) {
      yield* shared.notices(notifyTopic).pipe(
        Stream.runForEach((n) =>
          n._tag === "Announced"
            ? decode<Routed>(n.message, (r) =>
              Effect.suspend(() => {
                const holder = held(r.session)
                return holder === undefined ? Effect.void : send(holder, r.params)
              }))
            : Effect.void
        ),
        Effect.forkScoped
      )
      yield* shared.notices(followTopic).pipe(
        // After a gap nothing tells whether this replica's claims went out: none is taken as still on its way.
        Stream.runForEach((n) => n._tag === "Announced" ? decode<Claim>(n.message, heard) : Effect.sync(() => pending.clear())),
        Effect.forkScoped
      )
    }

    return { deliver, claim } as const
  })
