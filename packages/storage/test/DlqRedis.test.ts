/**
 * The dead-letter queue as a Valkey/Redis stream, against a real server (support/Redis.ts): the service over real
 * HTTP with PostgreSQL and Redis each behind a TCP proxy the test cuts (support/Proxy.ts), and the queue alone for
 * what several replicas sharing one stream must get right.
 */
import { PgClient } from "@effect/sql-pg"
import { DeadLetterQueueFull } from "@kubemend/core/Errors"
import { Metrics } from "@kubemend/core/Metrics"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Layer, Option, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { Dlq, type DlqEntry } from "../src/Dlq.ts"
import { StorageConfig } from "../src/StorageConfig.ts"
import { auditEvent, client, Harness, harnessLayer, json, metric, waitFor } from "./support/Harness.ts"
import { type PgProxy, startProxy } from "./support/Proxy.ts"
import { directClient, redisUrl, requireRedis, skipRedis, uniqueStreamKey, unreachable, valkeySettings } from "./support/Redis.ts"

class RedisSide extends Context.Tag("storage-test/RedisSide")<RedisSide, {
  /** The service reaches Redis through it. */
  readonly proxy: PgProxy
  readonly streamKey: string
  readonly redis: Effect.Effect.Success<ReturnType<typeof directClient>>
}>() {}

const capacity = 250

/** The service on a stream of its own, reaching PostgreSQL and Redis through proxies; the keys are deleted after. */
const ServiceOnRedis = Layer.unwrapScoped(
  Effect.gen(function* () {
    yield* requireRedis
    const streamKey = uniqueStreamKey("http")
    const redis = yield* directClient(streamKey)
    const proxy = yield* startProxy(redisUrl)
    const service = harnessLayer(
      (base) => ({ dlq: { ...base.dlq, capacity }, valkey: Option.some(valkeySettings(proxy.url, streamKey)) }),
      { proxy: true }
    )
    return Layer.merge(service, Layer.succeed(RedisSide, { proxy, streamKey, redis }))
  })
)

const post = (events: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const h = yield* Harness
    const r = yield* Effect.promise(() => h.fetch("/api/v1/audit/events/batch", json(events)))
    // A hang is a failure too: the write must be answered, whatever is down.
    const body = yield* Effect.promise(() => r.json() as Promise<Record<string, unknown>>)
    return { status: r.status, contentType: r.headers.get("content-type"), body }
  }).pipe(Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => "the write was never answered" }), Effect.orDie)

const batch = (cid: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ ...auditEvent({ correlation_id: cid, event_action: `a${i}` }), event_id: randomUUID() }))

