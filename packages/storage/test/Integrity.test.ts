/**
 * RELIABILITY.md cases 25–27 against real PostgreSQL over real HTTP: tampered, deleted, reordered and re-linked rows
 * are found by verify-chain; concurrent batches on one correlation id form one chain; held rows survive the API,
 * the retention job and plain SQL.
 */
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { makeHasher } from "../src/Chain.ts"
import { auditColumns, type AuditRow, toChainEvent } from "../src/Db/AuditRows.ts"
import { Retention } from "../src/Retention.ts"
import { auditEvent, client, Harness, harnessLayer, json } from "./support/Harness.ts"

const seed = (correlationId: string, n: number) =>
  Effect.gen(function* () {
    const h = yield* Harness
    const events = Array.from(
      { length: n },
      (_, i) => auditEvent({ correlation_id: correlationId, event_action: `step-${i + 1}`, event_data: { step: i + 1 } })
    )
    const r = yield* Effect.promise(() => h.fetch("/api/v1/audit/events/batch", json(events)))
    expect(r.status).toBe(201)
    return ((yield* Effect.promise(() => r.json())) as { event_ids: Array<string> }).event_ids
  })

const verify = (correlationId: string) => Effect.flatMap(client, (api) => api.compliance.verifyAuditChain({ payload: { correlation_id: correlationId } }))

/** Runs `statements` with the immutability trigger off, as an attacker with table-owner rights could. */
const tamper = (...statements: Array<readonly [string, ReadonlyArray<unknown>]>) =>
  Effect.flatMap(PgClient.PgClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql.unsafe(`ALTER TABLE audit_events DISABLE TRIGGER audit_events_immutable`)
        for (const [text, params] of statements) yield* sql.unsafe(text, params)
        yield* sql.unsafe(`ALTER TABLE audit_events ENABLE TRIGGER audit_events_immutable`)
      })
    ))

const sqlError = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), (e) => String((e as { cause?: unknown }).cause ?? e))

