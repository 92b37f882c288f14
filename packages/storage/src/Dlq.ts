/**
 * The dead-letter queue: writes accepted (202) while the database is unreachable, kept durably until replayed.
 *
 * An append-only file under the data directory (`dead-letter.ndjson`, one entry per line, fsync'd before the 202
 * is answered); entries are removed by rewriting the file atomically after a replay. Replays are idempotent
 * (event ids are assigned before queueing), so a crash between commit and rewrite only replays twice. Capacity is
 * counted in events; past it the write is refused (`DeadLetterQueueFull`, 503) and counted. The Valkey stream
 * variant of the original is not implemented (no Redis client in the stack): a `valkey` block is ignored.
 */
import { DeadLetterQueueFull } from "@kubemend/core/Errors"
import { Metrics } from "@kubemend/core/Metrics"
import { Effect, Ref } from "effect"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { StorageConfig } from "./StorageConfig.ts"

export type DlqKind = "audit" | "notification"

export interface DlqEntry {
  readonly id: string
  readonly kind: DlqKind
  /** Number of events it holds (capacity is counted in events). */
  readonly count: number
  readonly payload: unknown
  readonly queuedAt: string
}

const stream = "audit"

export class Dlq extends Effect.Service<Dlq>()("@kubemend/storage/Dlq", {
  scoped: Effect.gen(function* () {
    const config = yield* StorageConfig
    const metrics = yield* Metrics
    const capacity = config.dlq.capacity
    const dir = Path.resolve(config.dlq.dir)
    const file = Path.join(dir, "dead-letter.ndjson")
    const warning = metrics.gauge({ name: "datastorage_dlq_warning", help: "1 when the dead-letter queue is at 80% of capacity", labelNames: ["stream"] })
    const critical = metrics.gauge({ name: "datastorage_dlq_critical", help: "1 when the dead-letter queue is at 90% of capacity", labelNames: ["stream"] })
    const depthGauge = metrics.gauge({ name: "datastorage_dlq_depth", help: "Events waiting in the dead-letter queue", labelNames: ["stream"] })
    const refused = metrics.counter({ name: "datastorage_dlq_refused_total", help: "Writes refused because the dead-letter queue was full", labelNames: ["stream"] })

    const loaded = yield* Effect.promise(async () => {
      await Fs.mkdir(dir, { recursive: true })
      const text = await Fs.readFile(file, "utf8").catch(() => "")
      // A torn last line (crash mid-append) was never acknowledged with 202, so it is dropped.
      return text.split("\n").flatMap((line): Array<DlqEntry> => {
        try {
          return line.trim() === "" ? [] : [JSON.parse(line) as DlqEntry]
        } catch {
          return []
        }
      })
    })
    const entries = yield* Ref.make<ReadonlyArray<DlqEntry>>(loaded)
    const lock = yield* Effect.makeSemaphore(1)

    const depthOf = (all: ReadonlyArray<DlqEntry>) => all.reduce((n, e) => n + e.count, 0)
    const publish = (all: ReadonlyArray<DlqEntry>) =>
      Effect.sync(() => {
        const depth = depthOf(all)
        depthGauge.set({ stream }, depth)
        warning.set({ stream }, depth >= capacity * 0.8 ? 1 : 0)
        critical.set({ stream }, depth >= capacity * 0.9 ? 1 : 0)
      })
    yield* publish(loaded)

    const append = (entry: DlqEntry) =>
      Effect.promise(async () => {
        const handle = await Fs.open(file, "a", 0o600)
        try {
          await handle.write(JSON.stringify(entry) + "\n")
          await handle.datasync()
        } finally {
          await handle.close()
        }
      })

    const rewrite = (remaining: ReadonlyArray<DlqEntry>) =>
      Effect.promise(async () => {
        const tmp = `${file}.${process.pid}.tmp`
        await Fs.writeFile(tmp, remaining.map((e) => JSON.stringify(e) + "\n").join(""), { mode: 0o600 })
        await Fs.rename(tmp, file)
      })

    /** Queues `payload` durably; fails when it would exceed the capacity. */
    const enqueue = (kind: DlqKind, payload: unknown, count: number) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const all = yield* Ref.get(entries)
          if (depthOf(all) + count > capacity) {
            refused.inc({ stream }, count)
            return yield* new DeadLetterQueueFull({ capacity, detail: "the database is unreachable and the dead-letter queue is full; retry later" })
          }
          const entry: DlqEntry = { id: randomUUID(), kind, count, payload, queuedAt: new Date().toISOString() }
          yield* append(entry)
          const next = [...all, entry]
          yield* Ref.set(entries, next)
          yield* publish(next)
        })
      ).pipe(Effect.withSpan("Dlq.enqueue"))

    /**
     * Hands entries, oldest first, to `write`; stops at the first failure (the database is still away) and keeps
     * that entry and the rest. Returns how many entries were written.
     */
    const replay = <E, R>(write: (entry: DlqEntry) => Effect.Effect<void, E, R>) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const all = yield* Ref.get(entries)
          let done = 0
          for (const entry of all) {
            const ok = yield* write(entry).pipe(Effect.as(true), Effect.catchAll(() => Effect.succeed(false)))
            if (!ok) break
            done++
          }
          if (done > 0) {
            const remaining = all.slice(done)
            yield* rewrite(remaining)
            yield* Ref.set(entries, remaining)
            yield* publish(remaining)
          }
          return done
        })
      ).pipe(Effect.withSpan("Dlq.replay"))

    return {
      enqueue,
      replay,
      capacity,
      /** Events waiting. */
      depth: Effect.map(Ref.get(entries), depthOf)
    } as const
  })
}) {}
