/**
 * The shared-state store on a Valkey (or Redis) server, through ioredis, with the connection options storage's
 * dead-letter queue also uses (core/src/Valkey.ts). Commands fail at once while the server is away (no offline queue, no resend after
 * a reconnect) and each has the configured deadline: the caller (Resilient.ts) then answers from memory instead of
 * waiting. Slots and buckets change in Lua scripts, so concurrent replicas never overshoot a cap. Announcements
 * are pub/sub messages, received on a second connection of their own (a subscribed connection sends nothing else).
 */
import { Duration, Effect, Option, PubSub, Runtime, Stream } from "effect"
import { acquireClient, ValkeyUnavailable } from "@kubemend/core/Valkey"
import { Redis } from "ioredis"
import type { BucketSpec } from "../Limits/Buckets.ts"
import type { Admission, Notice, Store, Takes } from "./Store.ts"
import { giveBackScript, slotScripts, takeScript } from "./Scripts.ts"
import type { ValkeySettings } from "./ValkeySettings.ts"

/** Announcements received but not yet taken by the slowest watcher; past it the receiving waits for them. */
const noticeBuffer = 1024

type Scripted = Redis & {
  kmSlotAcquire(...args: ReadonlyArray<string | number>): Promise<string>
  kmSlotTouch(...args: ReadonlyArray<string | number>): Promise<number>
  kmTake(keys: number, ...args: ReadonlyArray<string | number>): Promise<[number, string]>
  kmGiveBack(...args: ReadonlyArray<string | number>): Promise<number>
}

