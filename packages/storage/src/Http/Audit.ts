/** Handlers of the audit-event endpoints: write one, write a batch (all or nothing), query, notifications. */
import { HttpApiBuilder } from "@effect/platform"
import { parseGoDuration } from "@kubemend/core/Config"
import { AuditBatchLimits } from "@kubemend/core/domain/Audit"
import { BatchSizeInvalid, ValidationError } from "@kubemend/core/Errors"
import {
  AuditEventCreated,
  type AuditEventsQuery,
  AuditWriteAccepted,
  type BatchAuditEventResponse,
  NotificationAuditResponse,
  StorageApi
} from "@kubemend/core/StorageApi"
import { Clock, Duration, Effect, Option } from "effect"
import { AuditWriter } from "../AuditWriter.ts"
import { AuditRepo, type AuditFilters } from "../Db/AuditRepo.ts"
import { toAuditEvent } from "../Db/AuditRows.ts"
import { batchPayload } from "./AuditBatch.ts"
import { isoTimestamp } from "../Normalise.ts"
import { orProblem, withStatus } from "./Problems.ts"

const accepted = (ids: ReadonlyArray<string>) =>
  new AuditWriteAccepted({
    status: "accepted",
    message: "the database is unreachable; the events are queued and will be written when it returns",
    event_ids: ids
  })

// Years 0001 to 9999: Date reads far wider (±271821), beyond what a PostgreSQL timestamp holds.
const firstInstant = Date.parse("0001-01-01T00:00:00Z")
const lastInstant = Date.parse("9999-12-31T23:59:59.999Z")

const instant = (field: string, value: string) => {
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) return Effect.fail(new ValidationError({ field, detail: `expected an RFC 3339 time, got "${value}"` }))
  if (ms < firstInstant || ms > lastInstant) return Effect.fail(new ValidationError({ field, detail: `${value} is outside the years 0001 to 9999` }))
  return Effect.succeed(new Date(ms))
}

/** `since` is a Go duration back from now (`24h`) or an RFC 3339 time; `until` is RFC 3339. */
export const resolveFilters = (q: AuditEventsQuery) =>
  Effect.gen(function* () {
    if ((q.detail_key === undefined) !== (q.detail_value === undefined)) {
      return yield* new ValidationError({ field: "detail_key", detail: "detail_key and detail_value must be given together" })
    }
    const now = yield* Clock.currentTimeMillis
    const since = q.since === undefined
      ? undefined
      : yield* Option.match(parseGoDuration(q.since), {
        onSome: (d) => {
          const back = now - Duration.toMillis(d)
          // A duration reaching back before the year 1 bounds nothing.
          return Effect.succeed(back < firstInstant ? undefined : new Date(back))
        },
        onNone: () => instant("since", q.since!)
      })
    const until = q.until === undefined ? undefined : yield* instant("until", q.until)
    return {
      eventType: q.event_type,
      eventCategory: q.event_category,
      eventOutcome: q.event_outcome,
      severity: q.severity,
      correlationId: q.correlation_id,
      actorId: q.actor_id,
      since,
      until,
      detail: q.detail_key === undefined ? undefined : { key: q.detail_key, value: q.detail_value! }
    } satisfies AuditFilters
  })

export const AuditHttp = HttpApiBuilder.group(StorageApi, "audit", (handlers) =>
  Effect.gen(function* () {
    const writer = yield* AuditWriter
    const repo = yield* AuditRepo
    return handlers
      .handle("createAuditEvent", ({ payload }) =>
        writer.write([payload]).pipe(
          Effect.map((outcome) =>
            outcome._tag === "Created"
              ? withStatus(201)(
                new AuditEventCreated({
                  event_id: outcome.ids[0]!,
                  event_timestamp: isoTimestamp(payload.event_timestamp),
                  message: "audit event created"
                })
              )
              : withStatus(202)(accepted(outcome.ids))
          ),
          orProblem
        ))
      // Raw: the body is decoded by `batchPayload` (a fast path with the contract's Schema as the fallback).
      .handleRaw("createAuditEventsBatch", () =>
        Effect.flatMap(batchPayload, (payload) =>
          Effect.gen(function* () {
            if (payload.length < AuditBatchLimits.min || payload.length > AuditBatchLimits.max) {
              return yield* new BatchSizeInvalid({ size: payload.length })
            }
            const outcome = yield* writer.write(payload)
            return outcome._tag === "Created"
              // A plain object: the ids were checked on the way in, the response class would check all 1000 again.
              ? withStatus(201)({ event_ids: outcome.ids, message: `${outcome.ids.length} audit events created` } satisfies BatchAuditEventResponse)
              : withStatus(202)(accepted(outcome.ids))
          }).pipe(orProblem)))
      .handle("queryAuditEvents", ({ urlParams }) =>
        Effect.gen(function* () {
          const filters = yield* resolveFilters(urlParams)
          const limit = urlParams.limit ?? 50
          const offset = urlParams.offset ?? 0
          const { rows, total } = yield* repo.query(filters, limit, offset)
          return {
            data: rows.map(toAuditEvent),
            pagination: { limit, offset, total, has_more: offset + rows.length < total }
          }
        }).pipe(orProblem))
      .handle("createNotificationAudit", ({ payload }) =>
        writer.writeNotification(payload).pipe(
          Effect.map((outcome) =>
            outcome._tag === "Created"
              ? withStatus(201)(
                new NotificationAuditResponse({
                  ...outcome.stored,
                  id: outcome.row.id,
                  created_at: outcome.row.created_at.toISOString(),
                  updated_at: outcome.row.updated_at.toISOString()
                })
              )
              : withStatus(202)(new AuditWriteAccepted({ status: "accepted", message: "audit record queued for processing" }))
          ),
          orProblem
        ))
  }))
