/**
 * The one pool of concurrent sessions: `rateLimit.maxConcurrentSessions` slots shared by MCP sessions (including
 * initializations in progress) and A2A conversations, and at most `rateLimit.maxSessionsPerUser` of them held by one
 * user. Both protocols take a slot before they open and give it back when they close, so the limits hold across the
 * two and are enforced in this one place. The pool being full is the gateway's limit (503); one user holding their
 * share is theirs to free (429).
 *
 * The slots live in the shared state (`SharedState`): with Valkey the caps count every gateway replica's sessions.
 * A slot expires a minute after its session's idle timeout unless renewed (`touch`), so the sessions of a replica
 * that died free their slots by themselves.
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { RateLimited, SessionLimitReached } from "@kubemend/core/Errors"
import { GatewayConfig } from "../GatewayConfig.ts"
import { SharedState } from "../SharedState.ts"

/** How long a user over their session cap is told to wait (a session of theirs idles out or is closed). */
const userRetryAfterSeconds = 60

/** Past the idle timeout: the owning replica's sweep normally releases the slot before it expires. */
const expiryMargin = Duration.minutes(1)

export class SessionSlots extends Effect.Service<SessionSlots>()("@kubemend/gateway/SessionSlots", {
  effect: Effect.gen(function* () {
    const { maxConcurrentSessions: limit, maxSessionsPerUser: perUser } = (yield* GatewayConfig).rateLimit
    const shared = yield* SharedState
    /** When this replica last renewed each slot it uses: renewals are spread out, not one write per request. */
    const renewed = new Map<string, number>()
    const ttlOf = (idle: Duration.Duration) => Duration.sum(idle, expiryMargin)

    return {
      limit,
      perUser,
      /**
       * Takes the slot `id` for `owner` for a session idling out after `idle` (idempotent per id), or fails with
       * `SessionLimitReached` when all are in use and `RateLimited` (429, naming `rateLimit.maxSessionsPerUser`)
       * when `owner` holds their share; `hint` tells the caller how to free one.
       */
      acquire: (id: string, owner: string, idle: Duration.Duration, hint?: string): Effect.Effect<void, SessionLimitReached | RateLimited> =>
        Effect.gen(function* () {
          const how = hint === undefined ? "" : `; ${hint}`
          const admission = yield* shared.acquireSlot(id, owner, { total: limit, perUser }, ttlOf(idle))
          if (admission === "user-full") {
            return yield* new RateLimited({
              scope: "user",
              retryAfterSeconds: userRetryAfterSeconds,
              detail: `${owner} already has ${perUser} open sessions (MCP sessions and A2A conversations together), ` +
                `the per-user limit rateLimit.maxSessionsPerUser${how}`
            })
          }
          if (admission === "total-full") {
            return yield* new SessionLimitReached({
              limit,
              detail: `at most ${limit} sessions (MCP sessions and A2A conversations together) may be open at once` + how
            })
          }
          renewed.set(id, yield* Clock.currentTimeMillis)
        }),
      /** The session of slot `id` was used: its slot lives on for another `idle` (renewed at most every tenth of it). */
      touch: (id: string, owner: string, idle: Duration.Duration) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          if (now - (renewed.get(id) ?? -Infinity) < Duration.toMillis(idle) / 10) return
          renewed.set(id, now)
          yield* shared.touchSlot(id, owner, ttlOf(idle))
        }),
      release: (id: string, owner: string) => Effect.zipRight(Effect.sync(() => void renewed.delete(id)), shared.releaseSlot(id, owner)),
      /** This replica forgets slot `id` (its session went on elsewhere); the slot itself is left to its session. */
      forget: (id: string) => Effect.sync(() => void renewed.delete(id)),
      inUse: shared.slotsInUse
    } as const
  })
}) {
  /** The pool provided by the gateway services (`GatewayServices`); for layers that must use that same pool. */
  static readonly layerShared = Layer.effect(SessionSlots, SessionSlots)
  /** The former name of `layerShared` (A2A conversations used to count open MCP sessions through it). */
  static readonly layerWithMcp = SessionSlots.layerShared
}
