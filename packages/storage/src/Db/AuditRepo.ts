/**
 * Audit events in PostgreSQL: chained inserts, filtered queries, chain reads.
 *
 * A batch is written in one transaction. Writers on the same correlation id serialize on
 * `pg_advisory_xact_lock(hashtext(correlation_id))` (taken in key order, so two batches never deadlock), then read
 * the chain heads, skip event ids already stored (client retries and dead-letter replays are idempotent), hash
 * in batch order, insert everything with one `jsonb_to_recordset` statement and move the heads.
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect } from "effect"
import { canonicalEvent, type ChainEvent, type Hasher } from "../Chain.ts"
import { ValidationError } from "@kubemend/core/Errors"
import { copyField, copyIn } from "./Copy.ts"
import { DatabaseUnavailable, orUnavailable } from "./Errors.ts"
import { auditColumns, type AuditRow } from "./AuditRows.ts"
import { Where } from "./Where.ts"

/** The columns the write path fills, in the order of each COPY line. */
const copyColumns = `event_id, event_version, event_timestamp, event_date, event_type, event_category, event_action,
  event_outcome, actor_type, actor_id, actor_ip, resource_type, resource_id, correlation_id, parent_event_id,
  parent_event_date, namespace, cluster_id, severity, duration_ms, error_code, error_message, retention_days,
  is_sensitive, event_data, chain_position, event_hash, previous_event_hash, hash_algorithm, legal_hold,
  legal_hold_reason, legal_hold_placed_by, legal_hold_placed_at`

const textFields = ["event_id", "version", "event_type", "event_category", "event_action", "event_outcome", "correlation_id",
  "actor_type", "actor_id", "actor_ip", "resource_type", "resource_id", "parent_event_id", "parent_event_date", "namespace",
  "cluster_id", "severity", "error_code", "error_message"] as const

const hasNul = (e: ChainEvent) => textFields.some((k) => typeof e[k] === "string" && (e[k] as string).includes("\u0000"))

export interface InsertResult {
  readonly inserted: number
  readonly skipped: number
}

/** Filters of the query endpoint, resolved (times absolute). */
export interface AuditFilters {
  readonly eventType?: string | undefined
  readonly eventCategory?: string | undefined
  readonly eventOutcome?: string | undefined
  readonly severity?: string | undefined
  readonly correlationId?: string | undefined
  readonly actorId?: string | undefined
  readonly since?: Date | undefined
  readonly until?: Date | undefined
  readonly detail?: { readonly key: string; readonly value: string } | undefined
}

export const whereFor = (f: AuditFilters): Where =>
  new Where()
    .add("event_type = ?", f.eventType)
    .add("event_category = ?", f.eventCategory)
    .add("event_outcome = ?", f.eventOutcome)
    .add("severity = ?", f.severity)
    .add("correlation_id = ?", f.correlationId)
    .add("actor_id = ?", f.actorId)
    .add("event_timestamp >= ?", f.since)
    .add("event_timestamp <= ?", f.until)
    .add("event_data->>? = ?", f.detail?.key, f.detail?.value)

