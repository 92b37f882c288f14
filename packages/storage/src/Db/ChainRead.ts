/**
 * Reading a whole chain for verification. The head and the rows come from one REPEATABLE READ snapshot (a batch
 * committed halfway through the read cannot look like deleted rows), through a server-side cursor fetched in pages.
 * The next page is requested before the current one is handed on, so PostgreSQL produces page k+1 on one core
 * while this process hashes page k on the other. Each row comes as one JSON array text: its hashed fields in
 * `canonicalKeys` order, then the link columns. One `JSON.parse` per row costs this process about half of what
 * the driver spends turning 28 separate columns into values (PostgreSQL, on the other core, does a little more),
 * and the canonical JSON is then built straight from the array.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { ChainWalk } from "../Chain.ts"
import { canonicalData, canonicalFromValues, canonicalKeys, type CanonicalKey, dataIndex } from "../Chain/Canonical.ts"
import { transactionClient } from "./Copy.ts"

/** How each hashed field is selected so that it reads back exactly as it was hashed. */
const expression: Partial<Record<CanonicalKey, string>> = {
  event_id: "event_id::text",
  event_timestamp: `to_char(event_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  parent_event_id: "parent_event_id::text",
  version: "event_version"
}

/** Positions of the link columns in a row, after the hashed fields. */
const linkIndex = {
  chainPosition: canonicalKeys.length,
  eventHash: canonicalKeys.length + 1,
  previousEventHash: canonicalKeys.length + 2,
  hashAlgorithm: canonicalKeys.length + 3
} as const

const cursorName = "kubemend_verify_chain"

const declare = `DECLARE ${cursorName} NO SCROLL CURSOR FOR
  SELECT json_build_array(${canonicalKeys.map((k) => expression[k] ?? k).join(", ")},
    chain_position, event_hash, previous_event_hash, hash_algorithm)::text
  FROM audit_events WHERE correlation_id = $1 ORDER BY chain_position`

/**
 * Rows per page. Small enough that the last page (which nothing overlaps) is short and a chain of a few hundred
 * events already overlaps; large enough that a round trip per page is noise.
 */
const pageSize = 256

/**
 * Hands every row of the chain to `onPage`, page by page, in `chain_position` order. Must run inside
 * `sql.withTransaction` whose first statement set REPEATABLE READ (see `AuditRepo.verify`).
 */
export const forEachChainPage = (
  correlationId: string,
  onPage: (rows: ReadonlyArray<ReadonlyArray<unknown>>) => void
): Effect.Effect<void, SqlError> =>
  Effect.flatMap(transactionClient, (client) =>
    Effect.async<void, SqlError>((resume) => {
      let done = false
      const finish = (effect: Effect.Effect<void, SqlError>) => {
        if (done) return
        done = true
        resume(effect)
      }
      const failed = (cause: unknown) => finish(Effect.fail(new SqlError({ cause, message: "Failed to read the chain" })))
      const fetch = () =>
        client.query({ text: `FETCH ${pageSize} FROM ${cursorName}`, rowMode: "array" }, (error, result) => {
          if (done) return
          if (error !== null) return failed(error)
          const rows = result.rows
          const more = rows.length === pageSize
          if (more) fetch()
          try {
            onPage(rows)
          } catch (defect) {
            return finish(Effect.die(defect))
          }
          if (!more) finish(Effect.void)
        })
      client.query({ text: declare, values: [correlationId] }, (error) => (error !== null ? failed(error) : fetch()))
      // On interruption stop asking for pages; the transaction's rollback closes the cursor.
      return Effect.sync(() => {
        done = true
      })
    }))

const eventIdIndex = canonicalKeys.indexOf("event_id")
const timestampIndex = canonicalKeys.indexOf("event_timestamp")

/** Feeds rows read by `forEachChainPage` to the walk. */
export const walkRows = (walk: ChainWalk, rows: ReadonlyArray<ReadonlyArray<unknown>>): void => {
  for (const row of rows) {
    const r = JSON.parse(row[0] as string) as ReadonlyArray<unknown>
    walk.step({
      eventId: r[eventIdIndex] as string,
      eventTimestamp: r[timestampIndex] as string,
      chainPosition: r[linkIndex.chainPosition] as number,
      eventHash: (r[linkIndex.eventHash] as string).trim(),
      previousEventHash: r[linkIndex.previousEventHash] as string,
      hashAlgorithm: r[linkIndex.hashAlgorithm] as string
    }, canonicalFromValues(r, canonicalData(r[dataIndex])))
  }
}
