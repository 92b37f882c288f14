/**
 * Audit events in PostgreSQL: chained inserts, filtered queries, chain reads.
 *
 * A batch is written in one transaction. Writers on the same correlation id serialize on
 * `pg_advisory_xact_lock(hashtext(correlation_id))` (taken in key order, so two batches never deadlock), then read
 * the chain heads, hash in batch order while streaming the rows through one `COPY`, and move the heads. Event ids
 * already stored are skipped (client retries and dead-letter replays are idempotent; see `insert`).
 */
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect } from "effect"
import type { ChainEvent, ChainWalk, Hasher } from "../Chain.ts"
import { canonicalEvent } from "../Chain/Canonical.ts"
import { ValidationError } from "@kubemend/core/Errors"
import { type ActiveHold, copyColumns, eventColumns, linkColumns, storablePayload } from "./AuditCopy.ts"
import { copyInChunks } from "./Copy.ts"
import { DatabaseUnavailable, orUnavailable, sqlState } from "./Errors.ts"
import { auditColumns, type AuditRow } from "./AuditRows.ts"
import { forEachChainPage, walkRows } from "./ChainRead.ts"
import { Where } from "./Where.ts"

/** Events per COPY chunk: small enough to overlap hashing with PostgreSQL's insert, large enough to be cheap. */
const copyChunkEvents = 100

