import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Fiber, Layer, Option, Ref, Scope, TestClock } from "effect"
import { Audit, AuditConfig, AuditRecorder } from "../src/Audit.ts"
import { DependencyUnavailable, Unauthenticated, ValidationError } from "../src/Errors.ts"
import { Metrics } from "../src/Metrics.ts"
import { Storage, type StorageError, type StorageService } from "../src/Storage.ts"
import type { AuditEventInput } from "../src/StorageApi.ts"

const event = (i: number): AuditEventInput => ({
  version: "1.0",
  event_type: "apifrontend.tool.executed",
  event_timestamp: "2026-01-01T00:00:00.000Z",
  event_category: "apifrontend",
  event_action: "executed",
  event_outcome: "success",
  correlation_id: `rr-${i}`,
  event_data: { i }
})

type Answer = StorageError | "ok" | "die"

/**
 * A storage whose `writeEvents` answers from `script` (one entry per call, the last repeats; or a function of the
 * batch) and records batches.
 */
const scriptedStorage = (script: ReadonlyArray<Answer> | ((events: ReadonlyArray<AuditEventInput>) => Answer)) =>
  Effect.gen(function* () {
    const batches = yield* Ref.make<ReadonlyArray<ReadonlyArray<AuditEventInput>>>([])
    const calls = yield* Ref.make(0)
    const unexpected = () => Effect.die("not used by Audit")
    const service: StorageService = {
      writeEvents: (events) =>
        Effect.gen(function* () {
          const n = yield* Ref.getAndUpdate(calls, (c) => c + 1)
          const answer = typeof script === "function" ? script(events) : script[Math.min(n, script.length - 1)]!
          if (answer === "die") return yield* Effect.die(new RangeError("Maximum call stack size exceeded"))
          yield* Ref.update(batches, (all) => [...all, events])
          if (answer !== "ok") return yield* Effect.fail(answer)
          return { eventIds: events.map((e) => e.event_id!), queued: false }
        }),
      queryEvents: unexpected,
      verifyChain: unexpected,
      reconstruct: unexpected,
      effectiveness: unexpected,
      workflowEffectiveness: unexpected,
      remediationHistory: unexpected,
      listWorkflows: unexpected,
      getWorkflow: unexpected,
      registerWorkflow: unexpected,
      listActions: unexpected,
      listWorkflowsByAction: unexpected,
      registerActionType: unexpected,
      disableWorkflow: unexpected,
      updateActionType: unexpected,
      disableActionType: unexpected,
      recordNotification: unexpected
    }
    return { service, batches }
  })

const droppedTotal = Effect.flatMap(Metrics, (m) =>
  Effect.promise(async () => {
    const metric = (await m.registers[0]!.getMetricsAsJSON()).find((x) => x.name === "audit_events_dropped_total")
    return (metric?.values ?? []).filter((v) => v.labels["service"] === "gateway").reduce((a, v) => a + v.value, 0)
  }))

/** Builds the live Audit layer in a scope the test controls (so it can check the flush on close). */
const withAudit = (script: Parameters<typeof scriptedStorage>[0], settings: Partial<AuditConfig["Type"]> = {}) =>
  Effect.gen(function* () {
    const storage = yield* scriptedStorage(script)
    const scope = yield* Scope.make()
    const layer = Audit.layer.pipe(
      Layer.provide(Layer.mergeAll(Layer.succeed(Storage, storage.service), AuditConfig.layer("gateway", settings)))
    )
    const context = yield* Layer.buildWithScope(layer, scope)
    // Let the sender's first (empty) pass run, so events emitted next wait for the interval.
    yield* TestClock.adjust(Duration.zero)
    return { audit: Context.get(context, Audit), scope, batches: storage.batches }
  })

const sizes = (batches: Ref.Ref<ReadonlyArray<ReadonlyArray<AuditEventInput>>>) => Effect.map(Ref.get(batches), (b) => b.map((x) => x.length))

