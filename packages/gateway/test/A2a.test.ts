/**
 * The A2A agent through the official `@a2a-js/sdk` client in both modes (A2A 1.0 by default, A2A 0.3 with
 * `legacyCompat`) against a running gateway whose loop plays scripted LLM transcripts: send, stream with
 * keepalives, tasks/get, cancel, a tool denied by SAR, `svc_approve` absent, an investigation that blocks until
 * its RCA, multi-turn context, failures as failed tasks, and the JSON-RPC errors.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TaskState } from "@a2a-js/sdk"
import type { Script } from "@kubemend/devkit/ScriptedLlm"
import { demoAlerts } from "@kubemend/devkit/Alerts"
import { clientFor, request, send, statusUpdates, stream, textOf, toolReply } from "./A2aSdk.ts"
import { Infra, InfraLive, startTestGateway, type TestGateway, token } from "./A2aHarness.ts"

const scripts: ReadonlyArray<Script> = [
  {
    name: "list",
    match: "list remediations",
    turns: [
      { text: "Let me look.", toolCalls: [{ name: "svc_list_remediations", arguments: {} }] },
      { text: "Six remediations are in flight." }
    ]
  },
  {
    name: "approve",
    match: "approve it",
    turns: [
      { toolCalls: [{ name: "svc_approve", arguments: { rar_name: "rar-rr-cart-oom", decision: "Approved" } }] },
      { text: "Approving is a human decision." }
    ]
  },
  {
    name: "cancel",
    match: "cancel the cache remediation",
    turns: [
      { toolCalls: [{ name: "svc_cancel_remediation", arguments: { rr_id: "rr-cache-pending" } }] },
      { text: "You may not cancel it." }
    ]
  },
  {
    name: "investigate",
    match: "why is checkout crashing",
    turns: [
      { toolCalls: [{ name: "svc_investigate", arguments: { rr_id: "rr-checkout-crash" } }] },
      { text: "The memory limit is too low." }
    ]
  },
  {
    name: "watch",
    match: "watch checkout",
    turns: [
      { toolCalls: [{ name: "svc_watch", arguments: { rr_id: "rr-checkout-crash" } }] },
      { text: "It finished." }
    ]
  },
  { name: "remember", match: "remember the word", turns: [{ text: "Noted." }, { text: "You asked me to remember a word." }] },
  {
    name: "alerts",
    match: "triage the alerts",
    turns: [
      { toolCalls: [{ name: "list_alerts", arguments: { namespace: "triage" } }] },
      { text: "Two alerts need attention." }
    ]
  },
  { name: "triage-disk", match: "DiskFilling", turns: [{ json: { severity: "critical", confidence: 0.95, reason: "data loss" } }] },
  { name: "triage-queue", match: "QueueBacklog", turns: [{ json: { severity: "warning", confidence: 0.4, reason: "unsure" } }] },
  { name: "default", turns: [{ text: "Hello." }] }
]

const rpc = (gw: TestGateway, bearer: string, body: unknown, path = "/a2a/invoke") =>
  Effect.promise(async () => {
    const res = await fetch(`${gw.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
      body: JSON.stringify(body)
    })
    return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() }
  })

layer(InfraLive, { excludeTestServices: true })("A2A agent", (it) => {
  it.scoped("send, get and stream in both protocol modes", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts })
      const bearer = yield* token("sre")
      for (const mode of ["1.0", "0.3"] as const) {
        const { client, methods } = yield* clientFor(gw, bearer, mode)
        const task = yield* send(client, "list remediations please")
        assert.strictEqual(task.status?.state, TaskState.TASK_STATE_COMPLETED, mode)
        assert.strictEqual(textOf(task), "Six remediations are in flight.")
        assert.strictEqual(task.artifacts[0]?.parts[0]?.content?.$case, "text")
        const again = yield* Effect.promise(() => client.getTask({ tenant: "", id: task.id, historyLength: undefined }))
        assert.strictEqual(again.status?.state, TaskState.TASK_STATE_COMPLETED)
        assert.strictEqual(again.contextId, task.contextId)

        gw.llm.setLatency(350)
        const events = yield* stream(client, "list remediations as a stream")
        gw.llm.setLatency(0)
        assert.strictEqual(events[0]?.payload?.$case, "task")
        const updates = statusUpdates(events)
        const types = updates.map((u) => u.metadata?.type)
        assert.includeMembers(types, ["status", "reasoning", "keepalive", "output"])
        const keepalive = updates.find((u) => u.metadata?.type === "keepalive")!
        assert.isUndefined(keepalive.status?.message)
        assert.strictEqual(keepalive.metadata?.dot, ".")
        const last = updates.at(-1)!
        assert.strictEqual(last.metadata?.type, "output")
        assert.strictEqual(last.status?.state, TaskState.TASK_STATE_COMPLETED)
        assert.deepStrictEqual(
          [...new Set(methods)],
          mode === "1.0" ? ["SendMessage", "GetTask", "SendStreamingMessage"] : ["message/send", "tasks/get", "message/stream"]
        )
      }
      const entries = (yield* gw.audit.entries).map((e) => e.type)
      assert.includeMembers(entries, ["a2a.task_started", "triage.started", "tool.executed", "a2a.task_completed", "triage.completed"])
    }))

  it.scoped("the 0.3 wire: kind discriminators, lower-case states, final on the last status update", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts })
      const bearer = yield* token("sre")
      const message = { kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "list remediations raw" }] }
      const sent = yield* rpc(gw, bearer, { jsonrpc: "2.0", id: 1, method: "message/send", params: { message } }, "/")
      const result = JSON.parse(sent.text).result
      assert.strictEqual(result.kind, "task")
      assert.strictEqual(result.status.state, "completed")
      assert.strictEqual(result.status.message.parts[0].kind, "text")
      const streamed = yield* rpc(gw, bearer, { jsonrpc: "2.0", id: 2, method: "message/stream", params: { message: { ...message, messageId: "m-2" } } })
      assert.match(streamed.type, /^text\/event-stream/)
      const frames = streamed.text.split("\n\n").filter((b) => b.startsWith("data: ")).map((b) => JSON.parse(b.slice(6)))
      assert.deepStrictEqual(frames.map((f) => f.id), frames.map(() => 2))
      assert.strictEqual(frames[0].result.kind, "task")
      const last = frames.at(-1).result
      assert.deepInclude(last, { kind: "status-update", final: true })
      assert.strictEqual(last.status.state, "completed")
      assert.isTrue(frames.slice(1, -1).every((f) => f.result.kind === "artifact-update" || f.result.final === false))
    }))

  it.scoped("svc_approve is absent; a tool the caller's SAR denies answers permission denied inside the loop", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts })
      for (const mode of ["1.0", "0.3"] as const) {
        const { client } = yield* clientFor(gw, yield* token("remediation-approver"), mode)
        const refused = yield* send(client, `approve it now (${mode})`)
        assert.strictEqual(refused.status?.state, TaskState.TASK_STATE_COMPLETED, mode)
        assert.match(toolReply(gw, `approve it now (${mode})`), /unknown tool svc_approve/)
        const offered = (gw.llm.requests.at(-1)?.body.tools ?? []).map((t: any) => t.function.name)
        for (const absent of ["svc_approve", "svc_complete_no_action", "svc_list_workflows"]) assert.notInclude(offered, absent)
        assert.includeMembers(offered, [
          "svc_list_remediations",
          "cluster_get",
          "svc_remediate",
          "svc_check_existing_remediation",
          "cluster_list_events",
          "list_alerts",
          "svc_investigate_alert"
        ])

        const obs = yield* clientFor(gw, yield* token("observability"), mode)
        const denied = yield* send(obs.client, `cancel the cache remediation (${mode})`)
        assert.strictEqual(denied.status?.state, TaskState.TASK_STATE_COMPLETED, mode)
        assert.strictEqual(textOf(denied), "You may not cancel it.")
        assert.match(toolReply(gw, `cancel the cache remediation (${mode})`), /permission denied: role lacks access to svc_cancel_remediation/)
      }
      const audit = yield* gw.audit.entries
      const deniedCalls = audit.filter((e) => e.type === "tool.executed" && e.data.tool_name === "svc_cancel_remediation" && e.data.tool_outcome === "denied")
      assert.strictEqual(deniedCalls.length, 2)
    }))

  it.scoped("svc_investigate blocks until the investigation finishes and returns its RCA", () =>
    Effect.gen(function* () {
      for (const mode of ["1.0", "0.3"] as const) {
        const gw = yield* startTestGateway({ scripts, pollsUntilDone: 3 })
        const { client } = yield* clientFor(gw, yield* token("sre"), mode)
        const events = yield* stream(client, "why is checkout crashing?")
        const updates = statusUpdates(events)
        assert.strictEqual(updates.at(-1)?.status?.state, TaskState.TASK_STATE_COMPLETED, mode)
        assert.isTrue(updates.some((u) => u.metadata?.type === "investigation"))
        const reply = JSON.parse(toolReply(gw, "why is checkout crashing?"))
        assert.deepInclude(reply, { rr_id: "rr-checkout-crash", status: "completed", summary: "RCA for rr-checkout-crash: the memory limit is too low" })
        // The tool call only answered after the third follow found the analysis answered.
        const actions = gw.agent.calls().map((c) => c.args.action)
        assert.deepStrictEqual(actions, ["start", "follow", "follow", "follow"])
        const entries = yield* gw.audit.entries
        assert.includeMembers(entries.map((e) => e.type), ["triage.started", "ka.delegated", "ka.result_received", "session.completed", "triage.completed"])
        const completed = entries.find((e) => e.type === "session.completed")!
        assert.deepInclude(completed.data, { rr_id: "rr-checkout-crash", terminal_phase: "completed", join_mode: "a2a" })
        assert.isAtLeast(completed.data.duration_ms as number, 0)
        assert.isTrue(entries.some((e) => e.type === "triage.completed" && e.data.triage_outcome === "rr_created"))
      }
    }))

  it.scoped("cancel a running task; get and cancel errors", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts })
      for (const mode of ["1.0", "0.3"] as const) {
        const { client } = yield* clientFor(gw, yield* token("sre"), mode)
        const running = yield* send(client, "watch checkout until it ends", { returnImmediately: true })
        assert.oneOf(running.status?.state, [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING])
        const canceled = yield* Effect.promise(() => client.cancelTask({ tenant: "", id: running.id, metadata: undefined }))
        assert.strictEqual(canceled.status?.state, TaskState.TASK_STATE_CANCELED, mode)
        const again = yield* Effect.promise(() => client.cancelTask({ tenant: "", id: running.id, metadata: undefined }).then(() => undefined, (e) => e))
        assert.strictEqual(again?.name, "TaskNotCancelableError")
        const missing = yield* Effect.promise(() =>
          client.getTask({ tenant: "", id: "no-such-task", historyLength: undefined }).then(() => undefined, (e) => e)
        )
        assert.strictEqual(missing?.name, "TaskNotFoundError")
        const other = yield* clientFor(gw, yield* token("ai-orchestrator"), mode)
        const foreign = yield* Effect.promise(() =>
          other.client.getTask({ tenant: "", id: running.id, historyLength: undefined }).then(() => undefined, (e) => e)
        )
        assert.strictEqual(foreign?.name, "TaskNotFoundError")
      }
    }))

  it.scoped("a conversation continues through contextId; a model failure is a failed task", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts })
      const { client } = yield* clientFor(gw, yield* token("sre"), "1.0")
      const first = yield* send(client, "remember the word kiwi")
      const second = yield* send(client, "what did I ask?", { contextId: first.contextId })
      assert.strictEqual(second.contextId, first.contextId)
      assert.strictEqual(textOf(second), "You asked me to remember a word.")
      gw.llm.failNext(1, { status: 500 })
      const failed = yield* send(client, "hello there")
      assert.strictEqual(failed.status?.state, TaskState.TASK_STATE_FAILED)
      assert.match(textOf(failed), /could not complete the task/)
      assert.isTrue((yield* gw.audit.entries).some((e) => e.type === "a2a.task_failed"))
    }))

  it.scoped("A2A conversations count against maxConcurrentSessions", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts, rateLimit: { maxConcurrentSessions: 1 } })
      const { client } = yield* clientFor(gw, yield* token("sre"), "1.0")
      const first = yield* send(client, "hello one")
      const same = yield* send(client, "hello again", { contextId: first.contextId })
      assert.strictEqual(same.status?.state, TaskState.TASK_STATE_COMPLETED)
      const refused = yield* Effect.promise(() => client.sendMessage(request("hello two")).then(() => undefined, (e) => e))
      assert.strictEqual(refused?.envelopeCode, -32000)
      assert.match(String(refused?.message), /Too Many Sessions/)
    }))

  it.scoped("severity triage classifies alerts outside the four levels (rule tier, model, confidence floor)", () =>
    Effect.gen(function* () {
      const { alerts } = yield* Infra
      const at = new Date().toISOString()
      yield* alerts.set([
        { labels: { alertname: "DiskFilling", namespace: "triage", severity: "sev-x" }, annotations: { summary: "disk 97%" }, state: "firing", activeAt: at },
        { labels: { alertname: "QueueBacklog", namespace: "triage" }, annotations: { summary: "queue grows" }, state: "firing", activeAt: at },
        { labels: { alertname: "OldStyle", namespace: "triage", severity: "error" }, state: "firing", activeAt: at },
        { labels: { alertname: "Labeled", namespace: "triage", severity: "info" }, state: "pending", activeAt: at }
      ])
      const gw = yield* startTestGateway({ scripts })
      const { client } = yield* clientFor(gw, yield* token("sre"), "1.0")
      const task = yield* send(client, "triage the alerts please")
      yield* alerts.set(demoAlerts())
      assert.strictEqual(task.status?.state, TaskState.TASK_STATE_COMPLETED)
      const listed = JSON.parse(toolReply(gw, "triage the alerts please")).alerts as Array<any>
      const by = Object.fromEntries(listed.map((a) => [a.alert_name, [a.severity, a.severity_source]]))
      assert.deepStrictEqual(by, {
        DiskFilling: ["critical", "model"],
        QueueBacklog: ["unknown", "none"],
        OldStyle: ["high", "rule"],
        Labeled: ["info", undefined]
      })
      const triage = (yield* gw.audit.entries).filter((e) => e.type.startsWith("severity_triage."))
      assert.deepStrictEqual(triage.map((e) => [e.type, e.data.alert_name, e.data.severity]).sort(), [
        ["severity_triage.completed", "DiskFilling", "critical"],
        ["severity_triage.completed", "QueueBacklog", "unknown"]
      ])
    }))

  it.scoped("JSON-RPC errors, LLM capacity, the console gate", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts, a2a: { llmConcurrency: 1 } })
      const bearer = yield* token("sre")
      const errorOf = (r: { text: string }) => JSON.parse(r.text).error
      assert.strictEqual(errorOf(yield* rpc(gw, bearer, { jsonrpc: "2.0", id: 1, method: "tasks/unknown" })).code, -32601)
      assert.strictEqual(
        errorOf(yield* rpc(gw, bearer, { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { role: "ROLE_USER" } } })).code,
        -32602
      )
      assert.strictEqual(errorOf(yield* rpc(gw, bearer, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "nope" } })).code, -32001)
      assert.strictEqual(errorOf(yield* rpc(gw, bearer, { jsonrpc: "2.0", id: 1, method: "tasks/pushNotificationConfig/set", params: {} })).code, -32003)
      const bad = yield* Effect.promise(async () =>
        (await fetch(`${gw.url}/a2a/invoke`, { method: "POST", headers: { authorization: `Bearer ${bearer}` }, body: "{" })).json() as any
      )
      assert.strictEqual(bad.error.code, -32700)
      // A data part nesting 5000 levels: refused as the request it is (serialising it would overflow the stack).
      const deepBody = `{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"d","role":"user",` +
        `"parts":[{"kind":"data","data":{"x":${"[".repeat(5000)}${"]".repeat(5000)}}}]}}}`
      const deep = yield* Effect.promise(async () => {
        const res = await fetch(`${gw.url}/a2a/invoke`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
          body: deepBody
        })
        return { status: res.status, error: ((await res.json()) as any).error }
      })
      assert.strictEqual(deep.status, 200)
      assert.strictEqual(deep.error.code, -32600)
      assert.match(deep.error.data.detail, /nests deeper than 1000 levels/)

      const { client } = yield* clientFor(gw, bearer, "1.0")
      const busy = yield* send(client, "watch checkout until it ends", { returnImmediately: true })
      const refused = errorOf(
        yield* rpc(gw, bearer, {
          jsonrpc: "2.0",
          id: 9,
          method: "message/send",
          params: { message: { kind: "message", messageId: "x", role: "user", parts: [{ kind: "text", text: "hi" }] } }
        })
      )
      assert.strictEqual(refused.code, -32000)
      assert.deepInclude(refused.data, { retryable: true })
      yield* Effect.promise(() => client.cancelTask({ tenant: "", id: busy.id, metadata: undefined }))

      const gate = yield* rpc(gw, yield* token("no-console"), { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } })
      assert.strictEqual(gate.status, 403)
      assert.strictEqual(gate.type, "application/problem+json")
    }))
})
