import { assert, describe, it } from "@effect/vitest"
import type { ServerResponse } from "node:http"
import { Chunk, Effect, Stream } from "effect"
import * as Llm from "../../src/Llm.ts"
import { fake, json, llm } from "./Fake.ts"

const conversation: ReadonlyArray<Llm.Message> = [
  Llm.message.system("You investigate incidents."),
  Llm.message.user("Pod web-1 crashes"),
  Llm.message.assistant("", [{ id: "call_0", name: "cluster_get", arguments: { kind: "Pod" } }]),
  Llm.message.tool("call_0", "OOMKilled")
]

const tools: ReadonlyArray<Llm.ToolDefinition> = [{
  name: "cluster_get",
  description: "Read one object",
  parameters: { type: "object", properties: { kind: { type: "string" } } }
}]

const ndjson = (res: ServerResponse, lines: ReadonlyArray<unknown>) => {
  res.writeHead(200, { "content-type": "application/x-ndjson" })
  for (const line of lines) res.write(`${JSON.stringify(line)}\n`)
  res.end()
}

describe("ollama adapter", () => {
  it.live("/api/chat with tools: messages, tool_name, options, counts", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) =>
        json(res, 200, {
          model: "llama3.1",
          message: { role: "assistant", content: "", tool_calls: [{ function: { name: "cluster_get", arguments: { kind: "Node" } } }] },
          done: true,
          done_reason: "stop",
          prompt_eval_count: 33,
          eval_count: 8
        })
      )
      const service = yield* llm({ provider: "ollama", model: "llama3.1", endpoint: server.url, temperature: 0.1 })
      const answer = yield* service.chat({ messages: conversation, tools, maxTokens: 64 })
      assert.deepStrictEqual(answer, {
        text: "",
        toolCalls: [{ id: "call_1", name: "cluster_get", arguments: { kind: "Node" } }],
        finishReason: "tool_calls",
        usage: { promptTokens: 33, completionTokens: 8 }
      })
      const [req] = server.requests
      assert.strictEqual(req.path, "/api/chat")
      assert.strictEqual(req.body.stream, false)
      assert.deepStrictEqual(req.body.options, { temperature: 0.1, num_predict: 64 })
      assert.deepStrictEqual(req.body.messages.slice(2), [
        { role: "assistant", content: "", tool_calls: [{ function: { name: "cluster_get", arguments: { kind: "Pod" } } }] },
        { role: "tool", content: "OOMKilled", tool_name: "cluster_get" }
      ])
      assert.strictEqual(req.body.tools[0].function.name, "cluster_get")
    }).pipe(Effect.scoped))

  it.live("NDJSON streaming: text pieces, tool calls and the final counts", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) =>
        ndjson(res, [
          { message: { role: "assistant", content: "The pod " }, done: false },
          { message: { role: "assistant", content: "is OOMKilled." }, done: false },
          { message: { role: "assistant", content: "", tool_calls: [{ function: { name: "cluster_get", arguments: { kind: "Pod" } } }] }, done: false },
          { message: { role: "assistant", content: "" }, done: true, done_reason: "stop", prompt_eval_count: 20, eval_count: 6 }
        ])
      )
      const service = yield* llm({ provider: "ollama", model: "llama3.1", endpoint: server.url })
      const deltas = Chunk.toReadonlyArray(yield* Stream.runCollect(service.stream({ messages: conversation, tools })))
      assert.deepStrictEqual(deltas, [
        { _tag: "TextDelta", text: "The pod " },
        { _tag: "TextDelta", text: "is OOMKilled." },
        { _tag: "ToolCallStart", id: "call_1", name: "cluster_get" },
        { _tag: "ToolCallDone", toolCall: { id: "call_1", name: "cluster_get", arguments: { kind: "Pod" } } },
        { _tag: "Finish", finishReason: "tool_calls", usage: { promptTokens: 20, completionTokens: 6 } }
      ])
      assert.strictEqual(server.requests[0]!.body.stream, true)
      assert.isFalse("options" in server.requests[0]!.body)
    }).pipe(Effect.scoped))

  it.live("503 then success; 503 forever ends in LlmUnavailable", () =>
    Effect.gen(function* () {
      const flaky = yield* fake((_, res, n) =>
        n === 1 ? json(res, 503, { error: "loading model" }) : json(res, 200, { message: { content: "ok" }, done: true })
      )
      const a = yield* llm({ provider: "ollama", model: "m", endpoint: flaky.url })
      assert.strictEqual((yield* a.chat({ messages: conversation })).text, "ok")
      assert.strictEqual(flaky.requests.length, 2)

      const down = yield* fake((_, res) => json(res, 503, { error: "loading model" }))
      const b = yield* llm({ provider: "ollama", model: "m", endpoint: down.url, maxRetries: 1 })
      const error = yield* Effect.flip(b.chat({ messages: conversation }))
      assert.deepStrictEqual([error._tag, down.requests.length], ["LlmUnavailable", 2])
    }).pipe(Effect.scoped))

  it.live("a connection refused is a network failure: retried, then LlmUnavailable", () =>
    Effect.gen(function* () {
      const service = yield* llm({ provider: "ollama", model: "m", endpoint: "http://127.0.0.1:1", maxRetries: 1 })
      const error = yield* Effect.flip(service.chat({ messages: conversation }))
      assert.strictEqual(error._tag, "LlmUnavailable")
    }).pipe(Effect.scoped))
})
