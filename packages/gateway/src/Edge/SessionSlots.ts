/**
 * The one pool of concurrent sessions: `rateLimit.maxConcurrentSessions` slots shared by MCP sessions (including
 * initializations in progress) and A2A conversations. Both take a slot before they open and give it back when they
 * close, so the limit holds across the two protocols and is enforced in this one place.
 */
import { Effect, Layer } from "effect"
import { SessionLimitReached } from "@kubemend/core/Errors"
import { GatewayConfig } from "../GatewayConfig.ts"

export class SessionSlots extends Effect.Service<SessionSlots>()("@kubemend/gateway/SessionSlots", {
  effect: Effect.gen(function* () {
    const limit = (yield* GatewayConfig).rateLimit.maxConcurrentSessions
    const held = new Set<string>()

    return {
      limit,
      /**
       * Takes the slot `id` (idempotent per id), or fails with `SessionLimitReached` when all are in use; `hint`
       * tells the caller how to free one.
       */
      acquire: (id: string, hint?: string) =>
        Effect.suspend(() => {
          if (held.has(id)) return Effect.void
          if (held.size >= limit) {
            return Effect.fail(new SessionLimitReached({
              limit,
              detail: `at most ${limit} sessions (MCP sessions and A2A conversations together) may be open at once` +
                (hint === undefined ? "" : `; ${hint}`)
            }))
          }
          held.add(id)
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