/** A store on the server of `settings` for the scope; it starts (and fails its calls) while the server is away. */
export const valkeyStore = (settings: ValkeySettings) =>
  Effect.gen(function* () {
    const address = `${settings.host}:${settings.port}`
    const redis = yield* acquireClient(settings, "kubemend-gateway", (o) => {
      const r = new Redis(o)
      r.defineCommand("kmSlotAcquire", { numberOfKeys: 2, lua: slotScripts.acquire })
      r.defineCommand("kmSlotTouch", { numberOfKeys: 2, lua: slotScripts.touch })
      // As many keys as buckets taken from together: the count goes first in each call.
      r.defineCommand("kmTake", { lua: takeScript })
      r.defineCommand("kmGiveBack", { numberOfKeys: 1, lua: giveBackScript })
      // Errors surface through the calls (and Resilient.ts logs the transitions); without a listener ioredis
      // prints every reconnection failure.
      r.on("error", () => undefined)
      return r as Scripted
    })
    yield* Effect.promise(() => redis.connect().catch(() => undefined))

    // Announcements: one subscribed connection for every topic. After each (re)connection it subscribes again
    // and tells every watcher that what was announced meanwhile is lost.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const received = yield* PubSub.bounded<readonly [channel: string | undefined, notice: Notice]>(noticeBuffer)
    const channels = new Set<string>()
    const subscriber = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const s = redis.duplicate({ connectionName: "kubemend-gateway-notices", autoResubscribe: false })
        s.on("error", () => undefined)
        s.on("message", (channel: string, message: string) => void runFork(PubSub.publish(received, [channel, { _tag: "Announced", message }])))
        s.on("ready", () => {
          if (channels.size === 0) return
          void s.subscribe(...channels).then(
            () => runFork(PubSub.publish(received, [undefined, { _tag: "Missed" }])),
            () => undefined
          )
        })
        return s
      }),
      (s) => Effect.sync(() => s.disconnect())
    )
    yield* Effect.promise(() => subscriber.connect().catch(() => undefined))

    const call = <A>(command: string, run: (r: Scripted) => Promise<A>) =>
      Effect.tryPromise({ try: () => run(redis), catch: (cause) => new ValkeyUnavailable({ command, cause }) })

    const key = (k: string) => `${settings.keyPrefix}:${k}`
    const slotsKey = key("slots")
    const userSlots = (owner: string) => key(`slots:user:${owner}`)
    const ms = (d: Duration.Duration) => Math.max(1, Math.ceil(Duration.toMillis(d)))
    const now = Effect.clockWith((c) => c.currentTimeMillis)
    /** Records carry their own expiry (`<expiresAt>|<value>`): Effect's Clock decides, Valkey's TTL only collects. */
    const sep = "|"

    /** How long an untouched bucket is kept: past its refill time it is full, as a new one would be. */
    const bucketTtl = (spec: BucketSpec) => Math.ceil(spec.capacity / spec.perMs) + 1000
    const takeAll: Store<ValkeyUnavailable>["takeAll"] = (takes) =>
      Effect.flatMap(now, (t) => {
        const args = takes.flatMap(([, spec]) => [spec.capacity, spec.perMs, bucketTtl(spec)])
        return call("EVALSHA take", (r) => r.kmTake(takes.length, ...takes.map(([k]) => key(k)), t, ...args))
      }).pipe(
        Effect.map(([refused, waitMs]): Takes =>
          refused === 0
            ? { ok: true }
            : { ok: false, refused: refused - 1, retryAfterSeconds: Math.max(1, Math.ceil(Number(waitMs) / 1000)) }
        )
      )

    const store: Store<ValkeyUnavailable> = {
      get: (k) =>
        Effect.flatMap(now, (t) =>
          Effect.map(call("GET", (r) => r.get(key(k))), (raw) => {
            if (raw === null) return Option.none()
            const at = raw.indexOf(sep)
            return Number(raw.slice(0, at)) > t ? Option.some(raw.slice(at + 1)) : Option.none()
          })),
      put: (k, value, ttl) => Effect.flatMap(now, (t) => call("SET", (r) => r.set(key(k), `${t + ms(ttl)}${sep}${value}`, "PX", ms(ttl)))).pipe(Effect.asVoid),
      remove: (k) => call("DEL", (r) => r.del(key(k))).pipe(Effect.asVoid),
      acquireSlot: (id, owner, limits, ttl) =>
        Effect.flatMap(now, (t) =>
          call("EVALSHA slot acquire", (r) => r.kmSlotAcquire(slotsKey, userSlots(owner), id, t, t + ms(ttl), limits.total, limits.perUser, ms(ttl)))).pipe(
            Effect.map((a) =>
              a as Admission
            )
          ),
      touchSlot: (id, owner, ttl) =>
        Effect.flatMap(now, (t) => call("EVALSHA slot touch", (r) => r.kmSlotTouch(slotsKey, userSlots(owner), id, t, t + ms(ttl), ms(ttl)))).pipe(
          Effect.asVoid
        ),
      releaseSlot: (id, owner) => call("ZREM", (r) => r.multi().zrem(slotsKey, id).zrem(userSlots(owner), id).exec()).pipe(Effect.asVoid),
      slotsInUse: Effect.flatMap(now, (t) => call("ZCOUNT", (r) => r.zcount(slotsKey, `(${t}`, "+inf"))),
      takeAll,
      take: (k, spec) => Effect.map(takeAll([[k, spec]]), (r) => r.ok ? r : { ok: false, retryAfterSeconds: r.retryAfterSeconds }),
      giveBack: (k, spec) =>
        Effect.flatMap(now, (t) => call("EVALSHA give back", (r) => r.kmGiveBack(key(k), t, spec.capacity, spec.perMs, bucketTtl(spec)))).pipe(Effect.asVoid),
      announce: (topic, message) => call("PUBLISH", (r) => r.publish(key(`notice:${topic}`), message)).pipe(Effect.asVoid),
      notices: (topic) =>
        Stream.unwrapScoped(Effect.gen(function* () {
          const channel = key(`notice:${topic}`)
          // Watching before subscribing: nothing announced once the subscription is in place is lost.
          const queue = yield* PubSub.subscribe(received)
          if (!channels.has(channel)) {
            channels.add(channel)
            // Unreachable now: the next "ready" subscribes.
            yield* Effect.promise(() => subscriber.subscribe(channel).catch(() => undefined))
          }
          return Stream.fromQueue(queue).pipe(Stream.filter(([c]) => c === undefined || c === channel), Stream.map(([, n]) => n))
        })),
      ping: call("PING", (r) => r.ping()).pipe(Effect.asVoid)
    }
    return { ...store, address } as const
  })
