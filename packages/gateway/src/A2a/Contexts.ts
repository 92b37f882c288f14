/**
 * A2A conversations (`contextId`): the earlier exchanges the model sees again on the next message, owned by the
 * user who started them and closed after `contextIdleTimeout`. Each open conversation holds one slot of the
 * gateway-wide `maxConcurrentSessions` pool (`SessionSlots`), the same pool MCP sessions draw from.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { InvalidParams } from "@kubemend/core/Errors"
import { type Message, message } from "@kubemend/core/Llm"
import { SessionSlots } from "../Edge/SessionSlots.ts"
import { A2aConfig } from "./Config.ts"

export { SessionSlots } from "../Edge/SessionSlots.ts"

interface Conversation {
  readonly id: string
  readonly owner: string
  readonly startedAt: number
  lastUsed: number
  /** Alternating user / agent messages, the most recent `contextTurns` exchanges. */
  turns: Array<readonly [string, string]>
}

const slotId = (contextId: string) => `a2a:${contextId}`

export class Contexts extends Effect.Service<Contexts>()("@kubemend/gateway/A2aContexts", {
  scoped: Effect.gen(function* () {
    const config = yield* A2aConfig
    const slots = yield* SessionSlots
    const conversations = new Map<string, Conversation>()
    const idle = Duration.toMillis(config.contextIdleTimeout)

    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      for (const c of [...conversations.values()]) {
        if (now - c.lastUsed < idle) continue
        conversations.delete(c.id)
        yield* slots.release(slotId(c.id))
      }
    })
    yield* sweep.pipe(Effect.repeat(Schedule.spaced(Duration.minutes(1))), Effect.forkScoped)
    yield* Effect.addFinalizer(() => Effect.forEach([...conversations.keys()], (id) => slots.release(slotId(id)), { discard: true }))

    /**
     * The caller's conversation `contextId`, opened when new (a fresh id when none is given). Someone else's
     * conversation is refused without saying whose it is.
     */
    const open = (owner: string, contextId: string | undefined) =>
      Effect.gen(function* () {
        yield* sweep
        const now = yield* Clock.currentTimeMillis
        const existing = contextId === undefined ? undefined : conversations.get(contextId)
        if (existing !== undefined) {
          if (existing.owner !== owner) return yield* new InvalidParams({ detail: "this contextId cannot be used" })
          existing.lastUsed = now
          return existing.id
        }
        const id = contextId ?? randomUUID()
        yield* slots.acquire(slotId(id), owner, "continue an existing conversation (contextId) or retry later")
        conversations.set(id, { id, owner, startedAt: now, lastUsed: now, turns: [] })
        return id
      })

    return {
      open,
      /** What the model sees of the conversation before the new message. */
      history: (id: string): Effect.Effect<ReadonlyArray<Message>> =>
        Effect.sync(() => (conversations.get(id)?.turns ?? []).flatMap(([q, a]) => [message.user(q), message.assistant(a)])),
      /** Records a finished exchange, keeping the last `contextTurns`. */
      remember: (id: string, question: string, answer: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => {
            const c = conversations.get(id)
            if (c === undefined) return
            c.lastUsed = now
            c.turns = config.contextTurns === 0 ? [] : [...c.turns, [question, answer] as const].slice(-config.contextTurns)
          })),
      size: Effect.sync(() => conversations.size)
    } as const
  })
}) {}
