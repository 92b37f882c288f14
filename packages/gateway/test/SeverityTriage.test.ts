/**
 * Severity triage behind `svc_list_alerts`, through the official MCP SDK client against a running gateway whose
 * triage model is the scripted LLM: alerts without one of the four levels are classified (rule tier, model,
 * `unknown` below `llmConfidence`), the classification drives the filter, the order and `prioritized`, answers are
 * cached and audited, failures are audited and not cached, and the A2A agent's `list_alerts` sees the same
 * severities without asking the model again.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Script } from "@kubemend/devkit/ScriptedLlm"
import { Infra, InfraLive, startTestGateway, type TestGateway, token } from "./A2aHarness.ts"
import { call, connect } from "./support/Client.ts"

const namespace = "triage-mcp"

const scripts: ReadonlyArray<Script> = [
  { name: "disk", match: "DiskFilling", turns: [{ json: { severity: "critical", confidence: 0.95, reason: "data loss ahead" } }] },
  { name: "queue", match: "QueueBacklog", turns: [{ json: { severity: "warning", confidence: 0.4, reason: "unsure" } }] },
  { name: "mystery", match: "Mystery", turns: [{ json: { severity: "high", confidence: 0.9, reason: "user facing" } }] },
  {
    name: "agent",
    match: "which alerts matter",
    turns: [
      { toolCalls: [{ name: "list_alerts", arguments: { namespace } }] },
      { text: "The disk is filling up." }
    ]
  }
]

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString()

const alerts = [
  {
    labels: { alertname: "QueueBacklog", namespace, api_token: "s3cr3t-token" },
    annotations: { summary: "queue grows", runbook: "https://runbooks.internal/queue" },
    state: "firing" as const,
    activeAt: minutesAgo(30)
  },
  {
    labels: { alertname: "DiskFilling", namespace, severity: "sev-x" },
    annotations: { summary: "disk 97%" },
    state: "firing" as const,
    activeAt: minutesAgo(5)
  },
  { labels: { alertname: "OldStyle", namespace, severity: "error" }, state: "firing" as const, activeAt: minutesAgo(20) },
  { labels: { alertname: "Labeled", namespace, severity: "info" }, state: "pending" as const, activeAt: minutesAgo(1) }
]

/** Chat requests the triage model received, by the alert they were about. */
const triageAsked = (gw: TestGateway) =>
  gw.llm.requests
    .map((r) => String(r.body?.messages?.[0]?.content ?? ""))
    .filter((text) => text.startsWith("Classify the severity"))

const triageAudit = (gw: TestGateway) =>
  Effect.map(
    gw.audit.entries,
    (entries) => entries.filter((e) => e.type.startsWith("severity_triage.")).map((e) => [e.type, e.data.alert_name, e.data.severity, e.userId])
  )

const severities = (json: any) => json.alerts.map((a: any) => [a.labels.alertname, a.severity, a.severity_source])

layer(InfraLive, { excludeTestServices: true })("svc_list_alerts severity triage", (it) => {
  it.scoped("alerts outside the four levels are classified, cached and audited; the agent sees the same severities", () =>
    Effect.gen(function* () {
      const infra = yield* Infra
      yield* infra.alerts.set(alerts)
      const gw = yield* startTestGateway({ scripts })
      const sre = yield* token("sre")
      const mcp = yield* connect(gw.url, sre)

      const all = yield* call(mcp, "svc_list_alerts", { namespace })
      assert.isFalse(all.isError, all.text)
      assert.deepStrictEqual(severities(all.json), [
        ["DiskFilling", "critical", "model"],
        ["OldStyle", "high", "rule"],
        ["Labeled", "info", undefined],
        ["QueueBacklog", "unknown", "none"]
      ])
      assert.deepStrictEqual(all.json.prioritized, { selected_index: 0, tied_indices: [], also_active_start: 1 })
      // Only the model's answers are audited; the one below llmConfidence leaves `unknown`.
      assert.deepStrictEqual((yield* triageAudit(gw)).sort(), [
        ["severity_triage.completed", "DiskFilling", "critical", "sre-user"],
        ["severity_triage.completed", "QueueBacklog", "unknown", "sre-user"]
      ])
      // The model sees the alert as the caller would: credential-like labels dropped, URLs redacted.
      const asked = triageAsked(gw)
      assert.strictEqual(asked.length, 2)
      for (const text of asked) {
        assert.notInclude(text, "s3cr3t-token")
        assert.notInclude(text, "runbooks.internal")
      }

      const critical = yield* call(mcp, "svc_list_alerts", { namespace, severity: "critical" })
      assert.deepStrictEqual(severities(critical.json), [["DiskFilling", "critical", "model"]])
      const high = yield* call(mcp, "svc_list_alerts", { namespace, severity: "high" })
      assert.deepStrictEqual(severities(high.json), [["OldStyle", "high", "rule"]])
      // Cached: the filtered listings asked the model nothing and audited nothing new.
      assert.strictEqual(triageAsked(gw).length, 2)
      assert.strictEqual((yield* triageAudit(gw)).length, 2)

      const answer = yield* Effect.promise(async () => {
        const res = await fetch(`${gw.url}/a2a/invoke`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${sre}` },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "message/send",
            params: { message: { kind: "message", messageId: "m-triage", role: "user", parts: [{ kind: "text", text: "which alerts matter?" }] } }
          })
        })
        return (await res.json()) as any
      })
      assert.strictEqual(answer.result.status.state, "completed")
      const toolMessage = gw.llm.requests
        .flatMap((r) => (r.body?.messages ?? []) as Array<any>)
        .find((m) => m.role === "tool" && String(m.content).includes("DiskFilling"))
      const summaries = JSON.parse(String(toolMessage?.content)).alerts as Array<any>
      assert.deepStrictEqual(summaries.map((a) => [a.alert_name, a.severity, a.severity_source]), [
        ["DiskFilling", "critical", "model"],
        ["OldStyle", "high", "rule"],
        ["Labeled", "info", undefined],
        ["QueueBacklog", "unknown", "none"]
      ])
      assert.strictEqual(triageAsked(gw).length, 2)
    }))

  it.scoped("a failed model call leaves unknown, is audited as severity_triage.failed and is asked again next time", () =>
    Effect.gen(function* () {
      const infra = yield* Infra
      yield* infra.alerts.set([
        { labels: { alertname: "Mystery", namespace, severity: "sev-y" }, state: "firing", activeAt: minutesAgo(2) },
        { labels: { alertname: "Plain", namespace, severity: "warning" }, state: "firing", activeAt: minutesAgo(2) }
      ])
      const gw = yield* startTestGateway({ scripts })
      const mcp = yield* connect(gw.url, yield* token("sre"))
      gw.llm.failNext(1, { status: 500 })
      const first = yield* call(mcp, "svc_list_alerts", { namespace })
      assert.deepStrictEqual(severities(first.json), [["Plain", "warning", undefined], ["Mystery", "unknown", "none"]])
      assert.deepStrictEqual((yield* triageAudit(gw)).map((e) => e.slice(0, 2)), [["severity_triage.failed", "Mystery"]])
      const second = yield* call(mcp, "svc_list_alerts", { namespace })
      assert.deepStrictEqual(severities(second.json), [["Mystery", "high", "model"], ["Plain", "warning", undefined]])
      assert.deepStrictEqual((yield* triageAudit(gw)).map((e) => e.slice(0, 3)), [
        ["severity_triage.failed", "Mystery", undefined],
        ["severity_triage.completed", "Mystery", "high"]
      ])
    }))
})
