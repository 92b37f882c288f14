import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Redacted } from "effect"
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Storage } from "../src/Storage.ts"
import { parseWorkflowContent, StorageApi, uuidV5 } from "../src/StorageApi.ts"

interface Seen {
  readonly method: string
  readonly url: string
  readonly authorization: string | undefined
  readonly body: unknown
}

/** A raw HTTP server answering from `respond`, recording what it received. */
const fakeStorage = (respond: (seen: Seen, n: number) => { status: number; body?: unknown } | "hang") =>
  Effect.acquireRelease(
    Effect.async<{ url: string; seen: Array<Seen>; server: Http.Server }>((resume) => {
      const seen: Array<Seen> = []
      const server = Http.createServer((req, res) => {
        let text = ""
        req.on("data", (c) => (text += c))
        req.on("end", () => {
          const s = { method: req.method!, url: req.url!, authorization: req.headers.authorization, body: text === "" ? undefined : JSON.parse(text) }
          seen.push(s)
          const answer = respond(s, seen.length)
          if (answer === "hang") return
          const problem = answer.status >= 400
          res.writeHead(answer.status, { "content-type": problem ? "application/problem+json" : "application/json" })
          res.end(JSON.stringify(answer.body ?? {}))
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server })))
    }),
    ({ server }) => Effect.sync(() => server.closeAllConnections()).pipe(Effect.zipRight(Effect.async<void>((r) => void server.close(() => r(Effect.void)))))
  )

const problem = (status: number, slug: string) => ({ type: `https://kubemend.io/problems/${slug}`, title: slug, status, detail: `${slug} happened` })

const event = {
  version: "1.0",
  event_type: "apifrontend.tool.executed",
  event_timestamp: "2026-01-01T00:00:00.000Z",
  event_category: "apifrontend" as const,
  event_action: "executed",
  event_outcome: "success" as const,
  correlation_id: "rr-1",
  event_data: {}
}

const workflowYaml = (version: string, what = "Scales up") => `
apiVersion: kubemend.io/v1alpha1
kind: RemediationWorkflow
metadata: { name: scale-up }
spec:
  version: "${version}"
  actionType: ScaleReplicas
  description: { what: ${what}, whenToUse: CPU saturation }
  labels: { severity: [critical], component: ["*"], environment: [production], priority: P1 }
`

describe("Storage client (live, over HTTP)", () => {
  it.scoped("sends the ServiceAccount token, assigns event ids, and reports a dead-lettered batch as queued", () =>
    Effect.gen(function* () {
      const fake = yield* fakeStorage((s) =>
        s.url === "/api/v1/audit/events/batch"
          ? { status: 202, body: { status: "accepted", message: "queued", event_ids: (s.body as Array<{ event_id: string }>).map((e) => e.event_id) } }
          : { status: 404, body: problem(404, "not-found") }
      )
      const dir = yield* Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "sa-")))
      yield* Effect.promise(() => Fs.writeFile(Path.join(dir, "token"), "sa-token\n"))
      const storage = yield* Effect.provide(Storage, Storage.layer({ baseUrl: fake.url, tokenFile: Path.join(dir, "token") }))
      const result = yield* storage.writeEvents([event])
      expect(result.queued).toBe(true)
      expect(result.eventIds[0]).toMatch(/^[0-9a-f-]{36}$/)
      expect(fake.seen[0]).toMatchObject({ method: "POST", authorization: "Bearer sa-token" })
      expect((fake.seen[0]!.body as Array<{ event_id: string }>)[0]!.event_id).toBe(result.eventIds[0])
      const missing = yield* Effect.flip(storage.effectiveness("rr-x"))
      expect(missing._tag).toBe("NotFound")
    }))

  it.live("retries an unavailable storage (503) and succeeds; gives up after the retries with DependencyUnavailable", () =>
    Effect.scoped(Effect.gen(function* () {
      const report = { correlation_id: "rr-1", is_valid: true, total_events: 1, verified_events: 1, tampered_events: [], verification_time: "t", message: "ok" }
      const fake = yield* fakeStorage((_, n) => (n <= 2 ? { status: 503, body: problem(503, "service-unavailable") } : { status: 200, body: report }))
      const storage = yield* Effect.provide(Storage, Storage.layer({ baseUrl: fake.url, token: Redacted.make("t"), retries: 3 }))
      expect((yield* storage.verifyChain("rr-1")).is_valid).toBe(true)
      expect(fake.seen).toHaveLength(3)
      const never = yield* fakeStorage(() => ({ status: 503, body: problem(503, "service-unavailable") }))
      const impatient = yield* Effect.provide(Storage, Storage.layer({ baseUrl: never.url, token: Redacted.make("t"), retries: 1 }))
      expect((yield* Effect.flip(impatient.verifyChain("rr-1")))._tag).toBe("DependencyUnavailable")
      expect(never.seen).toHaveLength(2)
    })))

  it.live("puts a deadline on every call", () =>
    Effect.scoped(Effect.gen(function* () {
      const fake = yield* fakeStorage(() => "hang")
      const storage = yield* Effect.provide(Storage, Storage.layer({ baseUrl: fake.url, token: Redacted.make("t"), timeout: "200 millis", retries: 0 }))
      const error = yield* Effect.flip(storage.listWorkflows({}))
      expect([error._tag, error._tag === "DependencyUnavailable" ? error.detail : ""]).toEqual(["DependencyUnavailable", "listWorkflows timed out"])
    })))

  it.scoped("maps problems to domain errors: 400 validation, 409 content integrity, 401", () =>
    Effect.gen(function* () {
      const fake = yield* fakeStorage((s) =>
        s.url === "/api/v1/workflows"
          ? { status: 409, body: problem(409, "content-integrity-violation") }
          : s.url.startsWith("/api/v1/audit/events/batch")
          ? { status: 400, body: problem(400, "validation-error") }
          : { status: 401, body: problem(401, "unauthorized") }
      )
      const storage = yield* Effect.provide(Storage, Storage.layer({ baseUrl: fake.url, token: Redacted.make("t") }))
      expect((yield* Effect.flip(storage.registerWorkflow({ content: "x" })))._tag).toBe("ContentIntegrityViolation")
      expect((yield* Effect.flip(storage.writeEvents([event])))._tag).toBe("ValidationError")
      expect((yield* Effect.flip(storage.reconstruct("rr")))._tag).toBe("Unauthenticated")
    }))
})

