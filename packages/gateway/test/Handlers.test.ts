/**
 * Time-based behaviour at the handler level under TestClock (the 15-minute `svc_watch` cap, the
 * `svc_await_session` timeout, the pipeline deadline, rate-limit refill, breaker reset), the output cap, alert
 * ordering, and config from the environment.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Fiber, Layer, Option, Redacted, Schema, Stream, TestClock } from "effect"
import { providerFor } from "@kubemend/core/Config"
import { K8s, type K8sService, type KubeObject } from "@kubemend/core/K8s"
import { Metrics } from "@kubemend/core/Metrics"
import { Sar } from "@kubemend/core/Sar"
import { makeBreaker } from "../src/Breakers.ts"
import { Buckets, perMinute } from "../src/Limits/Buckets.ts"
import { RateLimits } from "../src/Limits/RateLimits.ts"
import { initializeParams } from "../src/Mcp/SessionRecord.ts"
import { SharedState } from "../src/SharedState.ts"
import { RecordedAudit } from "../src/GatewayAudit.ts"
import { GatewayConfig, gatewayConfig } from "../src/GatewayConfig.ts"
import { GatewayMetrics } from "../src/GatewayMetrics.ts"
import { AgentCallFailed } from "../src/AgentSessionsClient.ts"
import { type CallContext, ToolCalls } from "../src/Mcp/Call.ts"
import { renderResult } from "../src/Mcp/Output.ts"
import { defineTool, type ToolContext, type ToolDef } from "../src/Mcp/Tool.ts"
import { prioritize, sortAlerts } from "../src/Tools/Alerts.ts"
import { remediationTools } from "../src/Tools/Remediations.ts"
import { watchTools } from "../src/Tools/Watch.ts"

/** Only what a test expects may be called; anything else is a test bug. */
const k8sLayer = (impl: Partial<K8sService>) =>
  Layer.succeed(
    K8s,
    new Proxy({ namespace: "kubemend-system", apiGroup: "kubemend.io", ...impl }, {
      get: (target, prop) => (prop in target ? target[prop as keyof typeof target] : () => Effect.die(`unexpected K8s.${String(prop)}`))
    }) as unknown as K8sService
  )

const rr = (name: string, phase: string): KubeObject => ({
  metadata: { name, namespace: "kubemend-system" },
  spec: { signalName: "s", signalFingerprint: "f", targetResource: { kind: "Deployment", name: "web", namespace: "demo" } },
  status: { overallPhase: phase }
})

const ctx: ToolContext & CallContext = {
  caller: {
    principal: { user: "sre-user", groups: ["kubemend-sre"], issuer: "test", expiresAt: new Date(0), subject: "sre-user", tokenKind: "jwt" },
    clientIp: "127.0.0.1",
    token: Redacted.make("t")
  },
  tool: "svc_test",
  sessionId: "s-1",
  notify: () => Effect.void,
  agent: { call: () => Effect.die("no agent here"), follow: () => Effect.void }
}

const toolNamed = (tools: ReadonlyArray<ToolDef>, name: string) => tools.find((t) => t.name === name)!

const pipeline = ToolCalls.Default.pipe(
  Layer.provideMerge(RateLimits.Default),
  Layer.provideMerge(SharedState.layerMemory),
  Layer.provideMerge(GatewayMetrics.Default),
  Layer.provideMerge(Layer.mergeAll(Sar.layerAllowAll, Metrics.Default, RecordedAudit.layer, GatewayConfig.layer()))
)

