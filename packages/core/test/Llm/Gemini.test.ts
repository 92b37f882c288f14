import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Redacted, Stream } from "effect"
import * as Llm from "../../src/Llm.ts"
import { fake, json, llm, sse } from "./Fake.ts"

const tools: ReadonlyArray<Llm.ToolDefinition> = [{
  name: "cluster_get",
  description: "Read one object",
  parameters: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    additionalProperties: false,
    properties: { kind: { type: "string" } }
  }
}]

const conversation: ReadonlyArray<Llm.Message> = [
  Llm.message.system("You investigate incidents."),
  Llm.message.user("Pod web-1 crashes"),
  Llm.message.assistant("", [{ id: "call_0", name: "cluster_get", arguments: { kind: "Pod" }, signature: "sig-1" }]),
  Llm.message.tool("call_0", "phase: CrashLoopBackOff")
]

const path = "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-pro"

describe("vertex (gemini) adapter", () => {
  it.live("generateContent: contents, functionCall/functionResponse, declarations, usage", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) =>
        json(res, 200, {
          candidates: [{
            content: {
              role: "model",
              parts: [
                { text: "thinking...", thought: true },
                { text: "Reading the deployment." },
                { functionCall: { name: "cluster_get", args: { kind: "Deployment" } }, thoughtSignature: "sig-2" }
              ]
            },
            finishReason: "STOP"
          }],
          usageMetadata: { promptTokenCount: 90, candidatesTokenCount: 12 }
        })
      )
      const service = yield* llm({
        provider: "vertex",
        model: "gemini-2.5-pro",
        endpoint: server.url,
        vertexProject: "p1",
        apiKey: Redacted.make("tok"),
        temperature: 0
      })
      const answer = yield* service.chat({ messages: conversation, tools, maxTokens: 256 })
      assert.deepStrictEqual(answer, {
        text: "Reading the deployment.",
        toolCalls: [{ id: "call_1", name: "cluster_get", arguments: { kind: "Deployment" }, signature: "sig-2" }],
        finishReason: "tool_calls",
        usage: { promptTokens: 90, completionTokens: 12 }
      })
      const [req] = server.requests
      assert.strictEqual(req.path, `${path}:generateContent`)
      assert.strictEqual(req.headers.authorization, "Bearer tok")
      assert.deepStrictEqual(req.body.systemInstruction, { parts: [{ text: "You investigate incidents." }] })
      assert.deepStrictEqual(req.body.generationConfig, { temperature: 0, maxOutputTokens: 256 })
      assert.deepStrictEqual(req.body.tools, [{
        functionDeclarations: [{
          name: "cluster_get",
          description: "Read one object",
          parameters: { type: "object", properties: { kind: { type: "string" } } }
        }]
      }])
      assert.deepStrictEqual(req.body.contents, [
        { role: "user", parts: [{ text: "Pod web-1 crashes" }] },
        { role: "model", parts: [{ functionCall: { name: "cluster_get", args: { kind: "Pod" } }, thoughtSignature: "sig-1" }] },
        { role: "user", parts: [{ functionResponse: { name: "cluster_get", response: { content: "phase: CrashLoopBackOff" } } }] }
      ])
    }).pipe(Effect.scoped))

  it.live("streamGenerateContent?alt=sse: text chunks, whole function calls, last usage", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) =>
        sse(res, [
          { data: { candidates: [{ content: { parts: [{ text: "Root cause: " }] } }] } },
          { data: { candidates: [{ content: { parts: [{ text: "OOM" }] } }], usageMetadata: { promptTokenCount: 5 } } },
          {
            data: {
              candidates: [{ content: { parts: [{ functionCall: { name: "cluster_get", args: { kind: "Pod" } } }] }, finishReason: "STOP" }],
              usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 9 }
            }
          }
        ])
      )
      const service = yield* llm({ provider: "vertex", model: "gemini-2.5-pro", endpoint: server.url, vertexProject: "p1" })
      const deltas = Chunk.toReadonlyArray(yield* Stream.runCollect(service.stream({ messages: conversation })))
      assert.deepStrictEqual(deltas, [
        { _tag: "TextDelta", text: "Root cause: " },
        { _tag: "TextDelta", text: "OOM" },
        { _tag: "ToolCallStart", id: "call_1", name: "cluster_get" },
        { _tag: "ToolCallDone", toolCall: { id: "call_1", name: "cluster_get", arguments: { kind: "Pod" } } },
        { _tag: "Finish", finishReason: "tool_calls", usage: { promptTokens: 5, completionTokens: 9 } }
      ])
      const [req] = server.requests
      assert.strictEqual(req.path, `${path}:streamGenerateContent`)
      assert.strictEqual(req.query.get("alt"), "sse")
    }).pipe(Effect.scoped))

  it.live("oauth2 client credentials: one token fetch serves several calls", () =>
    Effect.gen(function* () {
      const server = yield* fake((req, res) =>
        req.path === "/token"
          ? json(res, 200, { access_token: "oauth-tok", token_type: "Bearer", expires_in: 3600 })
          : json(res, 200, { candidates: [{ content: { parts: [{ text: "ok" }] }, finishReason: "STOP" }] })
      )
      const service = yield* llm({
        provider: "vertex",
        model: "gemini-2.5-pro",
        endpoint: server.url,
        vertexProject: "p1",
        oauth2: { tokenUrl: `${server.url}/token`, clientId: "cid", clientSecret: Redacted.make("cs"), scopes: ["a", "b"] }
      })
      yield* Effect.all([service.chat({ messages: conversation }), service.chat({ messages: conversation })], { concurrency: 2 })
      const tokenRequests = server.requests.filter((r) => r.path === "/token")
      assert.strictEqual(tokenRequests.length, 1)
      const form = new URLSearchParams(tokenRequests[0]!.raw)
      assert.deepStrictEqual(
        [form.get("grant_type"), form.get("client_id"), form.get("client_secret"), form.get("scope")],
        ["client_credentials", "cid", "cs", "a b"]
      )
      const calls = server.requests.filter((r) => r.path !== "/token")
      assert.deepStrictEqual(calls.map((r) => r.headers.authorization), ["Bearer oauth-tok", "Bearer oauth-tok"])
    }).pipe(Effect.scoped))

  it.live("a blocked prompt (no candidates) is content_filter with empty text", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, { promptFeedback: { blockReason: "SAFETY" } }))
      const service = yield* llm({ provider: "vertex", model: "g", endpoint: server.url, vertexProject: "p1" })
      const answer = yield* service.chat({ messages: conversation })
      assert.deepStrictEqual([answer.text, answer.finishReason], ["", "content_filter"])
    }).pipe(Effect.scoped))
})
