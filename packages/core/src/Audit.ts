/**
 * Audit emission for the gateway and the agent. `emit` never blocks a request and never fails: the event gets its
 * id (so a resent batch cannot duplicate) and goes into a bounded buffer; when the buffer is full it is dropped and
 * counted in `audit_events_dropped_total{service}`. A scoped fiber sends the buffer every `flushInterval` in
 * batches of `batchSize` to `POST /api/v1/audit/events/batch`, retrying an unavailable storage with capped
 * exponential backoff; a batch storage refuses as invalid (400) is halved until the refused events are alone, and
 * those are dropped and counted. NUL, which storage refuses, goes out as U+FFFD. Closing the layer (drain) flushes
 * what is left within `flushTimeout`.
 */
import { Config, Context, Duration, Effect, FiberRef, Layer, Option, Queue, Ref, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { currentRequestId } from "./ApiHeaders.ts"
import { duration, intInRange } from "./Config.ts"
import { holdsNul, mapJsonStrings } from "./JsonDepth.ts"
import { Metrics } from "./Metrics.ts"
import { Storage } from "./Storage.ts"
import type { AuditEventInput } from "./StorageApi.ts"

/** The request an event was emitted while serving (`event_data.request_id`), unless the event names one. */
const withRequestId = (event: AuditEventInput, requestId: Option.Option<string>): AuditEventInput =>
  Option.isNone(requestId) || "request_id" in event.event_data
    ? event
    : { ...event, event_data: { ...event.event_data, request_id: requestId.value } }

export interface AuditSettings {
  /** The emitting service; the `service` label of `audit_events_dropped_total`. */
  readonly service: string
  /** Events held while storage catches up; beyond it new events are dropped (CR `audit.bufferSize`, 10,000). */
  readonly bufferSize: number
  /** Events per POST (CR `audit.batchSize`, 50; at most 1000). */
  readonly batchSize: number
  /** How often the buffer is sent (CR `audit.flushIntervalSeconds`, 1 s). */
  readonly flushInterval: Duration.Duration
  /** Resends of one batch while storage is unavailable. */
  readonly maxRetries: number
  /** First backoff between resends; doubles up to `retryCap`. */
  readonly retryBase: Duration.Duration
  readonly retryCap: Duration.Duration
  /** Longest the final flush on shutdown may take. */
  readonly flushTimeout: Duration.Duration
}

export class AuditConfig extends Context.Tag("@kubemend/core/AuditConfig")<AuditConfig, AuditSettings>() {
  static readonly defaults = (service: string): AuditSettings => ({
    service,
    bufferSize: 10_000,
    batchSize: 50,
    flushInterval: Duration.seconds(1),
    maxRetries: 8,
    retryBase: Duration.millis(200),
    retryCap: Duration.seconds(10),
    flushTimeout: Duration.seconds(5)
  })
  static readonly layer = (service: string, overrides: Partial<AuditSettings> = {}) =>
    Layer.succeed(AuditConfig, { ...AuditConfig.defaults(service), ...overrides })
  /** From the service's `audit` block (`bufferSize`, `batchSize`, `flushIntervalSeconds` or `flushInterval`). */
  static readonly layerConfig = (service: string) =>
    Layer.effect(
      AuditConfig,
      Effect.gen(function* () {
        const d = AuditConfig.defaults(service)
        const seconds = yield* Config.option(Config.nested(Config.number("flushIntervalSeconds"), "audit"))
        const interval = yield* Config.nested(duration("flushInterval"), "audit").pipe(Config.withDefault(d.flushInterval))
        return {
          ...d,
          bufferSize: yield* Config.nested(intInRange("bufferSize", 1, 10_000_000), "audit").pipe(Config.withDefault(d.bufferSize)),
          batchSize: yield* Config.nested(intInRange("batchSize", 1, 1000), "audit").pipe(Config.withDefault(d.batchSize)),
          flushInterval: seconds._tag === "Some" ? Duration.millis(seconds.value * 1000) : interval
        }
      })
    )
}

export interface AuditService {
  /** Buffers the event (assigning `event_id` when absent); drops and counts it when the buffer is full. */
  readonly emit: (event: AuditEventInput) => Effect.Effect<void>
  /** Sends everything buffered now. */
  readonly flush: Effect.Effect<void>
}

export class Audit extends Context.Tag("@kubemend/core/Audit")<Audit, AuditService>() {
  /** The live emitter over `Storage`. */
  static readonly layer = Layer.scoped(Audit, Effect.suspend(() => make))
  /** Records emitted events in memory (read them with `AuditRecorder`). */
  static readonly layerRecording = Layer.effectContext(
    Effect.gen(function* () {
      const events = yield* Ref.make<ReadonlyArray<AuditEventInput>>([])
      const audit: AuditService = {
        emit: (event) => Ref.update(events, (all) => [...all, { ...event, event_id: event.event_id ?? randomUUID() }]),
        flush: Effect.void
      }
      return Context.make(Audit, audit).pipe(
        Context.add(AuditRecorder, { events: Ref.get(events), clear: Ref.set(events, []) })
      )
    })
  )
}

export class AuditRecorder extends Context.Tag("@kubemend/core/AuditRecorder")<AuditRecorder, {
  readonly events: Effect.Effect<ReadonlyArray<AuditEventInput>>
  readonly clear: Effect.Effect<void>
}>() {}

/**
 * The event as storage will take it. Storage refuses NUL, and a caller's text (a signal name, an argument) carrying
 * one would otherwise cost the event, and with it that request's trail; the replacement character keeps it visible.
 */
const storable = (event: AuditEventInput): AuditEventInput => {
  try {
    return holdsNul(event) ? (mapJsonStrings(event, (t) => t.replaceAll("\u0000", "\ufffd")) as AuditEventInput) : event
  } catch {
    // Too deep to serialise: `send` isolates it.
    return event
  }
}

const make = Effect.gen(function* () {
  const storage = yield* Storage
  const metrics = yield* Metrics
  const config = yield* AuditConfig
  const dropped = metrics.counter({
    name: "audit_events_dropped_total",
    help: "Audit events dropped: buffer full, or refused by storage",
    labelNames: ["service"]
  })
  const drop = (n: number) => Effect.sync(() => dropped.inc({ service: config.service }, n))
  const queue = yield* Queue.dropping<AuditEventInput>(config.bufferSize)
  // One sender at a time: the periodic flush and an explicit/final flush never interleave batches.
  const sending = yield* Effect.makeSemaphore(1)
  const backoff = Schedule.exponential(config.retryBase).pipe(
    Schedule.union(Schedule.spaced(config.retryCap)),
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(config.maxRetries))
  )

  /**
   * Sends a batch. Storage takes a batch whole or not at all, so a refused batch is halved and each half sent again
   * until the refused events stand alone: one bad event (a NUL in a caller's text) costs itself, not the other
   * requests' events that shared its batch. A batch that cannot even be sent (an event too deep to serialise) is
   * treated alike, and never stops the sender. Any other failure (storage unavailable once retries run out, the
   * token refused) drops the batch.
   */
  const send = (batch: ReadonlyArray<AuditEventInput>): Effect.Effect<void> =>
    storage.writeEvents(batch).pipe(
      Effect.retry({ schedule: backoff, while: (e) => e._tag === "DependencyUnavailable" }),
      Effect.asVoid,
      Effect.catchAllDefect((defect) => Effect.fail({ _tag: "Unsendable", defect } as const)),
      Effect.catchAll((error) =>
        (error._tag === "ValidationError" || error._tag === "Unsendable") && batch.length > 1
          ? Effect.zipRight(send(batch.slice(0, batch.length >> 1)), send(batch.slice(batch.length >> 1)))
          : Effect.logWarning("audit events dropped").pipe(
            Effect.annotateLogs({ events: batch.length, reason: error._tag }),
            Effect.zipRight(drop(batch.length))
          )
      ),
      Effect.withSpan("Audit.send", { attributes: { events: batch.length } })
    )

  const flush = sending.withPermits(1)(
    Effect.gen(function* () {
      for (;;) {
        const batch = yield* Queue.takeUpTo(queue, config.batchSize)
        if (batch.length === 0) return
        yield* send(Array.from(batch, storable))
      }
    })
  )

  yield* flush.pipe(Effect.repeat(Schedule.spaced(config.flushInterval)), Effect.forkScoped)
  // Added after the fork, so it runs before the sender is interrupted: what is buffered goes out on shutdown.
  // Finalizers are uninterruptible: the flush opts back in, so the timeout ends it (and the wait for a sender that
  // is retrying an unavailable storage) instead of holding the shutdown for every retry.
  yield* Effect.addFinalizer(() => flush.pipe(Effect.interruptible, Effect.timeout(config.flushTimeout), Effect.ignore))

  return {
    emit: (event) =>
      Effect.flatMap(
        FiberRef.get(currentRequestId),
        (requestId) => Queue.offer(queue, withRequestId(event.event_id === undefined ? { ...event, event_id: randomUUID() } : event, requestId))
      ).pipe(
        Effect.flatMap((accepted) => (accepted ? Effect.void : drop(1)))
      ),
    flush
  } satisfies AuditService
})