describe("blocking tools under TestClock", () => {
  it.effect("svc_watch returns with status timeout at the 15-minute cap", () =>
    Effect.gen(function* () {
      const watch = toolNamed(yield* watchTools, "watch")
      const fiber = yield* Effect.fork(watch.run({ rr_id: "rr-1" }, ctx))
      yield* TestClock.adjust(Duration.minutes(14))
      assert.isNull(yield* Fiber.poll(fiber).pipe(Effect.map(Option.getOrNull)))
      yield* TestClock.adjust(Duration.minutes(1))
      const result = (yield* Fiber.join(fiber)) as { status: string; events: ReadonlyArray<{ phase: string }> }
      assert.strictEqual(result.status, "timeout")
      assert.deepStrictEqual(result.events.map((e) => e.phase), ["Running"])
      // The pipeline deadline of the tool sits past its own cap.
      assert.isTrue(Duration.greaterThan(watch.timeout!, Duration.minutes(15)))
    }).pipe(Effect.provide(Layer.mergeAll(
      GatewayConfig.layer(),
      k8sLayer({ getCr: () => Effect.succeed(rr("rr-1", "Running")), watchCr: () => Stream.never })
    ))))

  it.effect("svc_await_session times out after 3 minutes by default", () =>
    Effect.gen(function* () {
      const wait = toolNamed(yield* watchTools, "await_session")
      const fiber = yield* Effect.fork(Effect.either(wait.run({ rr_name: "rr-1" }, ctx)))
      yield* TestClock.adjust(Duration.minutes(3))
      const result = yield* Fiber.join(fiber)
      assert.isTrue(result._tag === "Left" && result.left.kind === "timeout")
      assert.match(result._tag === "Left" ? result.left.message : "", /no investigation session for rr-1 after 3m/)
    }).pipe(Effect.provide(Layer.mergeAll(
      GatewayConfig.layer(),
      k8sLayer({ getCr: () => Effect.succeed(rr("rr-1", "Analyzing")), watchCr: () => Stream.never })
    ))))

  it.effect("the pipeline cuts a tool at its deadline: timeout result, audited", () =>
    Effect.gen(function* () {
      const calls = yield* ToolCalls
      const hang = defineTool({ name: "test", description: "", input: Schema.Struct({}), run: () => Effect.never })
      const fiber = yield* Effect.fork(calls.call(hang, {}, ctx))
      yield* TestClock.adjust(Duration.seconds(30))
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual([result.isError, result.content[0]!.text], [true, "svc_test timed out after 30s"])
      const audit = yield* (yield* RecordedAudit).entries
      assert.strictEqual(audit.at(-1)?.data["tool_outcome"], "timeout")
    }).pipe(Effect.provide(pipeline)))
})

describe("the agent client's failures at the MCP boundary", () => {
  it.effect("each reason becomes a tool error with its message and audit code", () =>
    Effect.gen(function* () {
      const calls = yield* ToolCalls
      const investigate = defineTool({
        name: "test",
        description: "",
        input: Schema.Struct({}),
        run: (_, c) => c.agent.call("investigate", {}, { user: "sre-user", groups: [], token: Redacted.make("t") })
      })
      const reasons = ["unavailable", "refused", "timeout", "rejected"] as const
      const results = yield* Effect.forEach(reasons, (reason) =>
        calls.call(investigate, {}, {
          ...ctx,
          agent: { ...ctx.agent, call: () => Effect.fail(new AgentCallFailed({ reason, message: `agent ${reason}` })) }
        }))
      assert.deepStrictEqual(results.map((r) => [r.isError, r.content[0]!.text]), reasons.map((r) => [true, `agent ${r}`]))
      const audit = (yield* (yield* RecordedAudit).entries).filter((e) => e.type === "tool.executed")
      assert.deepStrictEqual(
        audit.map((e) => [e.data["tool_outcome"], e.data["error_code"]]),
        [["failure", "agent_unavailable"], ["failure", "permission_denied"], ["timeout", "timeout"], ["failure", "agent_error"]]
      )
    }).pipe(Effect.provide(pipeline)))
})

