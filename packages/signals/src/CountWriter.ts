/**
 * Deduplication counts written back to `status.deduplication`: one writer fiber wakes when something is counted,
 * waits `deduplicationWriteDelay` so the duplicates of that window share a write, then writes each counted request
 * once, a few at a time (under load they wait and fold more duplicates into one write rather than take the CPU and
 * the API from new signals). No fiber per duplicate.
 *
 * A write adds this replica's pending duplicates to the count the cluster had at the resourceVersion it was read at,
 * and is made against that version: another replica's write in between is a 409, after which the request is read
 * again and the sum retried. So replicas add up their duplicates instead of overwriting each other's.
 */
import { K8s } from "@kubemend/core/K8s"
import { type Duration, Effect, Fiber, Queue, Schedule } from "effect"
import { type Entry, observeCount } from "./Tracked.ts"

const conflictRetries = 8
const isOutage = (e: unknown) => typeof e === "object" && e !== null && (e as { _tag?: string })._tag === "K8sUnavailable"

export const makeCountWriter = (delay: Duration.Duration, writers: number) =>
  Effect.gen(function* () {
    const k8s = yield* K8s
    const dirty = new Set<Entry>()
    const wake = yield* Queue.sliding<void>(1)

    const readBack = (entry: Entry) => Effect.map(k8s.getCr("remediationrequests", entry.rrName), (rr) => observeCount(entry, rr))

    /** One write of what is pending; uninterruptible, so a write that went out is always accounted for once. */
    const attempt = (entry: Entry) =>
      Effect.uninterruptible(Effect.suspend(() => {
        const delta = entry.pending
        if (delta === 0) return Effect.succeed(true)
        if (entry.resourceVersion === undefined) return Effect.as(readBack(entry), false)
        const deduplication = { firstSeenAt: entry.firstSeen, lastSeenAt: entry.lastSeen, occurrenceCount: entry.written + delta }
        return k8s.patchCrStatus("remediationrequests", entry.rrName, { deduplication }, { resourceVersion: entry.resourceVersion }).pipe(
          Effect.map((rr) => {
            entry.pending -= delta
            observeCount(entry, rr)
            return true
          }),
          Effect.catchTag("K8sConflict", () => Effect.as(readBack(entry), false))
        )
      }))

    const write = (entry: Entry) =>
      Effect.gen(function* () {
        entry.writing = true
        for (let i = 0; i < conflictRetries; i++) if (yield* attempt(entry)) return
        return yield* Effect.fail(new Error(`still conflicting after ${conflictRetries} attempts`))
      }).pipe(
        Effect.retry({ schedule: Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(4))), while: isOutage }),
        Effect.catchAll((e) =>
          // A deleted request has nothing left to count into; anything else is tried again with the next write.
          "_tag" in e && e._tag === "K8sNotFound"
            ? Effect.sync(() => void (entry.pending = 0))
            : Effect.logWarning("could not write the deduplication count; trying again with the next write", e).pipe(
              Effect.zipRight(Effect.sync(() => mark(entry))),
              Effect.annotateLogs({ remediationRequest: entry.rrName })
            )
        ),
        Effect.ensuring(Effect.sync(() => void (entry.writing = false)))
      )

    const writeAll = Effect.suspend(() => {
      const batch = [...dirty]
      dirty.clear()
      return Effect.forEach(batch, write, { concurrency: writers, discard: true })
    })

    /** `entry` has pending duplicates: it goes out with the next write. */
    const mark = (entry: Entry) => {
      if (dirty.size === 0) wake.unsafeOffer(undefined)
      dirty.add(entry)
    }

    const writer = yield* Effect.forkScoped(Effect.forever(Queue.take(wake).pipe(Effect.zipRight(Effect.sleep(delay)), Effect.zipRight(writeAll))))
    // On shutdown (this finalizer runs before the writer is interrupted), what is counted but unwritten goes out.
    yield* Effect.addFinalizer(() => Fiber.interrupt(writer).pipe(Effect.zipRight(writeAll), Effect.timeout("5 seconds"), Effect.ignore))
    return { mark } as const
  })
