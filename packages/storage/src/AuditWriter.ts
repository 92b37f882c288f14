/**
 * The audit write path: normalise events (ids, timestamps, retention), write them chained, and fall back to the
 * dead-letter queue when the database is unreachable (202 instead of 201). A scoped fiber replays the queue every
 * `dlq.replayInterval` (Effect Clock, so TestClock drives it); replays skip ids already stored.
 */
import { DeadLetterQueueFull, DependencyUnavailable, ValidationError, type Conflict } from "@kubemend/core/Errors"
import { holdsNul, maxJsonDepth, nestsDeeperThan } from "@kubemend/core/JsonDepth"
import { Metrics } from "@kubemend/core/Metrics"
import type { AuditEventInput, NotificationAudit } from "@kubemend/core/StorageApi"
import { Clock, Effect, Option, Redacted, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { type ChainEvent, makeHasher } from "./Chain.ts"
import { AuditRepo } from "./Db/AuditRepo.ts"
import type { DatabaseUnavailable } from "./Db/Errors.ts"
import { NotificationRepo, type NotificationRow } from "./Db/NotificationRepo.ts"
import { Dlq, type DlqEntry } from "./Dlq.ts"
import { StorageConfig } from "./StorageConfig.ts"
import { isoTimestamp, wellFormed, wellFormedJson, wellFormedOptional } from "./Normalise.ts"

export type WriteOutcome =
  | { readonly _tag: "Created"; readonly ids: ReadonlyArray<string> }
  | { readonly _tag: "Accepted"; readonly ids: ReadonlyArray<string> }

export type NotificationOutcome =
  | { readonly _tag: "Created"; readonly row: NotificationRow; readonly stored: NotificationAudit }
  | { readonly _tag: "Accepted" }

const lower = (s: string | null | undefined) => (typeof s === "string" ? s.toLowerCase() : s)

/** Refuses a batch with a payload past `maxJsonDepth`: hashing walks payloads recursively and would overflow the stack. */
const tooDeep = (inputs: ReadonlyArray<AuditEventInput>) =>
  Effect.suspend(() => {
    const at = inputs.findIndex((e) => nestsDeeperThan(e.event_data))
    return at === -1
      ? Effect.void
      : Effect.fail(new ValidationError({ field: "event_data", detail: `event ${at}: event_data nests deeper than ${maxJsonDepth} levels` }))
  })

export class AuditWriter extends Effect.Service<AuditWriter>()("@kubemend/storage/AuditWriter", {
  scoped: Effect.gen(function* () {
    const config = yield* StorageConfig
    const repo = yield* AuditRepo
    const notifications = yield* NotificationRepo
    const dlq = yield* Dlq
    const metrics = yield* Metrics
    const hasher = makeHasher(Option.getOrUndefined(Option.map(config.hashKey, Redacted.value)))
    const writeDuration = metrics.histogram({
      name: "datastorage_write_duration_seconds",
      help: "Duration of database writes",
      labelNames: ["table"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    })
    const lag = metrics.histogram({
      name: "datastorage_audit_lag_seconds",
      help: "Time between an audit event and its write",
      labelNames: ["service"],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 3600]
    })

    const timed = <A, E, R>(table: string, effect: Effect.Effect<A, E, R>) =>
      Effect.gen(function* () {
        const start = yield* Clock.currentTimeMillis
        const result = yield* effect
        writeDuration.observe({ table }, ((yield* Clock.currentTimeMillis) - start) / 1000)
        return result
      })

    /**
     * Assigns ids, normalises the timestamp to ISO-8601 UTC milliseconds and free text to well-formed Unicode (the
     * payload's is, where it is serialised: `storablePayload`), defaults the retention.
     */
    const prepare = (inputs: ReadonlyArray<AuditEventInput>): ReadonlyArray<ChainEvent> =>
      inputs.map((e): ChainEvent => ({
        event_id: e.event_id?.toLowerCase() ?? randomUUID(),
        version: wellFormed(e.version),
        event_type: wellFormed(e.event_type),
        event_timestamp: isoTimestamp(e.event_timestamp),
        event_category: e.event_category,
        event_action: wellFormed(e.event_action),
        event_outcome: e.event_outcome,
        correlation_id: wellFormed(e.correlation_id),
        actor_type: wellFormedOptional(e.actor_type),
        actor_id: wellFormedOptional(e.actor_id),
        actor_ip: wellFormedOptional(e.actor_ip),
        resource_type: wellFormedOptional(e.resource_type),
        resource_id: wellFormedOptional(e.resource_id),
        parent_event_id: lower(e.parent_event_id),
        parent_event_date: wellFormedOptional(e.parent_event_date),
        namespace: wellFormedOptional(e.namespace),
        cluster_id: wellFormedOptional(e.cluster_id),
        severity: wellFormedOptional(e.severity),
        duration_ms: e.duration_ms,
        error_code: wellFormedOptional(e.error_code),
        error_message: wellFormedOptional(e.error_message),
        retention_days: e.retention_days ?? config.retention.defaultDays,
        is_sensitive: e.is_sensitive,
        event_data: e.event_data
      }))

    // One child per service label, so each observation skips the label lookup (1000 per batch).
    const lagByService = new Map<string, { readonly observe: (seconds: number) => void }>()
    const observeLag = (events: ReadonlyArray<ChainEvent>) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        for (const e of events) {
          const dot = e.event_type.indexOf(".")
          const service = dot === -1 ? e.event_type : e.event_type.slice(0, dot)
          let child = lagByService.get(service)
          if (child === undefined) {
            child = lag.labels({ service })
            if (lagByService.size < 1000) lagByService.set(service, child)
          }
          child.observe(Math.max(0, now - Date.parse(e.event_timestamp)) / 1000)
        }
      })

    const insert = (events: ReadonlyArray<ChainEvent>) =>
      timed("audit_events", repo.insert(events, hasher, config.writeTimeout)).pipe(Effect.tap(() => observeLag(events)))

    /** Writes a batch; 'Accepted' when it went to the dead-letter queue instead. */
    const write = (inputs: ReadonlyArray<AuditEventInput>) =>
      Effect.gen(function* () {
        yield* tooDeep(inputs)
        const events = prepare(inputs)
        const ids = events.map((e) => e.event_id)
        return yield* insert(events).pipe(
          Effect.as<WriteOutcome>({ _tag: "Created", ids }),
          Effect.catchTag("DatabaseUnavailable", (e) =>
            Effect.gen(function* () {
              // Checked here (the repository checks it in its transaction) so the queue never holds a batch that
              // could not be replayed.
              if (holdsNul(events)) {
                return yield* new ValidationError({ detail: "audit events must not contain NUL (\\u0000) characters" })
              }
              yield* Effect.logWarning("database unreachable; audit events queued").pipe(
                Effect.annotateLogs({ events: events.length, cause: String(e.cause) })
              )
              yield* dlq.enqueue("audit", events, events.length)
              return { _tag: "Accepted", ids } satisfies WriteOutcome
            }))
        )
      }).pipe(Effect.withSpan("AuditWriter.write", { attributes: { events: inputs.length } }))

    /** A notification record as stored: free text well-formed, NUL refused up front (the queue could not replay it). */
    const storableNotification = (n: NotificationAudit) =>
      holdsNul(n)
        ? Effect.fail(new ValidationError({ detail: "notification records must not contain NUL (\\u0000) characters" }))
        : Effect.succeed(wellFormedJson(n) as NotificationAudit)

    const writeNotification = (
      n: NotificationAudit
    ): Effect.Effect<NotificationOutcome, Conflict | DeadLetterQueueFull | DependencyUnavailable | ValidationError> =>
      Effect.flatMap(storableNotification(n), (stored) =>
        timed("notification_audit", notifications.insert(stored, config.writeTimeout)).pipe(
          Effect.map((rows): NotificationOutcome => ({ _tag: "Created", row: rows[0]!, stored })),
          Effect.catchTag("DatabaseUnavailable", () => dlq.enqueue("notification", stored, 1).pipe(Effect.as<NotificationOutcome>({ _tag: "Accepted" })))
        ))

    /** Only unavailability stops a replay; an entry the database refuses is logged and dropped, never retried forever. */
    const replayEntry = (entry: DlqEntry): Effect.Effect<void, DatabaseUnavailable> => {
      const write: Effect.Effect<unknown, DatabaseUnavailable | ValidationError | Conflict> = entry.kind === "audit"
        ? insert(entry.payload as ReadonlyArray<ChainEvent>)
        : notifications.insert(entry.payload as NotificationAudit, config.writeTimeout, true)
      return write.pipe(
        Effect.asVoid,
        Effect.catchIf(
          (e): e is ValidationError | Conflict => e._tag !== "DatabaseUnavailable",
          (e) => Effect.logError("dead-letter entry refused by the database; dropped").pipe(Effect.annotateLogs({ entry: entry.id, reason: e._tag }))
        )
      )
    }

    /** Replays what the queue holds now; returns the number of entries written. */
    const replayNow = Effect.flatMap(dlq.depth, (depth) => (depth === 0 ? Effect.succeed(0) : dlq.replay(replayEntry))).pipe(
      Effect.tap((n) => (n > 0 ? Effect.logInfo("dead-letter queue replayed").pipe(Effect.annotateLogs("entries", n)) : Effect.void))
    )

    yield* replayNow.pipe(
      Effect.catchAllCause((cause) => Effect.logError("dead-letter replay failed", cause)),
      Effect.repeat(Schedule.spaced(config.dlq.replayInterval)),
      Effect.forkScoped
    )

    return { write, writeNotification, replayNow, hasher } as const
  })
}) {}