describe("limits and breakers under TestClock", () => {
  it.effect("tool calls per minute refill over time", (): Effect.Effect<void, unknown> =>
    Effect.gen(function* () {
      const limits = yield* RateLimits
      for (let i = 0; i < 3; i++) yield* limits.toolCall("u")
      const denied = yield* Effect.flip(limits.toolCall("u"))
      assert.deepStrictEqual([denied.scope, denied.retryAfterSeconds], ["tool", 20])
      yield* limits.toolCall("someone-else")
      yield* TestClock.adjust(Duration.seconds(20))
      yield* limits.toolCall("u")
    }).pipe(Effect.provide(RateLimits.Default.pipe(
      Layer.provideMerge(SharedState.layerMemory),
      Layer.provideMerge(GatewayMetrics.Default),
      Layer.provideMerge(Layer.mergeAll(Sar.layerAllowAll, Metrics.Default, GatewayConfig.layer({ rateLimit: { toolCallsPerMinute: 3 } })))
    ))))

  it("an MCP session record keeps the client's initialize for re-creation, but not oversized capabilities", () => {
    const clientInfo = { name: "ide", version: "1" }
    assert.deepStrictEqual(initializeParams({ capabilities: { roots: {} }, clientInfo }, "2025-03-26"), {
      protocolVersion: "2025-03-26",
      capabilities: { roots: {} },
      clientInfo
    })
    assert.deepStrictEqual(initializeParams({ capabilities: { x: "y".repeat(20_000) }, clientInfo }, "2025-03-26").capabilities, {})
  })

  it("token buckets stay bounded in keys", () => {
    const buckets = new Buckets(perMinute(60), 100)
    for (let i = 0; i < 1000; i++) buckets.take(`ip-${i}`, i)
    assert.isAtMost(buckets.size, 100)
  })

  it.effect("a breaker opens after the threshold, half-opens after the reset timeout, closes on success", () =>
    Effect.gen(function* () {
      const breaker = yield* makeBreaker("dep", { failureThreshold: 2, resetTimeout: Duration.seconds(30) })
      const fail = Effect.fail("down" as const)
      for (let i = 0; i < 2; i++) yield* Effect.flip(breaker.run(fail, () => true))
      assert.strictEqual(yield* breaker.state, "open")
      const refused = yield* Effect.flip(breaker.run(Effect.succeed(1), () => true))
      assert.strictEqual(refused._tag === "DependencyUnavailable" ? refused.dependency : "", "dep")
      // A 404-like answer is not an outage.
      yield* TestClock.adjust(Duration.seconds(30))
      assert.strictEqual(yield* breaker.run(Effect.succeed(1), () => true), 1)
      assert.strictEqual(yield* breaker.state, "closed")
      yield* Effect.flip(breaker.run(fail, () => false))
      yield* Effect.flip(breaker.run(fail, () => false))
      assert.strictEqual(yield* breaker.state, "closed")
      const trips = (yield* (yield* RecordedAudit).entries).filter((e) => e.type === "circuitbreaker.trip")
      assert.strictEqual(trips.length, 1)
    }).pipe(Effect.provide(GatewayMetrics.Default.pipe(Layer.provideMerge(Layer.mergeAll(Sar.layerAllowAll, Metrics.Default, RecordedAudit.layer))))))
})

describe("output cap", () => {
  it("list results drop their tail and say truncated; others become a summary", () => {
    const items = Array.from({ length: 400 }, (_, i) => ({ id: `rr-${i}`, note: "x".repeat(60) }))
    const text = renderResult({ remediations: items, count: items.length }, 16_384, "remediations")
    const parsed = JSON.parse(text)
    assert.isAtMost(Buffer.byteLength(text), 16_384)
    assert.isTrue(parsed.truncated)
    assert.strictEqual(parsed.count, parsed.remediations.length)
    assert.isAbove(parsed.count, 100)
    assert.strictEqual(parsed.remediations[0].id, "rr-0")
    // One more element would not have fit.
    assert.isAbove(Buffer.byteLength(JSON.stringify({ ...parsed, remediations: items.slice(0, parsed.count + 1) })), 16_384)
    const blob = JSON.parse(renderResult({ rr_id: "rr-1", text: "y".repeat(20_000) }, 16_384))
    assert.deepStrictEqual([blob.truncated, blob.rr_id, blob.summary.length], [true, "rr-1", 128])
  })

  it.effect("svc_list_remediations over many RRs is trimmed through the pipeline", () =>
    Effect.gen(function* () {
      const list = toolNamed(yield* remediationTools, "list_remediations")
      const result = yield* (yield* ToolCalls).call(list, {}, ctx)
      const parsed = JSON.parse(result.content[0]!.text)
      assert.isTrue(parsed.truncated)
      assert.isBelow(parsed.count, 1000)
      assert.strictEqual(parsed.count, parsed.remediations.length)
    }).pipe(Effect.provide(Layer.mergeAll(
      pipeline,
      k8sLayer({
        listCr: () => Effect.succeed({ items: Array.from({ length: 1000 }, (_, i) => rr(`rr-${String(i).padStart(4, "0")}`, "Running")), resourceVersion: "1" })
      })
    ))))
})

