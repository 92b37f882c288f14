/** Notification delivery records (`notification_audit`, unique `notification_id`). */
import { PgClient } from "@effect/sql-pg"
import { Conflict } from "@kubemend/core/Errors"
import type { NotificationAudit } from "@kubemend/core/StorageApi"
import { Duration, Effect } from "effect"
import { DatabaseUnavailable, orUnavailable, sqlState } from "./Errors.ts"

export interface NotificationRow {
  readonly id: number
  readonly created_at: Date
  readonly updated_at: Date
}

export class NotificationRepo extends Effect.Service<NotificationRepo>()("@kubemend/storage/NotificationRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient

    /** Inserts; `ifAbsent` (dead-letter replay) turns a duplicate into a no-op instead of a conflict. */
    const insert = (n: NotificationAudit, timeout: Duration.Duration, ifAbsent = false) =>
      sql
        .unsafe<NotificationRow>(
          `INSERT INTO notification_audit (remediation_id, notification_id, recipient, channel, message_summary, status,
             sent_at, delivery_status, error_message, escalation_level)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ${ifAbsent ? "ON CONFLICT (notification_id) DO NOTHING" : ""}
           RETURNING id::int AS id, created_at, updated_at`,
          [
            n.remediation_id,
            n.notification_id,
            n.recipient,
            n.channel,
            n.message_summary,
            n.status,
            n.sent_at,
            n.delivery_status ?? null,
            n.error_message ?? null,
            n.escalation_level ?? 0
          ]
        )
        .pipe(
          Effect.catchIf(
            (error) => sqlState(error) === "23505",
            () => Effect.fail(new Conflict({ detail: `notification_audit already exists with notification_id '${n.notification_id}'` }))
          ),
          orUnavailable,
          Effect.timeoutFail({ duration: timeout, onTimeout: () => new DatabaseUnavailable({ cause: "write timed out" }) }),
          Effect.withSpan("NotificationRepo.insert")
        )

    return { insert } as const
  })
}) {}
