/**
 * The one pool of concurrent sessions: `rateLimit.maxConcurrentSessions` slots shared by MCP sessions (including
 * initializations in progress) and A2A conversations, and at most `rateLimit.maxSessionsPerUser` of them held by one
 * user. Both protocols take a slot before they open and give it back when they close, so the limits hold across the
 * two and are enforced in this one place. The pool being full is the gateway's limit (503); one user holding their
 * share is theirs to free (429).
 */
import { Effect, Layer } from "effect"
import { RateLimited, SessionLimitReached } from "@kubemend/core/Errors"
import { GatewayConfig } from "../GatewayConfig.ts"

/** How long a user over their session cap is told to wait (a session of theirs idles out or is closed). */
const userRetryAfterSeconds = 60

export class SessionSlots extends Effect.Service<SessionSlots>()("@kubemend/gateway/SessionSlots", {
  effect: Effect.gen(function* () {
    const { maxConcurrentSessions: limit, maxSessionsPerUser: perUser } = (yield* GatewayConfig).rateLimit
    /** Slot id -> the user holding it. */
    const held = new Map<string, string>()
    const heldBy = (owner: string) => {
      let n = 0
      for (const o of held.values()) if (o === owner) n++
      return n
    }

    return {
      limit,
      perUser,
      /**
       * Takes the slot `id` for `owner` (idempotent per id), or fails with `SessionLimitReached` when all are in use
       * and `RateLimited` (429, naming `rateLimit.maxSessionsPerUser`) when `owner` holds their share; `hint` tells
       * the caller how to free one.
       */
      acquire: (id: string, owner: string, hint?: string): Effect.Effect<void, SessionLimitReached | RateLimited> =>
        Effect.suspend((): Effect.Effect<void, SessionLimitReached | RateLimited> => {
          if (held.has(id)) return Effect.void
          const how = hint === undefined ? "" : `; ${hint}`
          if (heldBy(owner) >= perUser) {
            return Effect.fail(
              new RateLimited({
                scope: "user",
                retryAfterSeconds: userRetryAfterSeconds,
                detail: `${owner} already has ${perUser} open sessions (MCP sessions and A2A conversations together), ` +
                  `the per-user limit rateLimit.maxSessionsPerUser${how}`
              })
            )
          }
          if (held.size >= limit) {
            return Effect.fail(
              new SessionLimitReached({
                limit,
                detail: `at most ${limit} sessions (MCP sessions and A2A conversations together) may be open at once` + how
              })
            )
          }
          held.set(id, owner)
          return Effect.void
        }),
      release: (id: string) => Effect.sync(() => void held.delete(id)),
      inUse: Effect.sync(() => held.size)
    } as const
  })
}) {
  /** The pool provided by the gateway services (`GatewayServices`); for layers that must use that same pool. */
  static readonly layerShared = Layer.effect(SessionSlots, SessionSlots)
  /** The former name of `layerShared` (A2A conversations used to count open MCP sessions through it). */
  static readonly layerWithMcp = SessionSlots.layerShared
}