layer(harnessLayer(), { excludeTestServices: true, timeout: "120 seconds" })("hash chain and legal hold", (it) => {
  it.effect("an untouched chain verifies", () =>
    Effect.gen(function* () {
      yield* seed("rr-intact", 5)
      const report = yield* verify("rr-intact")
      expect(report).toMatchObject({ is_valid: true, total_events: 5, verified_events: 5, tampered_events: [] })
    }))

  it.effect("a modified row is the first tampered event (content no longer matches its hash)", () =>
    Effect.gen(function* () {
      const ids = yield* seed("rr-tampered", 5)
      yield* tamper([`UPDATE audit_events SET event_data = '{"step": 99}' WHERE event_id = $1`, [ids[2]]])
      const report = yield* verify("rr-tampered")
      expect(report.is_valid).toBe(false)
      expect(report.first_tampered_event_id).toBe(ids[2])
      expect(report.verified_events).toBe(4)
      expect(report.tampered_events[0]!.message).toContain("modified")
    }))

  it.effect("a deleted row breaks the link of the next one; deleting the newest shows against the recorded head", () =>
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      const ids = yield* seed("rr-deleted", 5)
      yield* sql.unsafe(`DELETE FROM audit_events WHERE event_id = $1`, [ids[2]])
      const report = yield* verify("rr-deleted")
      expect(report.is_valid).toBe(false)
      expect(report.first_tampered_event_id).toBe(ids[3])

      const tail = yield* seed("rr-deleted-tail", 3)
      yield* sql.unsafe(`DELETE FROM audit_events WHERE event_id = $1`, [tail[2]])
      const tailReport = yield* verify("rr-deleted-tail")
      expect(tailReport.is_valid).toBe(false)
      expect(tailReport.tampered_events.at(-1)!.message).toContain("deleted")
    }))

  it.effect("reordered rows are found at the first moved position", () =>
    Effect.gen(function* () {
      const ids = yield* seed("rr-reordered", 4)
      yield* tamper(
        [`UPDATE audit_events SET chain_position = -1 WHERE event_id = $1`, [ids[1]]],
        [`UPDATE audit_events SET chain_position = 2 WHERE event_id = $1`, [ids[2]]],
        [`UPDATE audit_events SET chain_position = 3 WHERE event_id = $1`, [ids[1]]]
      )
      const report = yield* verify("rr-reordered")
      expect(report.is_valid).toBe(false)
      expect(report.first_tampered_event_id).toBe(ids[2])
    }))

  it.effect("a row rewritten with a recomputed hash and re-linked successor is still caught (successor no longer hashes)", () =>
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      const ids = yield* seed("rr-relinked", 4)
      const [row] = yield* sql.unsafe<AuditRow>(`SELECT ${auditColumns} FROM audit_events WHERE event_id = $1`, [ids[1]])
      const forged = { ...toChainEvent(row!), event_data: { step: 2, approved: true } }
      const forgedHash = makeHasher(undefined).hash(row!.previous_event_hash, forged)
      yield* tamper(
        [`UPDATE audit_events SET event_data = $2::jsonb, event_hash = $3 WHERE event_id = $1`, [ids[1], JSON.stringify(forged.event_data), forgedHash]],
        [`UPDATE audit_events SET previous_event_hash = $2 WHERE event_id = $1`, [ids[2], forgedHash]]
      )
      const report = yield* verify("rr-relinked")
      expect(report.is_valid).toBe(false)
      expect(report.first_tampered_event_id).toBe(ids[2])
    }))

  it.effect("a long chain is read page by page: a row modified far down is still the first finding", () =>
    Effect.gen(function* () {
      const ids = [...(yield* seed("rr-long", 1000)), ...(yield* seed("rr-long", 300))]
      expect(yield* verify("rr-long")).toMatchObject({ is_valid: true, total_events: 1300, verified_events: 1300 })
      yield* tamper([`UPDATE audit_events SET event_data = '{"step": 0}' WHERE event_id = $1`, [ids[1111]]])
      const report = yield* verify("rr-long")
      expect(report).toMatchObject({ is_valid: false, total_events: 1300, verified_events: 1299, first_tampered_event_id: ids[1111] })
    }))

  it.effect("the database refuses to change an event's core columns", () =>
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      const [id] = yield* seed("rr-immutable", 1)
      const message = yield* sqlError(sql.unsafe(`UPDATE audit_events SET event_outcome = 'failure' WHERE event_id = $1`, [id]))
      expect(message).toContain("immutable")
    }))

  it.effect("concurrent batches on one correlation id form one unbroken chain", () =>
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      yield* Effect.forEach(Array.from({ length: 8 }, (_, i) => i), () => seed("rr-concurrent", 50), { concurrency: "unbounded" })
      const report = yield* verify("rr-concurrent")
      expect(report).toMatchObject({ is_valid: true, total_events: 400, verified_events: 400 })
      const positions = yield* sql.unsafe<{ p: number }>(
        `SELECT chain_position AS p FROM audit_events WHERE correlation_id = 'rr-concurrent' ORDER BY 1`
      )
      expect(positions.map((r) => r.p)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1))
    }))

  it.effect("held events survive the API, the retention job and plain SQL; release lifts the hold", () =>
    Effect.gen(function* () {
      const api = yield* client
      const sql = yield* PgClient.PgClient
      const retention = yield* Retention
      const old = new Date(Date.now() - 3000 * 86_400_000).toISOString()
      const h = yield* Harness
      for (const cid of ["rr-held", "rr-expired"]) {
        const events = [auditEvent({ correlation_id: cid, event_timestamp: old }), auditEvent({ correlation_id: cid, event_timestamp: old })]
        yield* Effect.promise(() => h.fetch("/api/v1/audit/events/batch", json(events)))
      }
      const hold = yield* api.compliance.placeLegalHold({ payload: { correlation_id: "rr-held", reason: "SEC investigation #7" } })
      expect(hold).toMatchObject({
        correlation_id: "rr-held",
        events_affected: 2,
        placed_by: "system:serviceaccount:kubemend-system:gateway",
        reason: "SEC investigation #7"
      })
      yield* seed("rr-held", 1)
      expect((yield* api.compliance.listLegalHolds()).holds).toEqual([expect.objectContaining({ correlation_id: "rr-held", events_affected: 3 })])
      const unknown = yield* Effect.flip(api.compliance.placeLegalHold({ payload: { correlation_id: "rr-none", reason: "x" } }))
      expect(unknown).toMatchObject({ status: 404 })

      expect(yield* sqlError(sql.unsafe(`DELETE FROM audit_events WHERE correlation_id = 'rr-held'`))).toContain("legal hold")
      expect(yield* sqlError(sql.unsafe(`UPDATE audit_events SET legal_hold = false WHERE correlation_id = 'rr-held'`))).toContain("legal hold")
      expect(yield* sqlError(sql.unsafe(`TRUNCATE audit_events`))).toContain("legal hold")

      const purged = yield* retention.purge(new Date())
      expect(purged.deleted).toBeGreaterThanOrEqual(2)
      const count = (cid: string) => Effect.map(api.audit.queryAuditEvents({ urlParams: { correlation_id: cid } }), (p) => p.pagination.total)
      expect(yield* count("rr-held")).toBe(3)
      expect(yield* count("rr-expired")).toBe(0)
      expect((yield* verify("rr-held")).is_valid).toBe(true)

      const released = yield* api.compliance.releaseLegalHold({ path: { correlation_id: "rr-held" }, payload: { release_reason: "case closed" } })
      expect(released).toMatchObject({ events_released: 3, released_by: "system:serviceaccount:kubemend-system:gateway" })
      expect((yield* api.compliance.listLegalHolds()).total).toBe(0)
      const again = yield* Effect.flip(api.compliance.releaseLegalHold({ path: { correlation_id: "rr-held" }, payload: { release_reason: "again" } }))
      expect(again).toMatchObject({ status: 404 })
      yield* sql.unsafe(`DELETE FROM audit_events WHERE correlation_id = 'rr-held'`)
      expect(yield* count("rr-held")).toBe(0)
    }))
})

