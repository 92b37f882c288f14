import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Redacted, Stream } from "effect"
import * as ScriptedLlm from "@kubemend/devkit/ScriptedLlm"
import * as Llm from "../../src/Llm.ts"
import { llm, platform } from "./Fake.ts"

const incident = JSON.stringify({
  incident_id: "inc-1",
  resource_namespace: "prod",
  resource_kind: "Pod",
  resource_name: "web-1",
  severity: "critical"
})

const tools: ReadonlyArray<Llm.ToolDefinition> = ["cluster_list", "cluster_get"].map((name) => ({
  name,
  description: name,
  parameters: { type: "object", properties: {} }
}))

/** Plays the agent's side: call the model, answer every tool call, until it gives a final answer. */
const investigate = (ask: (messages: ReadonlyArray<Llm.Message>) => Effect.Effect<Llm.ChatResponse, Llm.LlmError>) =>
  Effect.gen(function* () {
    let messages: ReadonlyArray<Llm.Message> = [Llm.message.system("You are an SRE."), Llm.message.user(`Incident: ${incident}`)]
    const calls: Array<Llm.ToolCall> = []
    for (let turn = 0; turn < 10; turn++) {
      const answer = yield* ask(messages)
      if (answer.toolCalls.length === 0) return { answer, calls, messages }
      calls.push(...answer.toolCalls)
      messages = [
        ...messages,
        Llm.message.assistant(answer.text, answer.toolCalls),
        ...answer.toolCalls.map((c) => Llm.message.tool(c.id, `result of ${c.name}`))
      ]
    }
    return assert.fail("no final answer")
  })