describe("alerts", () => {
  const alert = (name: string, severity: string, activeAt: string) => ({
    labels: { alertname: name, severity },
    annotations: {},
    state: "firing",
    active_at: activeAt
  })
  it("sorts by severity then longest active; prioritizes the first with its ties", () => {
    const sorted = sortAlerts([
      alert("w", "warning", "2025-01-01T00:00:00Z"),
      alert("c-new", "critical", "2025-01-02T00:00:00Z"),
      alert("u", "page", "2024-01-01T00:00:00Z"),
      alert("c-old", "critical", "2025-01-01T00:00:00Z"),
      alert("h", "HIGH", "2025-01-01T00:00:00Z")
    ])
    assert.deepStrictEqual(sorted.map((a) => a.labels.alertname), ["c-old", "c-new", "h", "w", "u"])
    assert.deepStrictEqual(prioritize(sorted), { selected_index: 0, tied_indices: [1], also_active_start: 2 })
    assert.deepStrictEqual(prioritize([]), { selected_index: -1, tied_indices: [], also_active_start: -1 })
  })
})

describe("config", () => {
  it.effect("rate limits and durations from GATEWAY_* environment variables over the file", (): Effect.Effect<void, unknown> =>
    Effect.gen(function* () {
      const settings = yield* gatewayConfig
      assert.deepStrictEqual(settings.rateLimit, {
        ipRequestsPerSec: 50,
        userRequestsPerSec: 200,
        toolCallsPerMinute: 6000,
        maxConcurrentSessions: 7,
        maxSessionsPerUser: 10
      })
      assert.strictEqual(Duration.toSeconds(settings.toolTimeout), 45)
      assert.strictEqual(Duration.toMinutes(settings.toolTimeouts.get("svc_list_alerts")!), 2)
      assert.strictEqual(settings.interactiveEnabled, true)
      assert.strictEqual(settings.agentToolPrefix, "svc")
    }).pipe(Effect.withConfigProvider(providerFor(
      "gateway",
      {
        rateLimit: { userRequestsPerSec: 5, maxConcurrentSessions: 7 },
        tools: { timeout: "45s", timeouts: { svc_list_alerts: "2m" } },
        interactive: { enabled: true }
      },
      ConfigProvider.fromMap(
        new Map([
          ["GATEWAY_RATE_LIMIT_USER_REQUESTS_PER_SEC", "200"],
          ["GATEWAY_RATE_LIMIT_TOOL_CALLS_PER_MINUTE", "6000"]
        ]),
        { pathDelim: "_" }
      )
    ))))

  it.effect("no valkey block: state in memory; a valkey block (file + GATEWAY_VALKEY_* env) names the shared server", (): Effect.Effect<void, unknown> =>
    Effect.gen(function* () {
      const none = yield* gatewayConfig.pipe(Effect.withConfigProvider(providerFor("gateway", {}, ConfigProvider.fromMap(new Map()))))
      assert.isTrue(Option.isNone(none.valkey))
      const some = yield* gatewayConfig.pipe(Effect.withConfigProvider(providerFor(
        "gateway",
        { valkey: { host: "valkey.kubemend-system.svc", tls: { enabled: true, caFile: "/etc/ca.crt" } } },
        ConfigProvider.fromMap(new Map([["GATEWAY_VALKEY_PASSWORD", "s3cret"], ["GATEWAY_VALKEY_TIMEOUT", "250ms"]]), { pathDelim: "_" })
      )))
      const v = Option.getOrThrow(some.valkey)
      assert.deepStrictEqual([v.host, v.port, v.db, v.keyPrefix, Duration.toMillis(v.timeout)], [
        "valkey.kubemend-system.svc",
        6379,
        0,
        "kubemend:gateway",
        250
      ])
      assert.strictEqual(Option.map(v.password, Redacted.value).pipe(Option.getOrUndefined), "s3cret")
      assert.deepStrictEqual(Option.map(v.tls, (t) => Option.getOrUndefined(t.caFile)), Option.some("/etc/ca.crt"))
    }))
})
