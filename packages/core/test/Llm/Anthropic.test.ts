import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Redacted, Stream } from "effect"
import * as Llm from "../../src/Llm.ts"
import { fake, json, llm, sse } from "./Fake.ts"

const tools: ReadonlyArray<Llm.ToolDefinition> = [{
  name: "cluster_list",
  description: "List objects",
  parameters: { type: "object", properties: { kind: { type: "string" } } }
}]

const conversation: ReadonlyArray<Llm.Message> = [
  Llm.message.system("You investigate incidents."),
  Llm.message.user("Pod web-1 crashes"),
  Llm.message.assistant("Checking.", [
    { id: "tu_1", name: "cluster_list", arguments: { kind: "Pod" } },
    { id: "tu_2", name: "cluster_list", arguments: { kind: "Event" } }
  ]),
  Llm.message.tool("tu_1", "pods: web-1"),
  Llm.message.tool("tu_2", "events: OOMKilled")
]

const answer = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  content: [
    { type: "text", text: "Need the deployment." },
    { type: "tool_use", id: "tu_3", name: "cluster_list", input: { kind: "Deployment" } }
  ],
  stop_reason: "tool_use",
  usage: { input_tokens: 120, output_tokens: 30 }
}

describe("anthropic adapter", () => {
  it.live("messages: system, tool_use / tool_result blocks, x-api-key and version", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, answer))
      const service = yield* llm({ provider: "anthropic", model: "claude-x", endpoint: server.url, apiKey: Redacted.make("ak") })
      const result = yield* service.chat({ messages: conversation, tools })

      assert.deepStrictEqual(result, {
        text: "Need the deployment.",
        toolCalls: [{ id: "tu_3", name: "cluster_list", arguments: { kind: "Deployment" } }],
        finishReason: "tool_calls",
        usage: { promptTokens: 120, completionTokens: 30 }
      })
      const [req] = server.requests
      assert.strictEqual(req.path, "/v1/messages")
      assert.strictEqual(req.headers["x-api-key"], "ak")
      assert.strictEqual(req.headers["anthropic-version"], "2023-06-01")
      assert.strictEqual(req.body.model, "claude-x")
      assert.strictEqual(req.body.system, "You investigate incidents.")
      assert.strictEqual(req.body.max_tokens, 4096)
      assert.deepStrictEqual(req.body.tools, [{ name: "cluster_list", description: "List objects", input_schema: tools[0]!.parameters }])
      // Both tool results travel in one user turn right after the assistant's tool_use turn.
      assert.deepStrictEqual(req.body.messages, [
        { role: "user", content: [{ type: "text", text: "Pod web-1 crashes" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "tu_1", name: "cluster_list", input: { kind: "Pod" } },
            { type: "tool_use", id: "tu_2", name: "cluster_list", input: { kind: "Event" } }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "tu_1", content: "pods: web-1" },
            { type: "tool_result", tool_use_id: "tu_2", content: "events: OOMKilled" }
          ]
        }
      ])
    }).pipe(Effect.scoped))

  it.live("streams SSE events into text, assembled tool calls and usage", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) =>
        sse(res, [
          { event: "message_start", data: { type: "message_start", message: { usage: { input_tokens: 50, output_tokens: 1 } } } },
          { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
          { event: "ping", data: { type: "ping" } },
          { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hmm" } } },
          { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
          {
            event: "content_block_start",
            data: { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "tu_9", name: "cluster_list", input: {} } }
          },
          { event: "content_block_delta", data: { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"kind\"" } } },
          { event: "content_block_delta", data: { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: ": \"Pod\"}" } } },
          { event: "content_block_stop", data: { type: "content_block_stop", index: 1 } },
          { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 17 } } },
          { event: "message_stop", data: { type: "message_stop" } }
        ])
      )
      const service = yield* llm({ provider: "anthropic", model: "claude-x", endpoint: server.url, apiKey: Redacted.make("ak") })
      const deltas = Chunk.toReadonlyArray(yield* Stream.runCollect(service.stream({ messages: conversation, tools })))
      assert.deepStrictEqual(deltas, [
        { _tag: "TextDelta", text: "Hmm" },
        { _tag: "ToolCallStart", id: "tu_9", name: "cluster_list" },
        { _tag: "ToolCallDone", toolCall: { id: "tu_9", name: "cluster_list", arguments: { kind: "Pod" } } },
        { _tag: "Finish", finishReason: "tool_calls", usage: { promptTokens: 50, completionTokens: 17 } }
      ])
      assert.strictEqual(server.requests[0]!.body.stream, true)
    }).pipe(Effect.scoped))

  it.live("an error event mid-stream fails with LlmUnavailable", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) =>
        sse(res, [{ event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }])
      )
      const service = yield* llm({ provider: "anthropic", model: "c", endpoint: server.url, apiKey: Redacted.make("k") })
      const error = yield* Effect.flip(Stream.runDrain(service.stream({ messages: conversation })))
      assert.strictEqual(error._tag, "LlmUnavailable")
      assert.include(error.message, "overloaded_error")
    }).pipe(Effect.scoped))

  it.live("vertex_ai: rawPredict path, bearer token, anthropic_version in the body and no model", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, answer))
      const service = yield* llm({
        provider: "vertex_ai",
        model: "claude-sonnet@2025",
        endpoint: server.url,
        vertexProject: "proj-1",
        vertexLocation: "europe-west1",
        apiKey: Redacted.make("ya29.token")
      })
      yield* service.chat({ messages: conversation, tools })
      const [req] = server.requests
      assert.strictEqual(
        req.path,
        "/v1/projects/proj-1/locations/europe-west1/publishers/anthropic/models/claude-sonnet%402025:rawPredict"
      )
      assert.strictEqual(req.headers.authorization, "Bearer ya29.token")
      assert.isUndefined(req.headers["x-api-key"])
      assert.strictEqual(req.body.anthropic_version, "vertex-2023-10-16")
      assert.isFalse("model" in req.body)
    }).pipe(Effect.scoped))

  it.live("429 through every retry is LlmRateLimited with the last Retry-After", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 429, { type: "error" }, { "retry-after": "0" }))
      const service = yield* llm({ provider: "anthropic", model: "c", endpoint: server.url, apiKey: Redacted.make("k"), maxRetries: 2 })
      const error = yield* Effect.flip(service.chat({ messages: conversation }))
      assert.strictEqual(error._tag, "LlmRateLimited")
      assert.strictEqual(error._tag === "LlmRateLimited" ? error.retryAfterSeconds : -1, 0)
      assert.strictEqual(server.requests.length, 3)
    }).pipe(Effect.scoped))
})
