/**
 * RELIABILITY cases 14, 19 and 21 on the running gateway, plus the endpoint `auth.access_denied` records:
 * a caller without the console grant is refused every tool call; mixed and notification-only batches; hostile tool
 * arguments never reach the cluster, the agent or storage; denials audited with the endpoint they came in on.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { call, connect, initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { GatewayUnderTest, gatewayLayer, Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { startTestGateway } from "./A2aHarness.ts"

const problem = (r: { status: number; headers: Headers; json: any }, status: number, slug: string) => {
  assert.strictEqual(r.status, status, JSON.stringify(r.json))
  assert.strictEqual(r.headers.get("content-type"), "application/problem+json")
  assert.strictEqual(r.json.type, `https://kubemend.io/problems/${slug}`)
}

const toolCall = (id: number, name: string, args: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })

const isReview = (path: string) => /\/(subjectaccessreviews|tokenreviews)$/.test(path)

layer(InfraLive, { excludeTestServices: true })("MCP reliability", (it) => {
  it.layer(gatewayLayer())("shared gateway", (it) => {
    it.scoped("case 14: tool grants without the console grant: every tool call is refused, in or out of a session", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const noConsole = yield* token("no-console")
        const c = yield* connect(gw.url, sre)
        const tools = (yield* Effect.promise(() => c.client.listTools())).tools.map((t) => t.name)
        assert.strictEqual(tools.length, 23)
        // Even carrying a live session id (someone else's), the console gate answers first.
        const session = { ...mcpHeaders, accept: "application/json", "mcp-session-id": c.transport.sessionId!, "mcp-protocol-version": "2025-03-26" }
        yield* gw.audit.clear
        const answers = yield* Effect.forEach(tools, (name, i) =>
          Effect.all([
            raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: toolCall(i, name), token: noConsole }),
            raw(`${gw.url}/mcp`, { method: "POST", headers: session, body: toolCall(i, name), token: noConsole })
          ]), { concurrency: 4 })
        for (const r of answers.flat()) problem(r, 403, "forbidden")
        const audit = yield* gw.audit.entries
        assert.strictEqual(audit.filter((e) => e.type === "auth.access_denied" && e.userId === "no-console-user").length, 46)
        assert.isFalse(audit.some((e) => e.type === "tool.executed"))
      }))

    it.scoped("case 19: mixed batches answer only their requests; notification-only batches answer 202", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const init = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: { ...mcpHeaders, accept: "application/json" }, body: initializeBody, token: sre })
        const headers = {
          ...mcpHeaders,
          accept: "application/json",
          "mcp-session-id": init.headers.get("mcp-session-id")!,
          "mcp-protocol-version": "2025-03-26"
        }
        const post = (body: unknown) => raw(`${gw.url}/mcp`, { method: "POST", headers, token: sre, body: JSON.stringify(body) })
        const notification = (method: string) => ({ jsonrpc: "2.0", method })
        assert.strictEqual((yield* post([notification("notifications/initialized"), notification("notifications/initialized")])).status, 202)
        const mixed = yield* post([
          { jsonrpc: "2.0", id: "a", method: "ping" },
          notification("notifications/initialized"),
          { jsonrpc: "2.0", id: "b", method: "tools/call", params: { name: "svc_get_remediation", arguments: { rr_id: "rr-db-blocked" } } },
          { jsonrpc: "2.0", id: "c", method: "no/such/method" }
        ])
        assert.strictEqual(mixed.status, 200)
        assert.deepStrictEqual(mixed.json.map((r: any) => r.id), ["a", "b", "c"])
        assert.deepStrictEqual(mixed.json[0].result, {})
        assert.strictEqual(JSON.parse(mixed.json[1].result.content[0].text).id, "rr-db-blocked")
        assert.strictEqual(mixed.json[2].error.code, -32601)
      }))
  })

  it.scoped("case 21: arguments that fail their schema never reach the cluster, the agent or storage", () =>
    Effect.gen(function* () {
      const { agent, kube } = yield* Infra
      // With storage down, a call that reached it would answer "unavailable", not "invalid arguments".
      const gw = yield* startGateway({ storage: "down" })
      const c = yield* connect(gw.url, yield* token("sre"))
      const approver = yield* connect(gw.url, yield* token("remediation-approver"))
      const hostile: ReadonlyArray<readonly [string, Record<string, unknown>, RegExp]> = [
        ["svc_get_remediation", { rr_id: "a/b" }, /rr_id/],
        ["svc_get_remediation", { rr_id: ".." }, /rr_id/],
        ["svc_cancel_remediation", { rr_id: "rr-cart-oom\u0000" }, /rr_id/],
        ["svc_list_remediations", { kind: "Pod/../../secrets" }, /kind/],
        ["svc_investigate", { api_version: "apps/v1", namespace: "demo\n", kind: "Deployment", name: "web" }, /namespace/],
        ["svc_message", { rr_id: "rr-checkout-crash", message: "x".repeat(10 * 1024 + 1) }, /10240 characters/],
        ["svc_message", { rr_id: "rr-checkout-crash", message: "hi\u0007there" }, /control characters/],
        ["svc_select_workflow", { rr_id: "rr/../x", workflow_id: "wf-scale" }, /rr_id/],
        ["svc_list_workflows", { kind: "x/y" }, /kind/],
        ["svc_get_audit_trail", { rr_id: "../../etc/passwd" }, /rr_id/],
        ["svc_get_remediation_history", { namespace: "..", kind: "Deployment", name: "api" }, /namespace/],
        ["svc_get_effectiveness", { workflow_id: "wf\u001b[31m" }, /workflow_id/]
      ]
      agent.clear()
      kube.clearRequests()
      const cases = [
        ...hostile.map((h) => [c, ...h] as const),
        [approver, "svc_approve", { rar_name: "../rar-rr-cart-oom", decision: "Approved" }, /rar_name/] as const
      ]
      for (const [client, tool, args, field] of cases) {
        const r = yield* call(client, tool, args)
        assert.isTrue(r.isError, `${tool} ${JSON.stringify(args)}: ${r.text}`)
        assert.match(r.text, field, tool)
        assert.notMatch(r.text, /unavailable/, tool)
      }
      assert.deepStrictEqual(agent.calls(), [])
      assert.deepStrictEqual(kube.requests().filter((q) => !isReview(q.path)).map((q) => `${q.method} ${q.path}`), [])
    }))

  it.scoped("auth.access_denied records the endpoint the request came in on", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({
        scripts: [
          {
            name: "cancel",
            match: "cancel the cache remediation",
            turns: [
              { toolCalls: [{ name: "svc_cancel_remediation", arguments: { rr_id: "rr-cache-pending" } }] },
              { text: "You may not cancel it." }
            ]
          },
          { name: "default", turns: [{ text: "Hello." }] }
        ]
      })
      const a2a = (path: string, bearer: string) =>
        raw(`${gw.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          token: bearer,
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "message/send",
            params: {
              message: {
                kind: "message",
                messageId: randomUUID(),
                role: "user",
                parts: [{ kind: "text", text: "cancel the cache remediation" }]
              }
            }
          })
        })
      const noConsole = yield* token("no-console")
      const observer = yield* token("observability")

      // The console gate, on three endpoints.
      problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: noConsole }), 403, "forbidden")
      problem(yield* a2a("/a2a/invoke", noConsole), 403, "forbidden")
      problem(yield* a2a("/", noConsole), 403, "forbidden")
      // The per-tool check: observability may not cancel, through MCP and through the A2A loop on both paths.
      const c = yield* connect(gw.url, observer)
      assert.match((yield* call(c, "svc_cancel_remediation", { rr_id: "rr-cache-pending" })).text, /permission denied/)
      for (const path of ["/a2a/invoke", "/"]) {
        const r = yield* a2a(path, observer)
        assert.strictEqual(r.json.result?.status?.state, "completed", r.text)
      }

      const denied = (yield* gw.audit.entries).filter((e) => e.type === "auth.access_denied")
      const console = denied.filter((e) => e.data["resource"] === "console")
      assert.deepStrictEqual(console.map((e) => [e.userId, e.data["endpoint"]]), [
        ["no-console-user", "/mcp"],
        ["no-console-user", "/a2a/invoke"],
        ["no-console-user", "/"]
      ])
      const perTool = denied.filter((e) => e.data["tool_name"] === "svc_cancel_remediation")
      assert.deepStrictEqual(perTool.map((e) => [e.userId, e.data["endpoint"]]), [
        ["observability-user", "/mcp"],
        ["observability-user", "/a2a/invoke"],
        ["observability-user", "/"]
      ])
    }))
})