describe("scripted LLM server", () => {
  it.live("plays the default investigation through the openai adapter: tool calls, then a JSON answer", () =>
    Effect.gen(function* () {
      const server = yield* ScriptedLlm.scoped()
      const service = yield* llm({ provider: "openai", model: "scripted", endpoint: server.url })
      const { answer, calls } = yield* investigate((messages) => service.chat({ messages, tools }))

      assert.deepStrictEqual(calls.map((c) => [c.name, c.arguments]), [
        ["cluster_list", { kind: "Pod", api_version: "v1", namespace: "prod" }],
        ["cluster_get", { kind: "Pod", api_version: "v1", namespace: "prod", name: "web-1" }]
      ])
      assert.strictEqual(answer.finishReason, "stop")
      assert.isAbove(answer.usage.promptTokens, 0)
      const result = JSON.parse(answer.text)
      assert.include(result.root_cause, "web-1")
      assert.strictEqual(result.root_cause_analysis.severity, "critical")
      assert.deepStrictEqual(result.selected_workflow.parameters, { NAMESPACE: "prod", POD_NAME: "web-1" })
      assert.strictEqual(server.requests.length, 3)
      assert.strictEqual(server.requests[2]!.body.messages.filter((m: { role: string }) => m.role === "tool").length, 2)
    }).pipe(Effect.scoped))

  it.live("streaming replays the same turns as deltas that assemble to the chat answers", () =>
    Effect.gen(function* () {
      const server = yield* ScriptedLlm.scoped()
      const service = yield* llm({ provider: "openai", model: "scripted", endpoint: server.url })
      const chatted = yield* investigate((messages) => service.chat({ messages, tools }))
      let textDeltas = 0
      const streamed = yield* investigate((messages) =>
        Effect.gen(function* () {
          const deltas = Chunk.toReadonlyArray(yield* Stream.runCollect(service.stream({ messages, tools })))
          textDeltas += deltas.filter((d) => d._tag === "TextDelta").length
          assert.strictEqual(deltas[deltas.length - 1]?._tag, "Finish")
          return yield* Llm.collect(Stream.fromIterable(deltas))
        })
      )
      assert.deepStrictEqual(streamed.answer, chatted.answer)
      assert.deepStrictEqual(streamed.calls, chatted.calls)
      assert.isAbove(textDeltas, 5)
      assert.isTrue(server.requests.slice(3).every((r) => r.body.stream === true))
    }).pipe(Effect.scoped))

  it.live("fault controls: 429 with Retry-After is retried; 500s past maxRetries surface as LlmUnavailable", () =>
    Effect.gen(function* () {
      const server = yield* ScriptedLlm.scoped()
      const service = yield* llm({ provider: "openai", model: "scripted", endpoint: server.url, maxRetries: 2 })
      const ask = { messages: [Llm.message.user(incident)], tools }

      server.failNext(1, { status: 429, retryAfterSeconds: 0 })
      const answer = yield* service.chat(ask)
      assert.strictEqual(answer.toolCalls[0]?.name, "cluster_list")
      assert.strictEqual(server.requests.length, 2)

      server.failNext(3, { status: 500 })
      const error = yield* Effect.flip(service.chat(ask))
      assert.deepStrictEqual([error._tag, server.requests.length], ["LlmUnavailable", 5])

      server.reset()
      server.setLatency(30)
      const started = Date.now()
      yield* service.chat(ask)
      assert.isAtLeast(Date.now() - started, 25)
    }).pipe(Effect.scoped))

  it.live("scripts are chosen by the first user message; past the end the final turn repeats", () =>
    Effect.gen(function* () {
      const server = yield* ScriptedLlm.scoped({
        scripts: [
          { name: "special", match: "KEY-A", turns: [{ toolCalls: [{ name: "cluster_get", arguments: { name: "a" } }] }, { text: "A done" }] },
          { name: "fallback", turns: [{ json: { verdict: "D" } }] }
        ]
      })
      const service = yield* llm({ provider: "openai", model: "scripted", endpoint: server.url })
      const first = yield* service.chat({ messages: [Llm.message.user("about KEY-A")] })
      assert.deepStrictEqual(first.toolCalls.map((c) => c.arguments), [{ name: "a" }])
      const conversation = [
        Llm.message.user("about KEY-A"),
        Llm.message.assistant("", first.toolCalls),
        Llm.message.tool(first.toolCalls[0]!.id, "x"),
        Llm.message.assistant("A done"),
        Llm.message.user("and now?")
      ]
      assert.strictEqual((yield* service.chat({ messages: conversation })).text, "A done")
      assert.strictEqual((yield* service.chat({ messages: [Llm.message.user("other")] })).text, "{\"verdict\":\"D\"}")

      server.setScript({ name: "one", turns: [{ text: "one" }] })
      assert.strictEqual((yield* service.chat({ messages: [Llm.message.user("about KEY-A")] })).text, "one")

      server.setScripts([{ name: "only-matching", match: "zzz", turns: [{ text: "z" }] }])
      const error = yield* Effect.flip(service.chat({ messages: [Llm.message.user("other")] }))
      assert.strictEqual(error._tag, "LlmBadRequest")
    }).pipe(Effect.scoped))

  it.live("layerScripted provides Llm and the server handle; an apiKey is enforced", () =>
    Effect.gen(function* () {
      const service = yield* Llm.Llm
      const server = yield* ScriptedLlm.ScriptedLlm
      const answer = yield* service.chat({ messages: [Llm.message.user(incident)] })
      assert.strictEqual(answer.toolCalls[0]?.name, "cluster_list")
      assert.strictEqual(server.requests[0]!.headers.authorization, "Bearer dev-key")

      const wrongKey = yield* llm({ provider: "openai", model: "scripted", endpoint: server.url, apiKey: Redacted.make("nope") })
      const error = yield* Effect.flip(wrongKey.chat({ messages: [Llm.message.user(incident)] }))
      assert.deepStrictEqual([error._tag, error._tag === "LlmBadRequest" ? error.status : 0], ["LlmBadRequest", 401])
    }).pipe(Effect.provide(ScriptedLlm.layerScripted({ apiKey: "dev-key" }).pipe(Layer.provide(platform))), Effect.scoped))
})