/** A COPY refused because an event id is already stored (the primary key). */
const isStoredId = (e: unknown): e is SqlError =>
  e instanceof SqlError && sqlState(e) === "23505" && (e.cause as { readonly constraint?: unknown }).constraint === "audit_events_pkey"

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

    const insertChained = (events: ReadonlyArray<ChainEvent>, hasher: Hasher, probe: boolean) =>
      Effect.gen(function* () {
        const correlationIds = [...new Set(events.map((e) => e.correlation_id))]
        yield* sql.unsafe(
          `SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtext(c) AS k FROM unnest($1::text[]) AS c ORDER BY k) s`,
          [correlationIds]
        )
        // A separate statement, so its snapshot is taken after the locks: it sees every batch committed by the writer
        // that held them. One round trip for chain heads, active holds and, when probing, the ids already stored.
        const known = yield* sql.unsafe<{ kind: string; key: string; position: number | null; text: string | null; by: string | null; at: Date | null }>(
          `SELECT 'head' AS kind, correlation_id AS key, chain_position AS position, event_hash::text AS text, NULL::text AS by,
             NULL::timestamptz AS at
             FROM audit_chain_heads WHERE correlation_id = ANY($1::text[])
           UNION ALL
           SELECT 'hold', correlation_id, NULL, reason, placed_by, placed_at FROM legal_holds
             WHERE released_at IS NULL AND correlation_id = ANY($1::text[])
           ${probe ? `UNION ALL SELECT 'stored', event_id::text, NULL, NULL, NULL, NULL FROM audit_events WHERE event_id = ANY($2::uuid[])` : ""}`,
          probe ? [correlationIds, events.map((e) => e.event_id)] : [correlationIds]
        )
        const seen = new Set<string>()
        const head = new Map<string, { position: number; hash: string }>()
        const hold = new Map<string, ActiveHold>()
        for (const k of known) {
          if (k.kind === "stored") seen.add(k.key)
          else if (k.kind === "head") head.set(k.key, { position: k.position!, hash: k.text!.trim() })
          else hold.set(k.key, { reason: k.text, by: k.by, at: k.at })
        }
        // Ids already stored (a retry, a replay) and repeats within the batch are skipped.
        const todo: Array<number> = []
        for (let i = 0; i < events.length; i++) {
          const id = events[i]!.event_id
          if (!seen.has(id)) {
            seen.add(id)
            todo.push(i)
          }
        }
        if (todo.length === 0) return { inserted: 0, skipped: events.length } satisfies InsertResult
        // Hashing in batch order, chunk by chunk while PostgreSQL takes in the previous chunk.
        let next = 0
        yield* copyInChunks(`COPY audit_events (${copyColumns}) FROM STDIN`, () => {
          if (next === todo.length) return undefined
          const end = Math.min(next + copyChunkEvents, todo.length)
          let chunk = ""
          for (; next < end; next++) {
            const e = events[todo[next]!]!
            const data = storablePayload(e)
            const previous = head.get(e.correlation_id) ?? { position: 0, hash: "" }
            const eventHash = hasher.hashCanonical(previous.hash, canonicalEvent(e, data))
            chunk += eventColumns(e, data) +
              linkColumns(previous.position + 1, eventHash, previous.hash, hasher.algorithm, hold.get(e.correlation_id)) + "\n"
            head.set(e.correlation_id, { position: previous.position + 1, hash: eventHash })
          }
          return chunk
        }, (thrown): thrown is ValidationError => thrown instanceof ValidationError)
        const moved = correlationIds.filter((c) => head.has(c))
        yield* sql.unsafe(
          `INSERT INTO audit_chain_heads (correlation_id, chain_position, event_hash)
           SELECT * FROM unnest($1::text[], $2::int[], $3::text[])
           ON CONFLICT (correlation_id) DO UPDATE
             SET chain_position = EXCLUDED.chain_position, event_hash = EXCLUDED.event_hash`,
          [moved, moved.map((c) => head.get(c)!.position), moved.map((c) => head.get(c)!.hash)]
        )
        return { inserted: todo.length, skipped: events.length - todo.length } satisfies InsertResult
      })

    /**
     * Writes a batch as one transaction; a deadline past `timeout` counts as the database being unreachable. The
     * first attempt does not look up the batch's ids: nearly every batch is new, and looking up 1000 ids cost a
     * quarter to a third of the COPY (measured; the planner may even scan the table). A batch holding an id already
     * stored (a retry, a replay) then fails on the primary key and is written again with the lookup, which skips
     * those ids; nothing of the failed attempt stays.
     */
    const insert = (events: ReadonlyArray<ChainEvent>, hasher: Hasher, timeout: Duration.Duration) =>
      sql.withTransaction(insertChained(events, hasher, false)).pipe(
        Effect.catchIf(isStoredId, () => sql.withTransaction(insertChained(events, hasher, true))),
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

    /**
     * `effect` in one read-only REPEATABLE READ snapshot: rows and head read apart would let a batch committed in
     * between show a head past the rows, which reads as a cut chain.
     */
    const inSnapshot = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.zipRight(sql.unsafe(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`), effect))

    /** The head recorded at write time for a correlation id, if it has one. */
    const headOf = (correlationId: string) =>
      Effect.map(
        sql.unsafe<{ chain_position: number; event_hash: string }>(
          `SELECT chain_position, event_hash FROM audit_chain_heads WHERE correlation_id = $1`,
          [correlationId]
        ),
        ([head]) => (head === undefined ? undefined : { chainPosition: head.chain_position, eventHash: head.event_hash.trim() })
      )

    /** Every event of a correlation id in chain order, and its head, from one snapshot. */
    const chain = (correlationId: string) =>
      inSnapshot(Effect.all({
        rows: sql.unsafe<AuditRow>(
          `SELECT ${auditColumns} FROM audit_events WHERE correlation_id = $1 ORDER BY chain_position`,
          [correlationId]
        ),
        head: headOf(correlationId)
      })).pipe(orUnavailable, Effect.withSpan("AuditRepo.chain"))

    /** Walks the chain of a correlation id as it is read (see `ChainRead.ts`); returns its head, from the same snapshot. */
    const verify = (correlationId: string, walk: ChainWalk) =>
      inSnapshot(Effect.zipLeft(headOf(correlationId), forEachChainPage(correlationId, (rows) => walkRows(walk, rows))))
        .pipe(orUnavailable, Effect.withSpan("AuditRepo.verify"))

    /** Whether the database answers (readiness). */
    const ping = orUnavailable(sql.unsafe(`SELECT 1`))

    return { insert, query, chain, verify, ping } as const
  })
}) {}
