/**
 * The shared-state store in one replica's memory: the default without Valkey, and the fallback while Valkey is
 * unreachable. Bounded: expired records are dropped when the table grows, then the oldest ones.
 */
import { Clock, Duration, Effect, Option, PubSub, Stream } from "effect"
import { type BucketSpec, Buckets } from "../Limits/Buckets.ts"
import type { Admission, Notice, SlotLimits, Store, Takes } from "./Store.ts"

const maxRecords = 100_000
/** Announcements not yet taken by the slowest watcher; past it `announce` waits for them. */
const announcementBuffer = 1024

interface Slot {
  readonly owner: string
  expiresAt: number
}

export const memoryStore: Effect.Effect<Store<never>> = Effect.gen(function* () {
  const announced = yield* PubSub.bounded<readonly [topic: string, notice: Notice]>(announcementBuffer)
  const records = new Map<string, { readonly value: string; readonly expiresAt: number }>()
  const slots = new Map<string, Slot>()
  /** One table per bucket shape (the ip, user and tool limits differ). */
  const buckets = new Map<string, Buckets>()
  const now = Clock.currentTimeMillis

  const prune = (t: number) => {
    for (const [k, r] of records) if (r.expiresAt <= t) records.delete(k)
    for (const k of records.keys()) {
      if (records.size < maxRecords) break
      records.delete(k)
    }
  }
  const live = (t: number) => {
    for (const [id, s] of slots) if (s.expiresAt <= t) slots.delete(id)
  }
  const tableFor = (spec: BucketSpec) => {
    const shape = `${spec.capacity}/${spec.perMs}`
    let table = buckets.get(shape)
    if (table === undefined) buckets.set(shape, table = new Buckets(spec))
    return table
  }

  const store: Store<never> = {
    get: (key) =>
      Effect.map(now, (t) => {
        const r = records.get(key)
        return r === undefined || r.expiresAt <= t ? Option.none() : Option.some(r.value)
      }),
    put: (key, value, ttl) =>
      Effect.map(now, (t) => {
        if (records.size >= maxRecords) prune(t)
        records.delete(key)
        records.set(key, { value, expiresAt: t + Duration.toMillis(ttl) })
      }),
    remove: (key) => Effect.sync(() => void records.delete(key)),
    acquireSlot: (id: string, owner: string, limits: SlotLimits, ttl: Duration.Duration) =>
      Effect.map(now, (t): Admission => {
        live(t)
        const expiresAt = t + Duration.toMillis(ttl)
        const held = slots.get(id)
        if (held !== undefined) {
          held.expiresAt = expiresAt
          return "admitted"
        }
        let mine = 0
        for (const s of slots.values()) if (s.owner === owner) mine++
        if (mine >= limits.perUser) return "user-full"
        if (slots.size >= limits.total) return "total-full"
        slots.set(id, { owner, expiresAt })
        return "admitted"
      }),
    touchSlot: (id, _owner, ttl) =>
      Effect.map(now, (t) => {
        const s = slots.get(id)
        if (s !== undefined && s.expiresAt > t) s.expiresAt = t + Duration.toMillis(ttl)
      }),
    releaseSlot: (id) => Effect.sync(() => void slots.delete(id)),
    slotsInUse: Effect.map(now, (t) => {
      live(t)
      return slots.size
    }),
    take: (key, spec) => Effect.map(now, (t) => tableFor(spec).take(key, t)),
    giveBack: (key, spec) => Effect.map(now, (t) => tableFor(spec).giveBack(key, t)),
    takeAll: (takes) =>
      Effect.map(now, (t): Takes => {
        for (const [i, [key, spec]] of takes.entries()) {
          const taken = tableFor(spec).take(key, t)
          if (!taken.ok) return { ok: false, refused: i, retryAfterSeconds: taken.retryAfterSeconds }
        }
        return { ok: true }
      }),
    announce: (topic, message) => PubSub.publish(announced, [topic, { _tag: "Announced", message }]).pipe(Effect.asVoid),
    notices: (topic) => Stream.fromPubSub(announced).pipe(Stream.filter(([t]) => t === topic), Stream.map(([, n]) => n)),
    ping: Effect.void
  }
  return store
})