export class AuditRepo extends Effect.Service<AuditRepo>()("@kubemend/storage/AuditRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient

    const insertChained = (events: ReadonlyArray<ChainEvent>, canonicals: ReadonlyArray<string>, hasher: Hasher) =>
      Effect.gen(function* () {
        const correlationIds = [...new Set(events.map((e) => e.correlation_id))]
        yield* sql.unsafe(
          `SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtext(c) AS k FROM unnest($1::text[]) AS c ORDER BY k) s`,
          [correlationIds]
        )
        // One round trip for what the batch needs to know: ids already stored, chain heads, active holds.
        const known = yield* sql.unsafe<{ kind: string; key: string; position: number | null; text: string | null; by: string | null; at: Date | null }>(
          `SELECT 'stored' AS kind, event_id::text AS key, NULL::int AS position, NULL::text AS text, NULL::text AS by, NULL::timestamptz AS at
             FROM audit_events WHERE event_id = ANY($1::uuid[])
           UNION ALL
           SELECT 'head', correlation_id, chain_position, event_hash, NULL, NULL FROM audit_chain_heads WHERE correlation_id = ANY($2::text[])
           UNION ALL
           SELECT 'hold', correlation_id, NULL, reason, placed_by, placed_at FROM legal_holds
             WHERE released_at IS NULL AND correlation_id = ANY($2::text[])`,
          [events.map((e) => e.event_id), correlationIds]
        )
        const seen = new Set<string>()
        const head = new Map<string, { position: number; hash: string }>()
        const hold = new Map<string, { reason: string | null; by: string | null; at: Date | null }>()
        for (const k of known) {
          if (k.kind === "stored") seen.add(k.key)
          else if (k.kind === "head") head.set(k.key, { position: k.position!, hash: k.text!.trim() })
          else hold.set(k.key, { reason: k.text, by: k.by, at: k.at })
        }
        const lines: Array<string> = []
        for (let i = 0; i < events.length; i++) {
          const e = events[i]!
          if (seen.has(e.event_id)) continue
          seen.add(e.event_id)
          const previous = head.get(e.correlation_id) ?? { position: 0, hash: "" }
          const eventHash = hasher.hashCanonical(previous.hash, canonicals[i]!)
          const h = hold.get(e.correlation_id)
          const data = JSON.stringify(e.event_data)
          // PostgreSQL text and jsonb cannot hold NUL (JSON writes it as \u0000); refuse rather than fail mid-COPY.
          if (data.includes("\\u0000") || hasNul(e)) {
            return yield* new ValidationError({ detail: "audit events must not contain NUL (\\u0000) characters" })
          }
          // In `copyColumns` order; spelled out because this runs for every event of every batch.
          lines.push([
            e.event_id, e.version, e.event_timestamp, e.event_timestamp.slice(0, 10), e.event_type, e.event_category,
            e.event_action, e.event_outcome, e.actor_type, e.actor_id, e.actor_ip, e.resource_type, e.resource_id,
            e.correlation_id, e.parent_event_id, e.parent_event_date, e.namespace, e.cluster_id, e.severity, e.duration_ms,
            e.error_code, e.error_message, e.retention_days, e.is_sensitive, data, previous.position + 1, eventHash,
            previous.hash, hasher.algorithm, h !== undefined, h?.reason, h?.by, h?.at
          ].map(copyField).join("\t"))
          head.set(e.correlation_id, { position: previous.position + 1, hash: eventHash })
        }
        if (lines.length > 0) {
          yield* copyIn(`COPY audit_events (${copyColumns}) FROM STDIN`, lines.join("\n") + "\n")
          const moved = correlationIds.flatMap((c) => {
            const h = head.get(c)
            return h === undefined ? [] : [{ correlation_id: c, chain_position: h.position, event_hash: h.hash }]
          })
          yield* sql.unsafe(
            `INSERT INTO audit_chain_heads (correlation_id, chain_position, event_hash)
             SELECT correlation_id, chain_position, event_hash
             FROM jsonb_to_recordset($1::jsonb) AS x(correlation_id text, chain_position integer, event_hash text)
             ON CONFLICT (correlation_id) DO UPDATE
               SET chain_position = EXCLUDED.chain_position, event_hash = EXCLUDED.event_hash`,
            [JSON.stringify(moved)]
          )
        }
        return { inserted: lines.length, skipped: events.length - lines.length } satisfies InsertResult
      })

    /**
     * Writes a batch as one transaction; a deadline past `timeout` counts as the database being unreachable. The
     * canonical JSON (most of the hashing cost) is computed before the transaction, so the lock is held briefly.
     */
    const insert = (events: ReadonlyArray<ChainEvent>, hasher: Hasher, timeout: Duration.Duration) =>
      Effect.suspend(() => sql.withTransaction(insertChained(events, events.map(canonicalEvent), hasher))).pipe(
        orUnavailable,
        Effect.timeoutFail({ duration: timeout, onTimeout: () => new DatabaseUnavailable({ cause: "write timed out" }) }),
        Effect.withSpan("AuditRepo.insert", { attributes: { events: events.length } })
      )

    const query = (filters: AuditFilters, limit: number, offset: number) =>
      Effect.gen(function* () {
        const where = whereFor(filters)
        const [{ total }] = yield* sql.unsafe<{ total: number }>(
          `SELECT count(*)::int AS total FROM audit_events ${where.sql}`,
          where.params
        )
        const l = where.bind(limit)
        const o = where.bind(offset)
        const rows = yield* sql.unsafe<AuditRow>(
          `SELECT ${auditColumns} FROM audit_events ${where.sql}
           ORDER BY event_timestamp DESC, seq DESC LIMIT $${l} OFFSET $${o}`,
          where.params
        )
        return { rows, total: total! }
      }).pipe(orUnavailable, Effect.withSpan("AuditRepo.query"))

    /** Every event of a correlation id in chain order, and the head recorded at write time. */
    const chain = (correlationId: string) =>
      Effect.gen(function* () {
        const rows = yield* sql.unsafe<AuditRow>(
          `SELECT ${auditColumns} FROM audit_events WHERE correlation_id = $1 ORDER BY chain_position`,
          [correlationId]
        )
        const heads = yield* sql.unsafe<{ chain_position: number; event_hash: string }>(
          `SELECT chain_position, event_hash FROM audit_chain_heads WHERE correlation_id = $1`,
          [correlationId]
        )
        const head = heads[0]
        return {
          rows,
          head: head === undefined ? undefined : { chainPosition: head.chain_position, eventHash: head.event_hash.trim() }
        }
      }).pipe(orUnavailable, Effect.withSpan("AuditRepo.chain"))

    /** Whether the database answers (readiness). */
    const ping = orUnavailable(sql.unsafe(`SELECT 1`))

    return { insert, query, chain, ping } as const
  })
}) {}