layer(harnessLayer(() => ({ hashKey: Option.some(Redacted.make("integrity-test-key")) })), { excludeTestServices: true, timeout: "120 seconds" })(
  "hash chain with a key",
  (it) => {
    it.effect("rows are HMAC'd and say so; a rewrite re-hashed without the key is caught at the rewritten row", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const ids = yield* seed("rr-keyed", 600)
        const algorithms = yield* sql.unsafe<{ a: string }>(`SELECT DISTINCT hash_algorithm AS a FROM audit_events WHERE correlation_id = 'rr-keyed'`)
        expect(algorithms.map((r) => r.a)).toEqual(["hmac-sha256"])
        expect(yield* verify("rr-keyed")).toMatchObject({ is_valid: true, total_events: 600, verified_events: 600 })
        const [row] = yield* sql.unsafe<AuditRow>(`SELECT ${auditColumns} FROM audit_events WHERE event_id = $1`, [ids[400]])
        const forged = { ...toChainEvent(row!), event_data: { step: 401, approved: true } }
        yield* tamper([
          `UPDATE audit_events SET event_data = $2::jsonb, event_hash = $3 WHERE event_id = $1`,
          [ids[400], JSON.stringify(forged.event_data), makeHasher(undefined).hash(row!.previous_event_hash, forged)]
        ])
        const report = yield* verify("rr-keyed")
        expect(report).toMatchObject({ is_valid: false, first_tampered_event_id: ids[400] })
      }))
  }
)
