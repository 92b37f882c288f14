/**
 * The file backend of the dead-letter queue: `dead-letter.ndjson` under `dlq.dir`, one entry per line, fsync'd
 * before the 202 is answered; entries are removed by rewriting the file atomically after a replay. One process
 * owns the file (the queue is held in memory too), so it suits a single replica and the local platform.
 */
import { DeadLetterQueueFull } from "@kubemend/core/Errors"
import { Effect, Ref } from "effect"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import type { DlqEntry, DlqKind, DlqShape } from "../Dlq.ts"
import { StorageConfig } from "../StorageConfig.ts"
import { makeGauges } from "./Gauges.ts"

export const makeFile = Effect.gen(function* () {
  const config = yield* StorageConfig
  const capacity = config.dlq.capacity
  const gauges = yield* makeGauges(capacity)
  const dir = Path.resolve(config.dlq.dir)
  const file = Path.join(dir, "dead-letter.ndjson")

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
  const publish = (all: ReadonlyArray<DlqEntry>) => gauges.publish(depthOf(all))
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

  const enqueue = (kind: DlqKind, payload: unknown, count: number) =>
    lock.withPermits(1)(
      Effect.gen(function* () {
        const all = yield* Ref.get(entries)
        if (depthOf(all) + count > capacity) {
          yield* gauges.refuse(count, "full")
          return yield* new DeadLetterQueueFull({ capacity, detail: "the database is unreachable and the dead-letter queue is full; retry later" })
        }
        const entry: DlqEntry = { id: randomUUID(), kind, count, payload, queuedAt: new Date().toISOString() }
        yield* append(entry)
        const next = [...all, entry]
        yield* Ref.set(entries, next)
        yield* publish(next)
      })
    ).pipe(Effect.withSpan("Dlq.enqueue"))

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

  return { enqueue, replay, capacity, depth: Effect.map(Ref.get(entries), depthOf) } satisfies DlqShape
})
