import { describe, expect, it, layer } from "@effect/vitest"
import { AuditEventBatch } from "@kubemend/core/StorageApi"
import { Effect, Either, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { fastDecode } from "../src/Http/AuditBatch.ts"
import { auditEvent, client, Harness, harnessLayer, json, metric } from "./support/Harness.ts"

const problemOf = async (response: Response) => {
  expect(response.headers.get("content-type")).toContain("application/problem+json")
  return (await response.json()) as { type: string; title: string; status: number; detail?: string }
}

const call = (path: string, init?: RequestInit & { readonly token?: string | null }) =>
  Effect.flatMap(Harness, (h) => Effect.promise(() => h.fetch(path, init)))

const body = <A>(r: Response) => Effect.promise(() => r.json() as Promise<A>)

describe("batch decoding", () => {
  const full = {
    ...auditEvent(),
    event_id: randomUUID().toUpperCase(),
    actor_ip: "10.0.0.1",
    resource_type: "Pod",
    resource_id: "web-1",
    parent_event_id: randomUUID(),
    parent_event_date: "2026-01-01",
    namespace: "prod",
    cluster_id: "c1",
    severity: "high",
    duration_ms: 12,
    error_code: "E1",
    error_message: "boom",
    retention_days: 30,
    is_sensitive: true
  }
  const replacements: ReadonlyArray<unknown> = [
    undefined,
    null,
    "",
    "x".repeat(46),
    "x".repeat(101),
    "x".repeat(256),
    0,
    1.5,
    -1,
    2 ** 60,
    true,
    [],
    {},
    { a: 1 },
    "maybe",
    "gateway",
    "success",
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00.123+02:00",
    "2026-13-01T00:00:00Z",
    "2026-01-01",
    "not-a-uuid",
    randomUUID(),
    "ABCDEF00-0000-4000-8000-000000000000"
  ]
  const variants = [
    full,
    { ...full, extra: "ignored" },
    ...Object.keys(full).flatMap((key) =>
      replacements.map((value) => {
        const e: Record<string, unknown> = { ...full }
        if (value === undefined) delete e[key]
        else e[key] = value
        return e
      })
    )
  ]
  const decode = Schema.decodeUnknownEither(AuditEventBatch)

  it("the fast path accepts only what the contract's Schema accepts, and yields the same values", () => {
    let accepted = 0
    for (const v of variants) {
      const body = JSON.parse(JSON.stringify([auditEvent(), v]))
      const fast = fastDecode(body)
      const schema = decode(JSON.parse(JSON.stringify(body)))
      if (fast === undefined) continue
      accepted++
      expect(Either.isRight(schema)).toBe(true)
      // The Schema drops keys it does not know; the fast path leaves them, and the writer reads only known keys.
      const known = (e: object) => Object.fromEntries(Object.entries(e).filter(([k]) => k !== "extra"))
      expect(fast.map(known)).toEqual(Either.getOrThrow(schema).map(known))
    }
    expect(accepted).toBeGreaterThan(20)
  })

  it("leaves anything that is not an array of plain objects to the Schema", () => {
    for (
      const body of [{}, "[]", null, [[]], [null], [{ ...auditEvent(), event_data: [] }], [{
        ...auditEvent(),
        event_data: JSON.parse("{\"__proto__\": {\"x\": 1}}")
      }]]
    ) {
      expect(fastDecode(body)).toBeUndefined()
    }
  })
})

layer(harnessLayer(), { excludeTestServices: true, timeout: "120 seconds" })("audit events over HTTP", (it) => {
  it.effect("stores one event (201 with event_id) and reads it back with its chain fields", () =>
    Effect.gen(function* () {
      const r = yield* call("/api/v1/audit/events", json(auditEvent({ correlation_id: "rr-one" })))
      expect(r.status).toBe(201)
      const created = yield* body<{ event_id: string; message: string }>(r)
      expect(created.event_id).toMatch(/^[0-9a-f-]{36}$/)
      const api = yield* client
      const page = yield* api.audit.queryAuditEvents({ urlParams: { correlation_id: "rr-one" } })
      expect(page.pagination).toEqual({ limit: 50, offset: 0, total: 1, has_more: false })
      expect(page.data[0]).toMatchObject({
        event_id: created.event_id,
        correlation_id: "rr-one",
        previous_event_hash: "",
        hash_algorithm: "sha256-unkeyed",
        legal_hold: false,
        retention_days: 2555
      })
      expect(page.data[0]!.event_hash).toMatch(/^[0-9a-f]{64}$/)
    }))

  it.effect("stores a batch (1 to 1000) all or nothing; 0 or 1001 events is a validation-error problem", () =>
    Effect.gen(function* () {
      const api = yield* client
      const batch = Array.from({ length: 3 }, (_, i) => auditEvent({ correlation_id: "rr-batch", event_action: `a${i}` }))
      const ok = yield* call("/api/v1/audit/events/batch", json(batch))
      expect(ok.status).toBe(201)
      expect((yield* body<{ event_ids: Array<string> }>(ok)).event_ids).toHaveLength(3)
      const full = yield* call("/api/v1/audit/events/batch", json(Array.from({ length: 1000 }, () => auditEvent({ correlation_id: "rr-1000" }))))
      expect(full.status).toBe(201)

      for (const size of [0, 1001]) {
        const r = yield* call("/api/v1/audit/events/batch", json(Array.from({ length: size }, () => auditEvent({ correlation_id: "rr-x" }))))
        expect(r.status).toBe(400)
        expect(yield* Effect.promise(() => problemOf(r))).toMatchObject({
          type: "https://kubemend.io/problems/validation-error",
          title: "Bad Request",
          status: 400
        })
      }
      const bad = [auditEvent({ correlation_id: "rr-bad" }), auditEvent({ correlation_id: "rr-bad", event_outcome: "maybe" })]
      const refused = yield* call("/api/v1/audit/events/batch", json(bad))
      expect(refused.status).toBe(400)
      expect((yield* Effect.promise(() => problemOf(refused))).detail).toContain("event_outcome")
      expect((yield* api.audit.queryAuditEvents({ urlParams: { correlation_id: "rr-bad" } })).pagination.total).toBe(0)
      expect((yield* api.audit.queryAuditEvents({ urlParams: { correlation_id: "rr-x" } })).pagination.total).toBe(0)
    }))

  it.effect("a written batch shows on /metrics: one write duration, each event's lag by emitting service, the request", () =>
    Effect.gen(function* () {
      const request = ["datastorage_http_requests_total", `method="POST",route="/api/v1/audit/events/batch",status="201"`] as const
      const count = (name: string, labels: string) => Effect.map(metric(name, labels), (n) => n ?? 0)
      const writesBefore = yield* count("datastorage_write_duration_seconds_count", `table="audit_events"`)
      const requestsBefore = yield* count(...request)
      // Emitted a minute and a half ago: past the 60 s bucket, inside the 300 s one.
      const at = new Date(Date.now() - 90_000).toISOString()
      const batch = Array.from({ length: 5 }, () => auditEvent({ correlation_id: "rr-metrics", event_type: "metricstest.tool.executed", event_timestamp: at }))
      expect((yield* call("/api/v1/audit/events/batch", json(batch))).status).toBe(201)

      expect(yield* count("datastorage_write_duration_seconds_count", `table="audit_events"`)).toBe(writesBefore + 1)
      expect(yield* count("datastorage_audit_lag_seconds_count", `service="metricstest"`)).toBe(5)
      expect(yield* count("datastorage_audit_lag_seconds_bucket", `le="60",service="metricstest"`)).toBe(0)
      expect(yield* count("datastorage_audit_lag_seconds_bucket", `le="300",service="metricstest"`)).toBe(5)
      expect(yield* count(...request)).toBe(requestsBefore + 1)
    }))

  it.effect("lone UTF-16 surrogates are stored as U+FFFD, in text columns and the payload, and the chain still verifies", () =>
    Effect.gen(function* () {
      const api = yield* client
      // JSON.stringify writes them as \udXXX escapes, which any JSON parser reads back as lone surrogates.
      const odd = auditEvent({ correlation_id: "rr-surrogate\ud800", actor_id: "a\udc00b", event_data: { "k\ud800": "x\udc00y", pair: "\u{1F600}" } })
      const r = yield* call("/api/v1/audit/events/batch", json([odd, auditEvent({ correlation_id: "rr-surrogate\ud800" })]))
      expect(r.status).toBe(201)
      const report = yield* api.compliance.verifyAuditChain({ payload: { correlation_id: "rr-surrogate\ufffd" } })
      expect(report).toMatchObject({ is_valid: true, total_events: 2, verified_events: 2 })
      const stored = (yield* api.audit.queryAuditEvents({ urlParams: { correlation_id: "rr-surrogate\ufffd" } })).data
      expect(stored.map((e) => e.actor_id)).toContain("a\ufffdb")
      expect(stored.map((e) => e.event_data)).toContainEqual({ "k\ufffd": "x\ufffdy", pair: "\u{1F600}" })
    }))

  it.effect("a payload nesting up to 1000 levels is stored and verifies; deeper, here or in any body, is a validation-error problem, not a 500", () =>
    Effect.gen(function* () {
      const api = yield* client
      // The payload object is level 1, so `inner` arrays bring it to `levels`.
      const nested = (cid: string, levels: number) => {
        const e = JSON.stringify(auditEvent({ correlation_id: cid, event_data: { inner: "here" } }))
        return `[${e.replace("\"inner\":\"here\"", `"inner":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}`)}]`
      }
      const post = (body: string) => call("/api/v1/audit/events/batch", { method: "POST", headers: { "content-type": "application/json" }, body })
      expect((yield* post(nested("rr-deep-ok", 1000))).status).toBe(201)
      expect(yield* api.compliance.verifyAuditChain({ payload: { correlation_id: "rr-deep-ok" } })).toMatchObject({ is_valid: true, verified_events: 1 })
      const deep = `${"[".repeat(50_000)}${"]".repeat(50_000)}`
      const bodies = [
        ["/api/v1/audit/events/batch", nested("rr-deep-1001", 1001)],
        ["/api/v1/audit/events/batch", nested("rr-deep-50000", 50_000)],
        // Elsewhere the Schema refuses the value, and describing it in the message overflowed the stack.
        ["/api/v1/audit/events/batch", deep],
        ["/api/v1/audit/verify-chain", `{"correlation_id":${deep}}`],
        ["/api/v1/action-types", `{"name":"Deep","description":{"what":${deep},"whenToUse":"x"},"registeredBy":"a"}`]
      ] as const
      for (const [path, body] of bodies) {
        const refused = yield* call(path, { method: "POST", headers: { "content-type": "application/json" }, body })
        expect(refused.status, path).toBe(400)
        expect(yield* Effect.promise(() => problemOf(refused))).toMatchObject({
          type: "https://kubemend.io/problems/validation-error",
          detail: expect.stringContaining("nests deeper than 1000 levels")
        })
      }
    }))

  it.effect("a retried batch and an id repeated within a batch are stored once, in one unbroken chain", () =>
    Effect.gen(function* () {
      const api = yield* client
      const batch = Array.from({ length: 5 }, (_, i) => ({ ...auditEvent({ correlation_id: "rr-retry", event_action: `a${i}` }), event_id: randomUUID() }))
      for (let attempt = 0; attempt < 2; attempt++) {
        const r = yield* call("/api/v1/audit/events/batch", json(batch))
        expect(r.status).toBe(201)
        expect((yield* body<{ event_ids: Array<string> }>(r)).event_ids).toEqual(batch.map((e) => e.event_id))
      }
      // Half new, half already stored, and one id twice: only the new ones are added, once each.
      const repeated = { ...auditEvent({ correlation_id: "rr-retry", event_action: "again" }), event_id: randomUUID() }
      const mixed = yield* call("/api/v1/audit/events/batch", json([...batch.slice(3), repeated, repeated]))
      expect(mixed.status).toBe(201)
      expect((yield* api.audit.queryAuditEvents({ urlParams: { correlation_id: "rr-retry" } })).pagination.total).toBe(6)
      expect(yield* api.compliance.verifyAuditChain({ payload: { correlation_id: "rr-retry" } })).toMatchObject({
        is_valid: true,
        total_events: 6,
        verified_events: 6
      })
    }))

  it.effect("an invalid event deep in a full batch is refused with the contract's own message, nothing stored", () =>
    Effect.gen(function* () {
      const api = yield* client
      const events = Array.from({ length: 1000 }, () => auditEvent({ correlation_id: "rr-deep" }))
      events[777] = auditEvent({ correlation_id: "rr-deep", event_timestamp: "yesterday" })
      const r = yield* call("/api/v1/audit/events/batch", json(events))
      expect(r.status).toBe(400)
      const detail = (yield* Effect.promise(() => problemOf(r))).detail ?? ""
      expect(detail).toContain("[777]")
      expect(detail).toContain("must be an RFC 3339 date-time")
      events[777] = auditEvent({ correlation_id: "rr-deep", event_data: { s: "nul \u0000 inside" } })
      const nul = yield* call("/api/v1/audit/events/batch", json(events))
      expect(nul.status).toBe(400)
      expect((yield* Effect.promise(() => problemOf(nul))).detail).toContain("NUL")
      expect((yield* api.audit.queryAuditEvents({ urlParams: { correlation_id: "rr-deep" } })).pagination.total).toBe(0)
    }))

  it.effect("queries with type, category, actor, time range, JSONB detail and pagination", () =>
    Effect.gen(function* () {
      const api = yield* client
      const t0 = Date.now() - 3 * 3600_000
      const events = [
        auditEvent({ correlation_id: "rr-q", event_timestamp: new Date(t0).toISOString(), actor_id: "alice", event_data: { task_id: "task-1" } }),
        auditEvent({
          correlation_id: "rr-q",
          event_timestamp: new Date(t0 + 3600_000).toISOString(),
          actor_id: "bob",
          event_type: "apifrontend.auth.success",
          event_data: { task_id: "task-2" }
        }),
        auditEvent({
          correlation_id: "rr-q",
          event_category: "gateway",
          event_type: "gateway.signal.received",
          actor_id: "gw",
          event_data: { task_id: "task-2", n: 7 }
        })
      ]
      yield* call("/api/v1/audit/events/batch", json(events))
      const q = (urlParams: Record<string, string | number>) =>
        Effect.map(api.audit.queryAuditEvents({ urlParams: { correlation_id: "rr-q", ...urlParams } as never }), (p) => p)
      expect((yield* q({ event_type: "apifrontend.auth.success" })).data.map((e) => e.actor_id)).toEqual(["bob"])
      expect((yield* q({ event_category: "gateway" })).data.map((e) => e.actor_id)).toEqual(["gw"])
      expect((yield* q({ actor_id: "alice" })).pagination.total).toBe(1)
      expect((yield* q({ since: "90m" })).data.map((e) => e.actor_id)).toEqual(["gw"])
      expect((yield* q({ until: new Date(t0 + 60_000).toISOString() })).data.map((e) => e.actor_id)).toEqual(["alice"])
      expect((yield* q({ detail_key: "task_id", detail_value: "task-2" })).pagination.total).toBe(2)
      expect((yield* q({ detail_key: "n", detail_value: "7" })).data.map((e) => e.actor_id)).toEqual(["gw"])
      const page = yield* q({ limit: 2, offset: 0 })
      expect(page.data.map((e) => e.actor_id)).toEqual(["gw", "bob"])
      expect(page.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true })
      expect((yield* q({ limit: 2, offset: 2 })).pagination.has_more).toBe(false)

      const unpaired = yield* call("/api/v1/audit/events?detail_key=task_id")
      expect(unpaired.status).toBe(400)
      const injected = yield* call("/api/v1/audit/events?detail_key=a'b&detail_value=x")
      expect(injected.status).toBe(400)
      yield* Effect.promise(() => problemOf(injected))
    }))

  it.effect("stores notification records; a repeated notification_id is a 409 problem, NUL a 400", () =>
    Effect.gen(function* () {
      const notification = {
        remediation_id: "rr-n",
        notification_id: "n-1",
        recipient: "ops@example.com",
        channel: "email",
        message_summary: "High CPU",
        status: "sent",
        sent_at: new Date().toISOString(),
        delivery_status: "200 OK",
        escalation_level: 0
      }
      const first = yield* call("/api/v1/audit/notifications", json(notification))
      expect(first.status).toBe(201)
      expect(yield* body<Record<string, unknown>>(first)).toMatchObject({ notification_id: "n-1", channel: "email" })
      const again = yield* call("/api/v1/audit/notifications", json(notification))
      expect(again.status).toBe(409)
      expect((yield* Effect.promise(() => problemOf(again))).type).toBe("https://kubemend.io/problems/conflict")
      const invalid = yield* call("/api/v1/audit/notifications", json({ ...notification, notification_id: "n-2", channel: "fax" }))
      expect(invalid.status).toBe(400)
      // NUL is refused (it was a 500); a lone surrogate is stored, and answered, as U+FFFD.
      const nul = yield* call("/api/v1/audit/notifications", json({ ...notification, notification_id: "n-3", recipient: "a\u0000b" }))
      expect(nul.status).toBe(400)
      expect((yield* Effect.promise(() => problemOf(nul))).detail).toContain("NUL")
      const odd = yield* call("/api/v1/audit/notifications", json({ ...notification, notification_id: "n-4", message_summary: "CPU \ud800" }))
      expect(odd.status).toBe(201)
      expect(yield* body<Record<string, unknown>>(odd)).toMatchObject({ message_summary: "CPU \ufffd" })
    }))

  it.effect("answers every error as RFC 7807: 401 without a valid token, 413 over 5 MiB, 400 bad JSON or NUL text, 404 unknown route", () =>
    Effect.gen(function* () {
      for (const token of [null, "not-a-registered-token"]) {
        const r = yield* call("/api/v1/audit/events", { token })
        expect(r.status).toBe(401)
        expect((yield* Effect.promise(() => problemOf(r))).title).toBe("Authentication Failed")
      }
      const huge = [auditEvent({ event_data: { blob: "x".repeat(5 * 1024 * 1024) } })]
      const tooLarge = yield* call("/api/v1/audit/events/batch", json(huge))
      expect(tooLarge.status).toBe(413)
      expect((yield* Effect.promise(() => problemOf(tooLarge))).type).toBe("https://kubemend.io/problems/payload-too-large")
      const garbled = yield* call("/api/v1/audit/events", { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" })
      expect(garbled.status).toBe(400)
      yield* Effect.promise(() => problemOf(garbled))
      const nul = yield* call("/api/v1/audit/events", json(auditEvent({ event_data: { s: "a\u0000b" } })))
      expect(nul.status).toBe(400)
      // NUL anywhere PostgreSQL would be handed it: an id, a reason, a filter (each was a 500).
      const nulRequests: ReadonlyArray<readonly [string, RequestInit | undefined]> = [
        ["/api/v1/audit/events", json(auditEvent({ correlation_id: "rr-\u0000" }))],
        ["/api/v1/audit/verify-chain", json({ correlation_id: "rr-\u0000" })],
        ["/api/v1/audit/legal-hold", json({ correlation_id: "rr-\u0000", reason: "litigation" })],
        ["/api/v1/action-types", json({ name: "NulText", description: { what: "a\u0000", whenToUse: "b" }, registeredBy: "x" })],
        ["/api/v1/audit/events?correlation_id=rr-%00", undefined],
        ["/api/v1/audit/events?detail_key=k&detail_value=%00", undefined]
      ]
      for (const [path, init] of nulRequests) {
        const refused = yield* call(path, init)
        expect(refused.status, path).toBe(400)
        expect((yield* Effect.promise(() => problemOf(refused))).detail).toContain("NUL")
      }
      // `since` far back: a duration past the year 1 bounds nothing, an instant outside 0001-9999 is refused.
      expect((yield* call("/api/v1/audit/events?since=999999999h")).status).toBe(200)
      const ancient = yield* call("/api/v1/audit/events?since=-100000-01-01T00:00:00Z")
      expect(ancient.status).toBe(400)
      expect((yield* Effect.promise(() => problemOf(ancient))).detail).toContain("outside the years 0001 to 9999")
      const unknown = yield* call("/api/v1/nothing-here")
      expect(unknown.status).toBe(404)
      yield* Effect.promise(() => problemOf(unknown))
    }))

  it.effect("serves the OpenAPI document of the shared contract", () =>
    Effect.gen(function* () {
      const r = yield* call("/api/v1/openapi.json", { token: null })
      expect(r.status).toBe(200)
      const doc = yield* body<{ openapi: string; paths: Record<string, unknown> }>(r)
      expect(doc.openapi).toMatch(/^3\.1/)
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining(["/api/v1/audit/events", "/api/v1/workflows/actions/{action_type}", "/api/v1/action-types/{name}/workflow-count"])
      )
    }))
})
