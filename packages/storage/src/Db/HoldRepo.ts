/**
 * Legal holds: one active hold per correlation id (`legal_holds`, history kept), mirrored onto the events so the
 * delete trigger can refuse them. Events written while a hold is active are held from the start (AuditRepo).
 */
import { PgClient } from "@effect/sql-pg"
import { NotFound } from "@kubemend/core/Errors"
import type { LegalHold } from "@kubemend/core/StorageApi"
import { Effect } from "effect"
import { orUnavailable } from "./Errors.ts"

interface HoldRow {
  readonly correlation_id: string
  readonly reason: string
  readonly placed_by: string
  readonly placed_at: Date
  readonly events_affected: number
}

const toHold = (r: HoldRow): LegalHold => ({
  correlation_id: r.correlation_id,
  events_affected: r.events_affected,
  placed_by: r.placed_by,
  placed_at: r.placed_at.toISOString(),
  reason: r.reason
})

export class HoldRepo extends Effect.Service<HoldRepo>()("@kubemend/storage/HoldRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient

    /** Places (or keeps) the hold; NotFound when the correlation id has no events. */
    const place = (correlationId: string, reason: string, placedBy: string, now: Date) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const [{ n }] = yield* sql.unsafe<{ n: number }>(
              `SELECT count(*)::int AS n FROM audit_events WHERE correlation_id = $1`,
              [correlationId]
            )
            if (n === 0) return yield* new NotFound({ resource: "audit events for correlation_id", id: correlationId })
            yield* sql.unsafe(
              `INSERT INTO legal_holds (correlation_id, reason, placed_by, placed_at) VALUES ($1, $2, $3, $4)
               ON CONFLICT (correlation_id) WHERE released_at IS NULL DO NOTHING`,
              [correlationId, reason, placedBy, now]
            )
            const [hold] = yield* sql.unsafe<HoldRow>(
              `WITH h AS (SELECT correlation_id, reason, placed_by, placed_at FROM legal_holds
                          WHERE correlation_id = $1 AND released_at IS NULL),
                    u AS (UPDATE audit_events e SET legal_hold = true, legal_hold_reason = h.reason,
                            legal_hold_placed_by = h.placed_by, legal_hold_placed_at = h.placed_at
                          FROM h WHERE e.correlation_id = h.correlation_id AND NOT e.legal_hold RETURNING 1)
               SELECT h.*, (SELECT count(*)::int FROM audit_events WHERE correlation_id = $1 AND legal_hold)
                             + (SELECT count(*)::int FROM u) AS events_affected
               FROM h`,
              [correlationId]
            )
            return toHold(hold!)
          })
        )
        .pipe(orUnavailable, Effect.withSpan("HoldRepo.place"))

    /** Releases the active hold; NotFound when there is none. */
    const release = (correlationId: string, releasedBy: string, releaseReason: string, now: Date) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const released = yield* sql.unsafe<{ id: number }>(
              `UPDATE legal_holds SET released_by = $2, released_at = $3, release_reason = $4
               WHERE correlation_id = $1 AND released_at IS NULL RETURNING id`,
              [correlationId, releasedBy, now, releaseReason]
            )
            if (released.length === 0) return yield* new NotFound({ resource: "legal hold", id: correlationId })
            // The trigger only lets a hold be lifted inside this path.
            yield* sql.unsafe(`SET LOCAL kubemend.allow_hold_release = 'on'`)
            const [{ n }] = yield* sql.unsafe<{ n: number }>(
              `WITH u AS (UPDATE audit_events SET legal_hold = false, legal_hold_reason = NULL,
                            legal_hold_placed_by = NULL, legal_hold_placed_at = NULL
                          WHERE correlation_id = $1 AND legal_hold RETURNING 1)
               SELECT count(*)::int AS n FROM u`,
              [correlationId]
            )
            return {
              correlation_id: correlationId,
              events_released: n!,
              released_by: releasedBy,
              released_at: now.toISOString()
            }
          })
        )
        .pipe(orUnavailable, Effect.withSpan("HoldRepo.release"))

    const list = sql
      .unsafe<HoldRow>(
        `SELECT h.correlation_id, h.reason, h.placed_by, h.placed_at,
                (SELECT count(*)::int FROM audit_events e WHERE e.correlation_id = h.correlation_id AND e.legal_hold)
                  AS events_affected
         FROM legal_holds h WHERE h.released_at IS NULL ORDER BY h.placed_at, h.id`
      )
      .pipe(Effect.map((rows) => rows.map(toHold)), orUnavailable, Effect.withSpan("HoldRepo.list"))

    return { place, release, list } as const
  })
}) {}
