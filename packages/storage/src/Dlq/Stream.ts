/**
 * The Valkey backend of the dead-letter queue: one stream entry per queued write (`XADD <streamKey> * count <n>
 * entry <json>`), read back oldest first with `XRANGE` and removed with `XDEL` once written to the database.
 *
 * Every replica of the service shares the stream, so the capacity is checked where the entries are: a counter of
 * queued events (`<streamKey>:events`) is updated in the same Lua script as the `XADD`/`XDEL`, which makes
 * check-and-append atomic across replicas; when the counter is missing it is recounted from the stream, and it is
 * dropped when `XLEN` says the stream is empty. One replica replays at a time (`<streamKey>:replay`, a lock that
 * expires); an overlap past its expiry only replays entries twice, which the event-id skip makes harmless.
 *
 * A 202 is as durable as the server's persistence (AOF on a Valkey deployment). When Valkey cannot be reached
 * while the database is away, the write is refused (503, counted with reason `unavailable`) within the configured
 * deadline. A call that timed out may still land on the server; the client's retry then queues the same event ids
 * twice, and the replay stores them once.
 */
import { DeadLetterQueueFull, DependencyUnavailable } from "@kubemend/core/Errors"
import { Duration, Effect, Ref, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type { DlqEntry, DlqKind, DlqShape } from "../Dlq.ts"
import { StorageConfig, type ValkeySettings } from "../StorageConfig.ts"
import { makeGauges } from "./Gauges.ts"
import { connect } from "./Valkey.ts"

/** Entries read per `XRANGE`. */
const pageSize = 100
/** How long one replica may hold the replay lock (it releases it when done). */
const replayLockTtl = Duration.seconds(60)

/** Events queued: the counter, or a recount from the stream when the counter is missing; 0 for an empty stream. */
const depthLua = `
local function depth(stream, counter)
  if redis.call('XLEN', stream) == 0 then redis.call('DEL', counter) return 0 end
  local n = redis.call('GET', counter)
  if n then return tonumber(n) end
  local total = 0
  for _, e in ipairs(redis.call('XRANGE', stream, '-', '+')) do
    local f = e[2]
    for i = 1, #f, 2 do if f[i] == 'count' then total = total + tonumber(f[i + 1]) end end
  end
  redis.call('SET', counter, total)
  return total
end
`

/** KEYS: stream, counter. Returns the events queued. */
const depthScript = `${depthLua}
return depth(KEYS[1], KEYS[2])`

/** KEYS: stream, counter; ARGV: count, capacity, entry. Returns {1 appended | 0 full, events queued}. */
const enqueueScript = `${depthLua}
local n = depth(KEYS[1], KEYS[2])
local count = tonumber(ARGV[1])
if n + count > tonumber(ARGV[2]) then return {0, n} end
redis.call('XADD', KEYS[1], '*', 'count', ARGV[1], 'entry', ARGV[3])
redis.call('SET', KEYS[2], n + count)
return {1, n + count}`

/** KEYS: stream, counter; ARGV: id, count. Only an entry this call deleted is subtracted. Returns the events queued. */
const removeScript = `${depthLua}
if redis.call('XDEL', KEYS[1], ARGV[1]) == 1 and redis.call('XLEN', KEYS[1]) > 0 then
  redis.call('DECRBY', KEYS[2], ARGV[2])
end
return depth(KEYS[1], KEYS[2])`

/** KEYS: lock; ARGV: token. */
const unlockScript = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`

const StoredEntry = Schema.parseJson(
  Schema.Struct({
    id: Schema.String,
    kind: Schema.Literal("audit", "notification"),
    count: Schema.Number,
    payload: Schema.Unknown,
    queuedAt: Schema.String
  })
)
const decodeEntry = Schema.decodeUnknownOption(StoredEntry)

const field = (fields: ReadonlyArray<string>, name: string) => {
  const i = fields.findIndex((f, n) => n % 2 === 0 && f === name)
  return i < 0 ? undefined : fields[i + 1]
}

export const makeStream = (settings: ValkeySettings) =>
  Effect.gen(function* () {
    const config = yield* StorageConfig
    const capacity = config.dlq.capacity
    const gauges = yield* makeGauges(capacity)
    const valkey = yield* connect(settings)
    const stream = settings.streamKey
    const counter = `${stream}:events`
    const lockKey = `${stream}:replay`
    const lastDepth = yield* Ref.make(0)
    const lock = yield* Effect.makeSemaphore(1)

    const observed = (events: number) => Effect.zipRight(Ref.set(lastDepth, events), gauges.publish(events))

    const depth = valkey.call("depth", (r) => r.eval(depthScript, 2, stream, counter)).pipe(
      Effect.flatMap((n) => Effect.as(observed(Number(n)), Number(n))),
      Effect.catchTag("ValkeyUnavailable", () => Ref.get(lastDepth))
    )
    // Publishes the gauges of what other replicas (or a previous run) left in the stream.
    yield* depth

    const enqueue = (kind: DlqKind, payload: unknown, count: number) =>
      Effect.gen(function* () {
        const entry: DlqEntry = { id: randomUUID(), kind, count, payload, queuedAt: new Date().toISOString() }
        const reply = yield* valkey.call("XADD", (r) => r.eval(enqueueScript, 2, stream, counter, count, capacity, JSON.stringify(entry))).pipe(
          Effect.catchTag("ValkeyUnavailable", (e) =>
            Effect.gen(function* () {
              yield* gauges.refuse(count, "unavailable")
              yield* Effect.logWarning("database and dead-letter queue both unreachable; write refused").pipe(
                Effect.annotateLogs({ valkey: valkey.address, events: count, cause: String(e.cause) })
              )
              // Not a full queue: nothing is there to take the write, which is what service-unavailable says.
              return yield* new DependencyUnavailable({
                dependency: "dead-letter queue",
                detail: "the database is unreachable and so is the dead-letter queue (Valkey); nothing was stored, retry later"
              })
            }))
        )
        // The script's reply: {1 appended | 0 full, events queued}.
        const [appended, queued] = reply as [number, number]
        yield* observed(queued)
        if (appended === 0) {
          yield* gauges.refuse(count, "full")
          return yield* new DeadLetterQueueFull({ capacity, detail: "the database is unreachable and the dead-letter queue is full; retry later" })
        }
      }).pipe(Effect.withSpan("Dlq.enqueue", { attributes: { backend: "valkey", events: count } }))

    const remove = (id: string, count: number) =>
      Effect.flatMap(valkey.call("XDEL", (r) => r.eval(removeScript, 2, stream, counter, id, count)), (n) => observed(Number(n)))

    /** Writes pages oldest first until the stream is empty or a write fails; counts what it wrote into `done`. */
    const drain = <E, R>(write: (entry: DlqEntry) => Effect.Effect<void, E, R>, done: Ref.Ref<number>) =>
      Effect.gen(function* () {
        // Bounded: the stream never holds more than `capacity` entries, plus what arrives during the replay.
        for (let page = 0; page <= Math.ceil(capacity / pageSize) + 1; page++) {
          const entries = yield* valkey.call("XRANGE", (r) => r.xrange(stream, "-", "+", "COUNT", pageSize))
          if (entries.length === 0) return
          for (const [id, fields] of entries) {
            const count = Number(field(fields, "count") ?? 0)
            const decoded = decodeEntry(field(fields, "entry"))
            if (decoded._tag === "None") {
              yield* Effect.logError("unreadable dead-letter entry; dropped").pipe(Effect.annotateLogs({ stream, entry: id }))
              yield* remove(id, count)
              continue
            }
            const written = yield* write(decoded.value).pipe(Effect.as(true), Effect.catchAll(() => Effect.succeed(false)))
            if (!written) return
            yield* remove(id, decoded.value.count)
            yield* Ref.update(done, (n) => n + 1)
          }
        }
      })

    const replay = <E, R>(write: (entry: DlqEntry) => Effect.Effect<void, E, R>) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const done = yield* Ref.make(0)
          const token = randomUUID()
          yield* valkey.call("SET NX", (r) => r.set(lockKey, token, "PX", Duration.toMillis(replayLockTtl), "NX")).pipe(
            Effect.flatMap((locked) =>
              locked === "OK"
                ? drain(write, done).pipe(Effect.ensuring(valkey.call("unlock", (r) => r.eval(unlockScript, 1, lockKey, token)).pipe(Effect.ignore)))
                : Effect.void
            ),
            Effect.catchTag(
              "ValkeyUnavailable",
              (e) => Effect.logDebug("dead-letter replay paused: Valkey unreachable").pipe(Effect.annotateLogs({ valkey: valkey.address, command: e.command }))
            )
          )
          return yield* Ref.get(done)
        })
      ).pipe(Effect.withSpan("Dlq.replay", { attributes: { backend: "valkey" } }))

    return { enqueue, replay, capacity, depth } satisfies DlqShape
  })
