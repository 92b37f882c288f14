/**
 * The retention job: every `retention.interval` (24h) it deletes expired audit events in batches of
 * `retention.batchSize` (1000). An event expires after its category's policy (config) or else its own
 * `retention_days` (2555 by default). A correlation id's chain is deleted only once every one of its events has
 * expired and none is held, so the chains that remain always verify. Runs on the Effect Clock (TestClock drives it)
 * in a scoped fiber that stops with the service.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Queue, Schedule } from "effect"
import { orUnavailable } from "./Db/Errors.ts"
import { StorageConfig } from "./StorageConfig.ts"

export interface PurgeReport {
  readonly chains: number
  readonly deleted: number
}

/** Chains examined per run; the next run continues with the rest. */
const maxChainsPerRun = 100_000

export class Retention extends Effect.Service<Retention>()("@kubemend/storage/Retention", {
  scoped: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const config = yield* StorageConfig
    const { batchSize, categories, enabled, interval } = config.retention

    /** One run at `now`: expired chains, then their events in batches. */
    const purge = (now: Date) =>
      Effect.gen(function* () {
        const expired = yield* sql.unsafe<{ correlation_id: string }>(
          `SELECT correlation_id FROM audit_events e
           GROUP BY correlation_id
           HAVING bool_and(NOT legal_hold)
              AND bool_and(event_timestamp < $1::timestamptz
                  - make_interval(days => coalesce(($2::jsonb ->> event_category)::int, retention_days)))
           LIMIT $3`,
          [now, JSON.stringify(categories), maxChainsPerRun]
        )
        const ids = expired.map((r) => r.correlation_id)
        let deleted = 0
        while (ids.length > 0) {
          // `NOT legal_hold` again: a hold placed since the selection keeps its whole chain.
          const [{ n }] = yield* sql.unsafe<{ n: number }>(
            `WITH d AS (DELETE FROM audit_events WHERE event_id IN (
               SELECT event_id FROM audit_events WHERE correlation_id = ANY($1::text[]) AND NOT legal_hold LIMIT $2)
             RETURNING 1)
             SELECT count(*)::int AS n FROM d`,
            [ids, batchSize]
          )
          deleted += n!
          if (n! < batchSize) break
        }
        if (ids.length > 0) {
          yield* sql.unsafe(
            `DELETE FROM audit_chain_heads h WHERE h.correlation_id = ANY($1::text[])
               AND NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.correlation_id = h.correlation_id)`,
            [ids]
          )
        }
        return { chains: ids.length, deleted } satisfies PurgeReport
      }).pipe(orUnavailable, Effect.withSpan("Retention.purge"))

    const runOnce = Effect.flatMap(Clock.currentTimeMillis, (now) => purge(new Date(now))).pipe(
      Effect.tap((r) => r.deleted > 0 ? Effect.logInfo("retention purge").pipe(Effect.annotateLogs({ chains: r.chains, deleted: r.deleted })) : Effect.void)
    )

    // Reports of the scheduled runs (bounded, newest kept), so a test can wait for one.
    const reports = yield* Queue.sliding<PurgeReport>(16)
    if (enabled) {
      yield* runOnce.pipe(
        Effect.tap((report) => Queue.offer(reports, report)),
        Effect.catchAllCause((cause) => Effect.logError("retention purge failed", cause)),
        Effect.delay(interval),
        Effect.repeat(Schedule.forever),
        Effect.forkScoped
      )
    }

    return { purge, runOnce, reports: reports as Queue.Dequeue<PurgeReport> } as const
  })
}) {}