describe("Audit", () => {
  it.effect("emit returns at once; the buffer goes out every flush interval in batches", () =>
    Effect.gen(function* () {
      const { audit, batches, scope } = yield* withAudit(["ok"], { batchSize: 50 })
      for (let i = 0; i < 120; i++) yield* audit.emit(event(i))
      expect(yield* sizes(batches)).toEqual([])
      yield* TestClock.adjust("1 second")
      expect(yield* sizes(batches)).toEqual([50, 50, 20])
      const ids = (yield* Ref.get(batches)).flat().map((e) => e.event_id)
      expect(new Set(ids).size).toBe(120)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("a full buffer drops new events and counts them in audit_events_dropped_total{service}", () =>
    Effect.gen(function* () {
      const before = yield* droppedTotal
      const { audit, batches, scope } = yield* withAudit(["ok"], { bufferSize: 5 })
      for (let i = 0; i < 8; i++) yield* audit.emit(event(i))
      expect((yield* droppedTotal) - before).toBe(3)
      yield* TestClock.adjust("1 second")
      expect(yield* sizes(batches)).toEqual([5])
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("retries an unavailable storage with capped backoff, resending the same event ids", () =>
    Effect.gen(function* () {
      const down = new DependencyUnavailable({ dependency: "storage" })
      const { audit, batches, scope } = yield* withAudit([down, down, down, "ok"], {
        retryBase: Duration.millis(100),
        retryCap: Duration.millis(300)
      })
      yield* audit.emit(event(1))
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("2 seconds")
      const sent = yield* Ref.get(batches)
      expect(sent).toHaveLength(4)
      expect(new Set(sent.map((b) => b[0]!.event_id)).size).toBe(1)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("a batch storage refuses as invalid is halved until the bad event is alone: only it is dropped and counted", () =>
    Effect.gen(function* () {
      const before = yield* droppedTotal
      const bad = (events: ReadonlyArray<AuditEventInput>): Answer =>
        events.some((e) => e.correlation_id === "rr-5") ? new ValidationError({ detail: "NUL" }) : "ok"
      const { audit, batches, scope } = yield* withAudit(bad)
      for (let i = 0; i < 8; i++) yield* audit.emit(event(i))
      yield* TestClock.adjust("1 second")
      // 8 refused; 4 stored, 4 refused; of those, 2 refused (1 stored, rr-5 refused alone), 2 stored.
      expect(yield* sizes(batches)).toEqual([8, 4, 4, 2, 1, 1, 2])
      const stored = (yield* Ref.get(batches)).filter((b) => !b.some((e) => e.correlation_id === "rr-5")).flat()
      expect(stored.map((e) => e.correlation_id).sort()).toEqual(["rr-0", "rr-1", "rr-2", "rr-3", "rr-4", "rr-6", "rr-7"])
      expect((yield* droppedTotal) - before).toBe(1)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("NUL in an event's text is sent as U+FFFD, so the event is not refused", () =>
    Effect.gen(function* () {
      const { audit, batches, scope } = yield* withAudit(["ok"])
      yield* audit.emit({ ...event(1), actor_id: "a\u0000b", event_data: { "k\u0000": ["v\u0000"] } })
      yield* audit.emit(event(2))
      yield* TestClock.adjust("1 second")
      const sent = (yield* Ref.get(batches)).flat()
      expect(sent[0]).toMatchObject({ actor_id: "a\ufffdb", event_data: { "k\ufffd": ["v\ufffd"] } })
      expect(sent[1]).toEqual({ ...event(2), event_id: sent[1]!.event_id })
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("a batch that cannot be sent at all (a defect) is halved like a refused one, and the sender lives on", () =>
    Effect.gen(function* () {
      const before = yield* droppedTotal
      const { audit, batches, scope } = yield* withAudit((events) => (events.some((e) => e.correlation_id === "rr-2") ? "die" : "ok"))
      for (let i = 0; i < 4; i++) yield* audit.emit(event(i))
      yield* TestClock.adjust("1 second")
      // Stored: rr-0 + rr-1, then rr-3 (4, then 2 + 2, then 1 + 1 died before being recorded).
      expect((yield* Ref.get(batches)).map((b) => b.map((e) => e.correlation_id))).toEqual([["rr-0", "rr-1"], ["rr-3"]])
      expect((yield* droppedTotal) - before).toBe(1)
      yield* audit.emit(event(9))
      yield* TestClock.adjust("1 second")
      expect((yield* Ref.get(batches)).at(-1)!.map((e) => e.correlation_id)).toEqual(["rr-9"])
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("a batch refused for another reason (the token) is dropped whole, not split", () =>
    Effect.gen(function* () {
      const before = yield* droppedTotal
      const { audit, batches, scope } = yield* withAudit([new Unauthenticated({ reason: "token_review_failed" })])
      for (let i = 0; i < 4; i++) yield* audit.emit(event(i))
      yield* TestClock.adjust("1 second")
      expect(yield* sizes(batches)).toEqual([4])
      expect((yield* droppedTotal) - before).toBe(4)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("closing the layer (drain) flushes what is buffered", () =>
    Effect.gen(function* () {
      const { audit, batches, scope } = yield* withAudit(["ok"], { flushInterval: Duration.minutes(10) })
      yield* audit.emit(event(1))
      yield* audit.emit(event(2))
      yield* TestClock.adjust("1 second")
      expect(yield* sizes(batches)).toEqual([])
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* Fiber.join(closing)
      expect(yield* sizes(batches)).toEqual([2])
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("closing the layer while storage is down ends within flushTimeout, though the sender is mid-retry", () =>
    Effect.gen(function* () {
      const down = new DependencyUnavailable({ dependency: "storage" })
      const { audit, scope } = yield* withAudit([down], { flushTimeout: Duration.seconds(5), maxRetries: 20 })
      yield* audit.emit(event(1))
      // The periodic sender takes the event and starts retrying the unavailable storage (capped at 10 s a try).
      yield* TestClock.adjust("1 second")
      yield* audit.emit(event(2))
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* TestClock.adjust("5 seconds")
      // Finalizers are uninterruptible: without opting back in, the timeout could not end the wait for the sender.
      expect(Option.isSome(yield* Fiber.poll(closing))).toBe(true)
    }).pipe(Effect.provide(Metrics.Default)))

  it.effect("the recording layer keeps what was emitted, with ids", () =>
    Effect.gen(function* () {
      const audit = yield* Audit
      yield* audit.emit(event(1))
      const [recorded] = yield* (yield* AuditRecorder).events
      expect(recorded).toMatchObject({ correlation_id: "rr-1", event_id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    }).pipe(Effect.provide(Audit.layerRecording)))
})