describe("Storage.layerMemory", () => {
  it.effect("writes 1–1000 events idempotently by id, chained per correlation id, and queries them", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      expect((yield* Effect.flip(storage.writeEvents([])))._tag).toBe("ValidationError")
      const first = yield* storage.writeEvents([event, { ...event, event_data: { n: 2 } }])
      yield* storage.writeEvents([{ ...event, event_id: first.eventIds[0]! }])
      const page = yield* storage.queryEvents({ correlation_id: "rr-1" })
      expect(page.pagination.total).toBe(2)
      const [newest, oldest] = page.data
      expect(oldest!.previous_event_hash === "" || newest!.previous_event_hash === "").toBe(true)
      expect((yield* storage.verifyChain("rr-1")).is_valid).toBe(true)
    }).pipe(Effect.provide(Storage.layerMemory())))

  it.effect("registers workflows like the service: 201, same content 200, changed content 409; discovery by labels", () =>
    Effect.gen(function* () {
      const storage = yield* Storage
      expect((yield* Effect.flip(storage.registerWorkflow({ content: workflowYaml("1.0.0") })))._tag).toBe("ValidationError")
      yield* storage.registerActionType({ name: "ScaleReplicas", description: { what: "Scale", whenToUse: "Load" }, registeredBy: "t" })
      const created = yield* storage.registerWorkflow({ content: workflowYaml("1.0.0") })
      expect(created.created).toBe(true)
      expect(created.workflow.workflowId).toBe(uuidV5(created.workflow.contentHash))
      expect((yield* storage.registerWorkflow({ content: workflowYaml("1.0.0") })).created).toBe(false)
      expect((yield* Effect.flip(storage.registerWorkflow({ content: workflowYaml("1.0.0", "Scales more") })))._tag).toBe("ContentIntegrityViolation")
      const actions = yield* storage.listActions({ severity: "critical", environment: "production" })
      expect(actions.actionTypes).toEqual([expect.objectContaining({ actionType: "ScaleReplicas", workflowCount: 1 })])
      expect((yield* storage.listActions({ environment: "staging" })).actionTypes).toEqual([])
      expect((yield* Effect.flip(storage.getWorkflow(created.workflow.workflowId, { priority: "P3" })))._tag).toBe("NotFound")
    }).pipe(Effect.provide(Storage.layerMemory())))
})

describe("the storage contract", () => {
  it("UUIDv5 follows RFC 9562 (Python's uuid5(NAMESPACE_DNS, 'www.example.com'))", () => {
    expect(uuidV5("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe("2ed6657d-e927-568b-95e1-2665a8aea6a2")
  })

  it("a workflow id depends on the spec only, not on comments or key order", () => {
    const a = parseWorkflowContent(workflowYaml("1.0.0"))
    const b = parseWorkflowContent(
      `# comment\n${workflowYaml("1.0.0").replace("metadata: { name: scale-up }", "metadata:\n  labels: {a: b}\n  name: scale-up")}`
    )
    expect(Either.isRight(a) && Either.isRight(b) && a.right.workflowId === b.right.workflowId).toBe(true)
    expect(Either.isLeft(parseWorkflowContent("kind: Pod"))).toBe(true)
  })

  it("describes all storage endpoints in one OpenAPI document", () => {
    const doc = OpenApi.fromApi(StorageApi)
    const operations = Object.values(doc.paths).flatMap((p) => Object.keys(p).filter((k) => ["get", "post", "patch", "delete"].includes(k)))
    expect(operations).toHaveLength(28)
  })
})
