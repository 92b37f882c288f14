/**
 * RELIABILITY.md case 28 and the background jobs. The database "restarts" through a TCP proxy the test cuts at a
 * chosen point of the protocol (see support/Proxy.ts): before the COPY reaches the server (the transaction never
 * happened) and right after COMMIT was sent (it happened, but the service never heard back). Either way the write
 * lands in the dead-letter queue (202), a client retry adds a duplicate there, and after the database returns the
 * replay and a further retry leave exactly one copy of every event in one unbroken chain.
 */
import { PgClient } from "@effect/sql-pg"
import { Metrics } from "@kubemend/core/Metrics"
import { expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option, Queue, TestClock, TestContext } from "effect"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { migrations, runMigrations } from "../src/Db/Migrations.ts"
import { Dlq } from "../src/Dlq.ts"
import { Retention } from "../src/Retention.ts"
import { StorageConfig } from "../src/StorageConfig.ts"
import { auditEvent, client, Harness, harnessLayer, json, metric, waitFor } from "./support/Harness.ts"

const post = (events: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const h = yield* Harness
    const r = yield* Effect.promise(() => h.fetch("/api/v1/audit/events/batch", json(events)))
    return { status: r.status, body: (yield* Effect.promise(() => r.json())) as Record<string, unknown> }
  })

const count = (cid: string) =>
  Effect.flatMap(PgClient.PgClient, (sql) =>
    Effect.map(
      sql.unsafe<{ n: number; ids: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS ids FROM audit_events WHERE correlation_id = $1`,
        [cid]
      ),
      (rows) => rows[0]!
    ))

layer(
  harnessLayer((base) => ({ dlq: { ...base.dlq, capacity: 250 } }), { proxy: true }),
  { excludeTestServices: true, timeout: "120 seconds" }
)("database outages, dead-letter queue, migrations and retention", (it) => {
  for (const [when, marker] of [["before", "COPY audit_events"], ["after", "COMMIT"]] as const) {
    it.effect(`PostgreSQL restarting mid-batch (cut ${when} ${marker}), then retries: no duplicates, no gaps`, () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const proxy = h.proxy!
        const cid = `rr-outage-${when}`
        expect((yield* post([auditEvent({ correlation_id: cid })])).status).toBe(201)
        const batch = Array.from({ length: 100 }, (_, i) => ({ ...auditEvent({ correlation_id: cid, event_action: `a${i}` }), event_id: randomUUID() }))

        const cut = proxy.cutOn(marker, when)
        const first = yield* post(batch)
        yield* Effect.promise(() => cut).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => `the ${marker} cut never happened` }))
        expect(first.status).toBe(202)
        expect(first.body).toMatchObject({ status: "accepted", event_ids: batch.map((e) => e.event_id) })
        const retry = yield* post(batch)
        expect(retry.status).toBe(202)
        expect(yield* metric("datastorage_dlq_depth")).toBe(200)
        expect(yield* metric("datastorage_dlq_warning")).toBe(1)
        expect(yield* metric("datastorage_dlq_critical")).toBe(0)
        const ready = yield* Effect.promise(() => fetch(`${h.healthUrl}/readyz`))
        expect(ready.status).toBe(503)

        const full = yield* post(Array.from({ length: 100 }, () => auditEvent({ correlation_id: "rr-overflow" })))
        expect(full.status).toBe(503)
        expect(full.body).toMatchObject({ type: "https://kubemend.io/problems/dead-letter-queue-full", status: 503 })

        proxy.up()
        yield* waitFor(metric("datastorage_dlq_depth"), (n) => n === 0)
        expect(yield* count(cid)).toEqual({ n: 101, ids: 101 })
        const afterRecovery = yield* post(batch)
        expect(afterRecovery.status).toBe(201)
        expect(yield* count(cid)).toEqual({ n: 101, ids: 101 })
        const api = yield* client
        const report = yield* api.compliance.verifyAuditChain({ payload: { correlation_id: cid } })
        expect(report).toMatchObject({ is_valid: true, total_events: 101, verified_events: 101 })
        const dlqFile = yield* Effect.promise(() => Fs.readFile(Path.join(h.dlqDir, "dead-letter.ndjson"), "utf8"))
        expect(dlqFile).toBe("")
        expect((yield* Effect.promise(() => fetch(`${h.healthUrl}/readyz`))).status).toBe(200)
      }))
  }

  it.effect("the dead-letter queue is durable: a new instance over the same directory still holds the entries", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const dir = Path.join(h.dlqDir, "durability")
      const config = StorageConfig.layer({ dlq: { capacity: 100, dir, replayInterval: Duration.seconds(1) } })
      const queue = Layer.fresh(Dlq.Default).pipe(Layer.provide(Layer.mergeAll(config, Metrics.Default)))
      yield* Effect.scoped(Effect.flatMap(Layer.build(queue), (ctx) => Dlq.pipe(Effect.provide(ctx), Effect.flatMap((q) => q.enqueue("audit", [{ x: 1 }], 3)))))
      const depth = yield* Effect.scoped(Effect.flatMap(Layer.build(queue), (ctx) => Dlq.pipe(Effect.provide(ctx), Effect.flatMap((q) => q.depth))))
      expect(depth).toBe(3)
    }))

  it.effect("migrations are idempotent: running them again applies nothing and the statements re-run cleanly", () =>
    Effect.gen(function* () {
      expect(yield* runMigrations).toEqual([])
      yield* migrations["1_audit"]
      yield* migrations["2_catalog"]
    }).pipe(Effect.orDie))

  it.effect("the retention job runs on the Effect clock: per-category policy, default days, held chains skipped", () =>
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      const day = 86_400_000
      const now = Date.now()
      yield* post([auditEvent({ correlation_id: "rr-ret-policy", event_category: "workflow", event_timestamp: new Date(now - 3 * day).toISOString() })])
      yield* post([auditEvent({ correlation_id: "rr-ret-keep", event_category: "gateway", event_timestamp: new Date(now - 3 * day).toISOString() })])
      yield* post([auditEvent({ correlation_id: "rr-ret-held", event_category: "workflow", event_timestamp: new Date(now - 3 * day).toISOString() })])
      const api = yield* client
      yield* api.compliance.placeLegalHold({ payload: { correlation_id: "rr-ret-held", reason: "audit" } })
      const config = StorageConfig.layer({
        retention: { enabled: true, interval: Duration.hours(24), batchSize: 1000, defaultDays: 2555, categories: { workflow: 1 } }
      })
      const retentionLayer = Layer.fresh(Retention.Default).pipe(Layer.provide(config), Layer.provide(Layer.succeed(PgClient.PgClient, sql)))
      const report = yield* Effect.scoped(
        Effect.gen(function* () {
          yield* TestClock.setTime(now)
          const retention = Context.get(yield* Layer.build(retentionLayer), Retention)
          expect(Option.isNone(yield* Queue.poll(retention.reports))).toBe(true)
          yield* TestClock.adjust("23 hours")
          expect(Option.isNone(yield* Queue.poll(retention.reports))).toBe(true)
          yield* TestClock.adjust("1 hour")
          return yield* Queue.take(retention.reports)
        })
      ).pipe(Effect.provide(TestContext.TestContext))
      expect(report.deleted).toBe(1)
      expect((yield* count("rr-ret-policy")).n).toBe(0)
      expect((yield* count("rr-ret-keep")).n).toBe(1)
      expect((yield* count("rr-ret-held")).n).toBe(1)
    }))
})
