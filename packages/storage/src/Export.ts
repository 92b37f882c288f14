/**
 * Compliance export: the events matching the filters (at most `export.maxEvents`, else `ExportTooLarge`), each
 * flagged with whether its chain link verifies, a verification summary, and a detached JWS over the exact body.
 * PII redaction (optional) happens after verification, as in the original.
 */
import { PgClient } from "@effect/sql-pg"
import { ExportTooLarge } from "@kubemend/core/Errors"
import type { AuditExportResponse, ExportQuery } from "@kubemend/core/StorageApi"
import { Clock, Effect } from "effect"
import { AuditWriter } from "./AuditWriter.ts"
import { verifyChain } from "./Chain.ts"
import { AuditRepo } from "./Db/AuditRepo.ts"
import { auditColumns, type AuditRow, toAuditEvent, toChainRow } from "./Db/AuditRows.ts"
import { orUnavailable } from "./Db/Errors.ts"
import { Where } from "./Db/Where.ts"
import { ExportSigner } from "./ExportSigner.ts"
import { StorageConfig } from "./StorageConfig.ts"

const maskEmail = (s: string) => s.replace(/([^@\s])[^@\s]*@([^.\s])[^.\s]*/g, "$1***@$2***")
const maskIp = (s: string) => s.replace(/\b(\d{1,3})\.\d{1,3}\.\d{1,3}\.\d{1,3}\b/g, "$1.***.*.***")
const maskPhone = (s: string) => s.replace(/\d/g, (d, i: number) => (i < 2 ? d : "*"))
const redactors: Record<string, (s: string) => string> = {
  user_email: maskEmail,
  source_ip: maskIp,
  actor_ip: maskIp,
  phone_number: maskPhone
}

const redact = (data: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, typeof v === "string" && redactors[k] !== undefined ? redactors[k](v) : v])
  )

export interface SignedExport {
  readonly body: Uint8Array
  readonly signature: string
}

export class Exporter extends Effect.Service<Exporter>()("@kubemend/storage/Exporter", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const config = yield* StorageConfig
    const repo = yield* AuditRepo
    const writer = yield* AuditWriter
    const signer = yield* ExportSigner
    const max = config.export.maxEvents

    const fetch = (q: ExportQuery) =>
      Effect.gen(function* () {
        const where = new Where()
          .add("event_timestamp >= ?", q.start_time)
          .add("event_timestamp <= ?", q.end_time)
          .add("correlation_id = ?", q.correlation_id)
          .add("event_category = ?", q.event_category)
        const [{ total }] = yield* sql.unsafe<{ total: number }>(`SELECT count(*)::int AS total FROM audit_events ${where.sql}`, where.params)
        const offset = q.offset ?? 0
        const size = Math.max(0, Math.min(q.limit ?? Number.MAX_SAFE_INTEGER, total! - offset))
        if (size > max) {
          return yield* new ExportTooLarge({
            limit: max,
            detail: `the export would hold ${size} events; at most ${max} are allowed per export, use offset and limit`
          })
        }
        const o = where.bind(offset)
        const l = where.bind(size)
        const rows = yield* sql.unsafe<AuditRow>(
          `SELECT ${auditColumns} FROM audit_events ${where.sql} ORDER BY event_timestamp, seq OFFSET $${o} LIMIT $${l}`,
          where.params
        )
        return rows
      }).pipe(orUnavailable)

    /** Verifies the whole chain of every correlation id in the export; returns the ids whose link verifies. */
    const verified = (rows: ReadonlyArray<AuditRow>) =>
      Effect.forEach(
        [...new Set(rows.map((r) => r.correlation_id))],
        (cid) => Effect.map(repo.chain(cid), (c) => verifyChain(c.rows.map(toChainRow), writer.hasher, c.head).validIds),
        { concurrency: 4 }
      ).pipe(Effect.map((sets) => new Set(sets.flatMap((s) => [...s]))))

    const build = (q: ExportQuery, exportedBy: string) =>
      Effect.gen(function* () {
        const rows = yield* fetch(q)
        const valid = yield* verified(rows)
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const tampered = rows.filter((r) => !valid.has(r.event_id)).map((r) => r.event_id)
        const events = rows.map((r) => {
          const e = toAuditEvent(r)
          const shown = q.redact_pii === true ? { ...e, event_data: redact(e.event_data), ...(e.actor_ip ? { actor_ip: maskIp(e.actor_ip) } : {}) } : e
          return { ...shown, hash_chain_valid: valid.has(r.event_id) }
        })
        const response: AuditExportResponse = {
          export_metadata: {
            export_timestamp: now,
            export_format: "json",
            query_filters: { ...q },
            total_events: rows.length,
            // The signature cannot sit inside the bytes it signs: it is detached (`detached_signature`, header).
            signature: "detached",
            signature_algorithm: signer.algorithm,
            signature_key_id: signer.kid,
            exported_by: q.redact_pii === true ? maskEmail(exportedBy) : exportedBy
          },
          events,
          hash_chain_verification: {
            total_events_verified: rows.length,
            valid_chain_events: rows.length - tampered.length,
            broken_chain_events: tampered.length,
            chain_integrity_percentage: rows.length === 0 ? 100 : Math.round(((rows.length - tampered.length) / rows.length) * 10000) / 100,
            verification_timestamp: now,
            tampered_event_ids: tampered
          }
        }
        // The signed bytes are this document; `detached_signature` is appended as its last member, so a verifier
        // removes exactly `,"detached_signature":"…"` before the closing brace to get them back.
        const text = JSON.stringify(response)
        const signed = new TextEncoder().encode(text)
        const signature = yield* signer.sign(signed)
        if (q.include_detached_signature !== true) return { body: signed, signature } satisfies SignedExport
        const der = yield* signer.signDer(signed)
        const body = new TextEncoder().encode(`${text.slice(0, -1)},"detached_signature":"${der}"}`)
        return { body, signature } satisfies SignedExport
      }).pipe(Effect.withSpan("Exporter.build"))

    return { build } as const
  })
}) {}