/** A sample of the metrics endpoint: the first series of `name` whose labels include `labels`. */
const stored = (cid: string) =>
  Effect.flatMap(PgClient.PgClient, (sql) =>
    Effect.map(
      sql.unsafe<{ n: number; ids: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS ids FROM audit_events WHERE correlation_id = $1`,
        [cid]
      ),
      (rows) => rows[0]!
    )).pipe(Effect.orDie)

const streamLength = Effect.flatMap(RedisSide, ({ redis, streamKey }) => Effect.promise(() => redis.xlen(streamKey)))

/** The queue alone over `streamKey`, as one replica of the service builds it. */
const replica = (streamKey: string, cap: number) =>
  Layer.fresh(Dlq.Default).pipe(
    Layer.provide(Layer.mergeAll(
      StorageConfig.layer({
        dlq: { capacity: cap, dir: "/nonexistent/the-file-backend-must-not-be-used", replayInterval: Duration.seconds(1) },
        valkey: Option.some(valkeySettings(redisUrl, streamKey))
      }),
      Metrics.Default
    ))
  )

const build = (streamKey: string, cap: number) => Effect.map(Layer.build(replica(streamKey, cap)), (ctx) => Context.get(ctx, Dlq))

const title = "dead-letter queue on a Valkey/Redis stream"
if (skipRedis) console.warn(`DlqRedis.test.ts skipped: ${unreachable}`)
describe.skipIf(skipRedis)(skipRedis ? `${title} (skipped: ${unreachable})` : title, () => {
  layer(ServiceOnRedis, { excludeTestServices: true, timeout: "120 seconds" })("the service with a valkey block", (it) => {
    it.effect("the database away: writes are accepted (202) into the stream, gauges at 80% and 90%, refused past capacity", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { redis, streamKey } = yield* RedisSide
        const cid = "rr-valkey-outage"
        expect((yield* post([auditEvent({ correlation_id: cid })])).status).toBe(201)
        h.proxy!.down()

        const events = batch(cid, 100)
        const first = yield* post(events)
        expect(first.status).toBe(202)
        expect(first.body).toMatchObject({ status: "accepted", event_ids: events.map((e) => e.event_id) })
        const [[, fields]] = (yield* Effect.promise(() => redis.xrange(streamKey, "-", "+"))) as Array<[string, Array<string>]>
        expect(fields.slice(0, 2)).toEqual(["count", "100"])
        const entry = JSON.parse(fields[3]!) as DlqEntry
        expect(entry).toMatchObject({ kind: "audit", count: 100 })
        expect((entry.payload as Array<{ event_id: string }>).map((e) => e.event_id)).toEqual(events.map((e) => e.event_id))

        expect((yield* post(events)).status).toBe(202)
        expect(yield* streamLength).toBe(2)
        expect(yield* metric("datastorage_dlq_depth")).toBe(200)
        expect(yield* metric("datastorage_dlq_warning")).toBe(1)
        expect(yield* metric("datastorage_dlq_critical")).toBe(0)
        expect((yield* post(batch("rr-valkey-other", 25))).status).toBe(202)
        expect(yield* metric("datastorage_dlq_critical")).toBe(1)

        const full = yield* post(batch("rr-valkey-overflow", 26))
        expect(full.status).toBe(503)
        expect(full.contentType).toContain("application/problem+json")
        expect(full.body).toMatchObject({ type: "https://kubemend.io/problems/dead-letter-queue-full", status: 503 })
        expect(yield* metric("datastorage_dlq_refused_total", `reason="full"`)).toBe(26)
        expect(yield* streamLength).toBe(3)
      }))

    it.effect("the database back: the replay drains the stream, every event stored once in one chain", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { redis, streamKey } = yield* RedisSide
        h.proxy!.up()
        yield* waitFor(metric("datastorage_dlq_depth"), (n) => n === 0)
        expect(yield* streamLength).toBe(0)
        expect(yield* Effect.promise(() => redis.exists(`${streamKey}:events`))).toBe(0)
        expect(yield* stored("rr-valkey-outage")).toEqual({ n: 101, ids: 101 })
        expect(yield* stored("rr-valkey-other")).toEqual({ n: 25, ids: 25 })
        expect(yield* stored("rr-valkey-overflow")).toEqual({ n: 0, ids: 0 })
        const api = yield* client
        const report = yield* api.compliance.verifyAuditChain({ payload: { correlation_id: "rr-valkey-outage" } })
        expect(report).toMatchObject({ is_valid: true, total_events: 101, verified_events: 101 })
        expect(yield* metric("datastorage_dlq_warning")).toBe(0)
      }))

    it.effect("Valkey unreachable while the database is away: a 503 problem naming both, never a 500 or a hang", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const side = yield* RedisSide
        h.proxy!.down()
        side.proxy.down()
        const refused = yield* post(batch("rr-valkey-both-down", 3))
        expect(refused.status).toBe(503)
        expect(refused.contentType).toContain("application/problem+json")
        expect(refused.body).toMatchObject({ status: 503, title: "Service Unavailable" })
        expect(String(refused.body["type"])).toMatch(/service-unavailable$/)
        expect(String(refused.body["detail"])).toMatch(/database is unreachable and so is the dead-letter queue/)
        expect(yield* metric("datastorage_dlq_refused_total", `reason="unavailable"`)).toBe(3)

        // Valkey back (the client reconnects on its own): writes are queued again, then replayed once the database is.
        side.proxy.up()
        const events = batch("rr-valkey-both-down", 4)
        yield* waitFor(Effect.map(post(events), (r) => r.status), (s) => s === 202)
        h.proxy!.up()
        yield* waitFor(stored("rr-valkey-both-down"), (r) => r.n === 4)
        yield* waitFor(streamLength, (n) => n === 0)
        expect(yield* stored("rr-valkey-both-down")).toEqual({ n: 4, ids: 4 })
      }))
  })

  describe("replicas sharing one stream", () => {
    it.scopedLive("is durable: a new instance on the same stream still holds the entries", () =>
      Effect.gen(function* () {
        yield* requireRedis
        const key = uniqueStreamKey("durable")
        const redis = yield* directClient(key)
        yield* Effect.scoped(Effect.flatMap(build(key, 100), (q) => q.enqueue("audit", [{ x: 1 }], 3)))
        const depth = yield* Effect.scoped(Effect.flatMap(build(key, 100), (q) => q.depth))
        expect(depth).toBe(3)
        expect(yield* Effect.promise(() => redis.xlen(key))).toBe(1)
      }))

    it.scopedLive("share one capacity: a write that would exceed it on either replica is refused", () =>
      Effect.gen(function* () {
        yield* requireRedis
        const key = uniqueStreamKey("capacity")
        yield* directClient(key)
        const a = yield* build(key, 10)
        const b = yield* build(key, 10)
        yield* a.enqueue("audit", [], 6)
        const over = yield* Effect.exit(b.enqueue("audit", [], 5))
        expect(Exit.isFailure(over) && over.cause._tag === "Fail" && over.cause.error instanceof DeadLetterQueueFull).toBe(true)
        yield* b.enqueue("notification", {}, 4)
        expect(yield* a.depth).toBe(10)
      }))

    it.scopedLive("replaying at the same time write every entry exactly once, oldest first", () =>
      Effect.gen(function* () {
        yield* requireRedis
        const key = uniqueStreamKey("replay")
        const redis = yield* directClient(key)
        const a = yield* build(key, 1000)
        const b = yield* build(key, 1000)
        for (let i = 0; i < 20; i++) yield* (i % 2 === 0 ? a : b).enqueue("audit", [{ i }], 1)
        const written = yield* Ref.make<ReadonlyArray<number>>([])
        const write = (entry: DlqEntry) => Effect.zipRight(Effect.yieldNow(), Ref.update(written, (w) => [...w, (entry.payload as Array<{ i: number }>)[0]!.i]))
        const [na, nb] = yield* Effect.all([a.replay(write), b.replay(write)], { concurrency: 2 })
        expect(na + nb).toBe(20)
        expect(yield* Ref.get(written)).toEqual(Array.from({ length: 20 }, (_, i) => i))
        expect(yield* a.depth).toBe(0)
        expect(yield* Effect.promise(() => redis.xlen(key))).toBe(0)
      }))

    it.scopedLive("a failed write keeps that entry and the rest; an unreadable entry is dropped, not retried forever", () =>
      Effect.gen(function* () {
        yield* requireRedis
        const key = uniqueStreamKey("partial")
        const redis = yield* directClient(key)
        yield* Effect.promise(() => redis.xadd(key, "*", "count", "2", "entry", "not json"))
        const q = yield* build(key, 100)
        expect(yield* q.depth).toBe(2)
        yield* q.enqueue("audit", [{ i: 1 }], 1)
        yield* q.enqueue("audit", [{ i: 2 }], 1)
        const first = yield* q.replay((entry) => ((entry.payload as Array<{ i: number }>)[0]!.i === 2 ? Effect.fail("database away") : Effect.void))
        expect(first).toBe(1)
        expect(yield* q.depth).toBe(1)
        expect(yield* q.replay(() => Effect.void)).toBe(1)
        expect(yield* q.depth).toBe(0)
      }))
  })
})
