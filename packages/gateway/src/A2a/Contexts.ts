/**
 * A2A conversations (`contextId`): the earlier exchanges the model sees again on the next message, owned by the
 * user who started them and closed after `contextIdleTimeout`. Each open conversation holds one slot of the
 * gateway-wide `maxConcurrentSessions` pool (`SessionSlots`), the same pool MCP sessions draw from.
 *
 * A conversation is a record in the shared state (`SharedState`), so with Valkey any gateway replica continues it;
 * this replica remembers which ones it served, to free their slots once they idled out.
 */
import { Clock, Duration, Effect, Option, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { InvalidParams } from "@kubemend/core/Errors"
import { type Message, message } from "@kubemend/core/Llm"
import { SessionSlots } from "../Limits/SessionSlots.ts"
import { SharedState } from "../SharedState.ts"
import { A2aConfig } from "./Config.ts"

export { SessionSlots } from "../Limits/SessionSlots.ts"

interface Conversation {
  readonly owner: string
  readonly startedAt: number
  readonly lastUsed: number
  /** Alternating user / agent messages, the most recent `contextTurns` exchanges. */
  readonly turns: ReadonlyArray<readonly [string, string]>
}

const slotId = (contextId: string) => `a2a:${contextId}`
const recordKey = (contextId: string) => `a2a:ctx:${contextId}`

export class Contexts extends Effect.Service<Contexts>()("@kubemend/gateway/A2aContexts", {
  scoped: Effect.gen(function* () {
    const config = yield* A2aConfig
    const slots = yield* SessionSlots
    const shared = yield* SharedState
    /** Conversations this replica served, by id -> owner. */
    const served = new Map<string, string>()
    const idle = config.contextIdleTimeout

    const read = (id: string) => Effect.map(shared.get(recordKey(id)), Option.map((raw) => JSON.parse(raw) as Conversation))
    const write = (id: string, c: Conversation) => shared.put(recordKey(id), JSON.stringify(c), idle)

    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      for (const [id, owner] of [...served]) {
        const c = yield* read(id)
        if (Option.isSome(c) && now - c.value.lastUsed < Duration.toMillis(idle)) continue
        served.delete(id)
        yield* slots.release(slotId(id), owner)
      }
    })
    yield* sweep.pipe(Effect.repeat(Schedule.spaced(Duration.minutes(1))), Effect.forkScoped)
    // Shared conversations outlive this replica (another one continues them); memory ones end with it.
    if (shared.backend === "memory") {
      yield* Effect.addFinalizer(() => Effect.forEach([...served], ([id, owner]) => slots.release(slotId(id), owner), { discard: true }))
    }

    /**
     * The caller's conversation `contextId`, opened when new (a fresh id when none is given). Someone else's
     * conversation is refused without saying whose it is.
     */
    const open = (owner: string, contextId: string | undefined) =>
      Effect.gen(function* () {
        yield* sweep
        const now = yield* Clock.currentTimeMillis
        const existing = contextId === undefined ? Option.none() : yield* read(contextId)
        if (contextId !== undefined && Option.isSome(existing)) {
          if (existing.value.owner !== owner) return yield* new InvalidParams({ detail: "this contextId cannot be used" })
          yield* write(contextId, { ...existing.value, lastUsed: now })
          yield* slots.touch(slotId(contextId), owner, idle)
          served.set(contextId, owner)
          return contextId
        }
        const id = contextId ?? randomUUID()
        yield* slots.acquire(slotId(id), owner, idle, "continue an existing conversation (contextId) or retry later")
        yield* write(id, { owner, startedAt: now, lastUsed: now, turns: [] })
        served.set(id, owner)
        return id
      })

    return {
      open,
      /** What the model sees of the conversation before the new message. */
      history: (id: string): Effect.Effect<ReadonlyArray<Message>> =>
        Effect.map(read(id), (c) => Option.match(c, { onNone: () => [], onSome: (v) => v.turns.flatMap(([q, a]) => [message.user(q), message.assistant(a)]) })),
      /** Records a finished exchange, keeping the last `contextTurns`. */
      remember: (id: string, question: string, answer: string) =>
        Effect.gen(function* () {
          const c = yield* read(id)
          if (Option.isNone(c)) return
          const now = yield* Clock.currentTimeMillis
          const turns = config.contextTurns === 0 ? [] : [...c.value.turns, [question, answer] as const].slice(-config.contextTurns)
          yield* write(id, { ...c.value, lastUsed: now, turns })
        }),
      /** Conversations this replica serves. */
      size: Effect.sync(() => served.size)
    } as const
  })
}) {}
