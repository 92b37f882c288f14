import { assert, describe, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, Redacted, Stream, TestClock } from "effect"
import * as Llm from "../../src/Llm.ts"
import { fake, json, llm, sse } from "./Fake.ts"

const tools: ReadonlyArray<Llm.ToolDefinition> = [{
  name: "cluster_get",
  description: "Read one object",
  parameters: { type: "object", properties: { kind: { type: "string" } }, required: ["kind"] }
}]

const conversation: ReadonlyArray<Llm.Message> = [
  Llm.message.system("You investigate incidents."),
  Llm.message.user("Pod web-1 crashes"),
  Llm.message.assistant("", [{ id: "call_a", name: "cluster_get", arguments: { kind: "Pod" } }]),
  Llm.message.tool("call_a", "{\"status\":\"CrashLoopBackOff\"}")
]

const completion = {
  choices: [{
    message: {
      content: null,
      tool_calls: [{ id: "call_b", type: "function", function: { name: "cluster_get", arguments: "{\"kind\":\"Deployment\"}" } }]
    },
    finish_reason: "tool_calls"
  }],
  usage: { prompt_tokens: 42, completion_tokens: 7 }
}

describe("openai adapter", () => {
  it.live("sends messages and tools, parses tool calls and usage", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, completion))
      const service = yield* llm({ provider: "openai", model: "gpt-test", endpoint: server.url, apiKey: Redacted.make("sk-1") })
      const answer = yield* service.chat({ messages: conversation, tools })

      assert.deepStrictEqual(answer, {
        text: "",
        toolCalls: [{ id: "call_b", name: "cluster_get", arguments: { kind: "Deployment" } }],
        finishReason: "tool_calls",
        usage: { promptTokens: 42, completionTokens: 7 }
      })
      const [req] = server.requests
      assert.strictEqual(req.path, "/v1/chat/completions")
      assert.strictEqual(req.headers.authorization, "Bearer sk-1")
      assert.strictEqual(req.body.model, "gpt-test")
      assert.strictEqual(req.body.tool_choice, "auto")
      assert.deepStrictEqual(req.body.tools[0].function.name, "cluster_get")
      assert.isFalse("temperature" in req.body)
      assert.isFalse("stream" in req.body)
      assert.deepStrictEqual(req.body.messages.slice(2), [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_a", type: "function", function: { name: "cluster_get", arguments: "{\"kind\":\"Pod\"}" } }]
        },
        { role: "tool", tool_call_id: "call_a", content: "{\"status\":\"CrashLoopBackOff\"}" }
      ])
    }).pipe(Effect.scoped))

  it.live("streams text and tool-call fragments, assembled, with the final usage", () =>
    Effect.gen(function* () {
      const chunk = (delta: unknown, finish: string | null = null) => ({ data: { choices: [{ index: 0, delta, finish_reason: finish }] } })
      const server = yield* fake((_, res) =>
        sse(res, [
          chunk({ role: "assistant", content: "Look" }),
          chunk({ content: "ing." }),
          chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "cluster_list", arguments: "" } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"kind\":" } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: "\"Pod\"}" } }] }),
          chunk({}, "tool_calls"),
          { data: { choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } } },
          { data: "[DONE]" }
        ])
      )
      const service = yield* llm({ provider: "openai", model: "m", endpoint: `${server.url}/v1` })
      const deltas = Chunk.toReadonlyArray(yield* Stream.runCollect(service.stream({ messages: conversation, tools })))

      assert.deepStrictEqual(deltas, [
        { _tag: "TextDelta", text: "Look" },
        { _tag: "TextDelta", text: "ing." },
        { _tag: "ToolCallStart", id: "call_1", name: "cluster_list" },
        { _tag: "ToolCallDone", toolCall: { id: "call_1", name: "cluster_list", arguments: { kind: "Pod" } } },
        { _tag: "Finish", finishReason: "tool_calls", usage: { promptTokens: 10, completionTokens: 5 } }
      ])
      const [req] = server.requests
      assert.strictEqual(req.path, "/v1/chat/completions")
      assert.strictEqual(req.body.stream, true)
      assert.deepStrictEqual(req.body.stream_options, { include_usage: true })
    }).pipe(Effect.scoped))

  it.effect("waits for Retry-After on 429, then succeeds", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res, n) =>
        n === 1
          ? json(res, 429, { error: { message: "slow down" } }, { "retry-after": "7" })
          : json(res, 200, completion)
      )
      // The exponential step (1 s) is shorter than Retry-After (7 s): only the header can explain the wait.
      const service = yield* llm({
        provider: "openai",
        model: "m",
        endpoint: server.url,
        retryBaseDelay: Duration.seconds(1)
      })
      const fiber = yield* Effect.fork(service.chat({ messages: conversation }))
      yield* Effect.promise(() => server.received(1))
      yield* waitForSleep(Duration.seconds(7))
      yield* TestClock.adjust(Duration.millis(6999))
      assert.strictEqual(server.requests.length, 1)
      yield* TestClock.adjust(Duration.millis(1))
      const answer = yield* Fiber.join(fiber)
      assert.strictEqual(server.requests.length, 2)
      assert.strictEqual(answer.toolCalls[0]?.name, "cluster_get")
    }).pipe(Effect.scoped))

  it.live("gives up on 5xx after maxRetries with LlmUnavailable", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 503, { error: { message: "overloaded" } }))
      const service = yield* llm({ provider: "openai", model: "m", endpoint: server.url, maxRetries: 2 })
      const error = yield* Effect.flip(service.chat({ messages: conversation }))
      assert.strictEqual(error._tag, "LlmUnavailable")
      assert.strictEqual(error._tag === "LlmUnavailable" && error.status, 503)
      assert.strictEqual(server.requests.length, 3)
    }).pipe(Effect.scoped))

  it.live("429 on every attempt is LlmRateLimited; 400 is not retried", () =>
    Effect.gen(function* () {
      const limited = yield* fake((_, res) => json(res, 429, {}, { "retry-after": "0" }))
      const a = yield* llm({ provider: "openai", model: "m", endpoint: limited.url, maxRetries: 1 })
      const e1 = yield* Effect.flip(a.chat({ messages: conversation }))
      assert.deepStrictEqual([e1._tag, limited.requests.length], ["LlmRateLimited", 2])

      const bad = yield* fake((_, res) => json(res, 400, { error: { message: "unknown model" } }))
      const b = yield* llm({ provider: "openai", model: "m", endpoint: bad.url })
      const e2 = yield* Effect.flip(b.chat({ messages: conversation }))
      assert.deepStrictEqual([e2._tag, bad.requests.length], ["LlmBadRequest", 1])
      assert.include(e2.message, "unknown model")
    }).pipe(Effect.scoped))

  it.live("a timed-out attempt is retried", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res, n) => (n === 1 ? undefined : json(res, 200, completion)))
      const service = yield* llm({ provider: "openai", model: "m", endpoint: server.url, timeout: Duration.millis(100) })
      const answer = yield* service.chat({ messages: conversation })
      assert.strictEqual(answer.finishReason, "tool_calls")
      assert.strictEqual(server.requests.length, 2)
    }).pipe(Effect.scoped))

  it.live("azure uses the deployment URL, api-version and api-key header", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, completion))
      const service = yield* llm({
        provider: "azure",
        model: "gpt4o-prod",
        endpoint: `${server.url}/`,
        apiKey: Redacted.make("az-key"),
        azureApiVersion: "2024-06-01",
        temperature: 0.2
      })
      yield* service.chat({ messages: conversation })
      const [req] = server.requests
      assert.strictEqual(req.path, "/openai/deployments/gpt4o-prod/chat/completions")
      assert.strictEqual(req.query.get("api-version"), "2024-06-01")
      assert.strictEqual(req.headers["api-key"], "az-key")
      assert.isUndefined(req.headers.authorization)
      assert.strictEqual(req.body.temperature, 0.2)
    }).pipe(Effect.scoped))

  it.live("mistral and huggingface speak the same wire; mistral streams without stream_options", () =>
    Effect.gen(function* () {
      const server = yield* fake((req, res) =>
        req.body.stream === true
          ? sse(res, [{ data: { choices: [{ delta: { content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1 } } }, {
            data: "[DONE]"
          }])
          : json(res, 200, { choices: [{ message: { content: "ok" }, finish_reason: "stop" }] })
      )
      const mistral = yield* llm({ provider: "mistral", model: "mistral-large", endpoint: server.url })
      const streamed = yield* Llm.collect(mistral.stream({ messages: conversation }))
      assert.deepStrictEqual(streamed, { text: "ok", toolCalls: [], finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 } })
      assert.isFalse("stream_options" in server.requests[0]!.body)

      const hf = yield* llm({ provider: "huggingface", model: "meta-llama/x", endpoint: server.url, apiKey: Redacted.make("hf") })
      const answer = yield* hf.chat({ messages: conversation })
      assert.deepStrictEqual([answer.text, answer.usage], ["ok", { promptTokens: 0, completionTokens: 0 }])
      assert.strictEqual(server.requests[1]!.headers.authorization, "Bearer hf")
    }).pipe(Effect.scoped))

  it.live("arguments that are not a JSON object are kept raw", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) =>
        json(res, 200, {
          choices: [{ message: { tool_calls: [{ id: "c", function: { name: "cluster_get", arguments: "{kind: Pod" } }] }, finish_reason: "tool_calls" }]
        })
      )
      const service = yield* llm({ provider: "openai_compatible", model: "m", endpoint: server.url })
      const answer = yield* service.chat({ messages: conversation })
      assert.deepStrictEqual(answer.toolCalls, [{ id: "c", name: "cluster_get", arguments: {}, rawArguments: "{kind: Pod" }])
    }).pipe(Effect.scoped))
})

/** Waits (on real time) until some fiber sleeps until now + `d` on the TestClock. */
const waitForSleep = (d: Duration.Duration) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      const now = yield* TestClock.currentTimeMillis
      const sleeps = yield* TestClock.sleeps()
      if (Chunk.some(sleeps, (t) => t === now + Duration.toMillis(d))) return
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
    }
    throw new Error("no sleep registered")
  })
