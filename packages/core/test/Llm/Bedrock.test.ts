import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Redacted, Stream } from "effect"
import * as Llm from "../../src/Llm.ts"
import { signV4 } from "../../src/Llm/SigV4.ts"
import { fake, json, llm } from "./Fake.ts"

const conversation: ReadonlyArray<Llm.Message> = [
  Llm.message.system("You investigate incidents."),
  Llm.message.user("Pod web-1 crashes"),
  Llm.message.assistant("", [{ id: "tu_1", name: "cluster_get", arguments: { kind: "Pod" } }]),
  Llm.message.tool("tu_1", "OOMKilled")
]

const tools: ReadonlyArray<Llm.ToolDefinition> = [{
  name: "cluster_get",
  description: "Read one object",
  parameters: { type: "object", properties: { kind: { type: "string" } } }
}]

const converse = {
  output: {
    message: {
      role: "assistant",
      content: [{ text: "Reading the deployment." }, { toolUse: { toolUseId: "tu_2", name: "cluster_get", input: { kind: "Deployment" } } }]
    }
  },
  stopReason: "tool_use",
  usage: { inputTokens: 70, outputTokens: 15, totalTokens: 85 }
}

const model = "anthropic.claude-3-5-sonnet-20240620-v1:0"

describe("bedrock adapter", () => {
  // AWS's published SigV4 test suite (aws-sig-v4-test-suite): one credential, one instant, one scope.
  const sts =
    "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="
  const vectors = [
    {
      name: "get-vanilla",
      method: "GET",
      url: "/",
      headers: {},
      body: "",
      signed: "host;x-amz-date",
      signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    },
    {
      name: "post-vanilla",
      method: "POST",
      url: "/",
      headers: {},
      body: "",
      signed: "host;x-amz-date",
      signature: "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
    },
    {
      name: "get-vanilla-query-order-key-case",
      method: "GET",
      url: "/?Param2=value2&Param1=value1",
      headers: {},
      body: "",
      signed: "host;x-amz-date",
      signature: "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
    },
    {
      name: "post-header-value-case",
      method: "POST",
      url: "/",
      headers: { "My-Header1": "VALUE1" },
      body: "",
      signed: "host;my-header1;x-amz-date",
      signature: "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"
    },
    {
      name: "post-x-www-form-urlencoded",
      method: "POST",
      url: "/",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "Param1=value1",
      signed: "content-type;host;x-amz-date",
      signature: "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"
    },
    {
      name: "post-sts-header-before",
      method: "POST",
      url: "/",
      headers: {},
      body: "",
      sessionToken: sts,
      signed: "host;x-amz-date;x-amz-security-token",
      signature: "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
    }
  ]
  for (const v of vectors) {
    it(`SigV4 matches the AWS test suite: ${v.name}`, async () => {
      const headers = await signV4({
        method: v.method,
        url: new URL(`https://example.amazonaws.com${v.url}`),
        headers: v.headers,
        body: v.body,
        region: "us-east-1",
        service: "service",
        credentials: {
          accessKeyId: "AKIDEXAMPLE",
          secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
          ...(v.sessionToken === undefined ? {} : { sessionToken: v.sessionToken })
        },
        now: new Date("2015-08-30T12:36:00Z")
      })
      assert.strictEqual(
        headers.authorization,
        `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=${v.signed}, Signature=${v.signature}`
      )
      assert.strictEqual(headers["x-amz-date"], "20150830T123600Z")
    })
  }

  it.live("converse with SigV4: path, signature, messages and toolConfig", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, converse))
      const service = yield* llm({
        provider: "bedrock",
        model,
        endpoint: server.url,
        bedrockRegion: "eu-central-1",
        awsAccessKeyId: "AKID",
        awsSecretAccessKey: Redacted.make("secret"),
        awsSessionToken: Redacted.make("session")
      })
      const answer = yield* service.chat({ messages: conversation, tools, maxTokens: 100 })
      assert.deepStrictEqual(answer, {
        text: "Reading the deployment.",
        toolCalls: [{ id: "tu_2", name: "cluster_get", arguments: { kind: "Deployment" } }],
        finishReason: "tool_calls",
        usage: { promptTokens: 70, completionTokens: 15 }
      })
      const [req] = server.requests
      assert.strictEqual(req.path, `/model/${encodeURIComponent(model)}/converse`)
      assert.strictEqual(req.headers["x-amz-security-token"], "session")
      // The fake re-signs what it received; a match means method, path, headers and body were signed as sent.
      const date = String(req.headers["x-amz-date"])
      const expected = yield* Effect.promise(() =>
        signV4({
          method: "POST",
          url: new URL(`${server.url}${req.path}`),
          headers: { "content-type": "application/json", accept: "application/json" },
          body: req.raw,
          region: "eu-central-1",
          service: "bedrock",
          credentials: { accessKeyId: "AKID", secretAccessKey: "secret", sessionToken: "session" },
          now: new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`)
        })
      )
      assert.strictEqual(req.headers.authorization, expected.authorization)
      assert.match(String(req.headers.authorization), /Credential=AKID\/\d{8}\/eu-central-1\/bedrock\/aws4_request/)
      assert.deepStrictEqual(req.body, {
        messages: [
          { role: "user", content: [{ text: "Pod web-1 crashes" }] },
          { role: "assistant", content: [{ toolUse: { toolUseId: "tu_1", name: "cluster_get", input: { kind: "Pod" } } }] },
          { role: "user", content: [{ toolResult: { toolUseId: "tu_1", content: [{ text: "OOMKilled" }] } }] }
        ],
        system: [{ text: "You investigate incidents." }],
        inferenceConfig: { maxTokens: 100 },
        toolConfig: { tools: [{ toolSpec: { name: "cluster_get", description: "Read one object", inputSchema: { json: tools[0]!.parameters } } }] }
      })
    }).pipe(Effect.scoped))

  it.live("a Bedrock API key is sent as a bearer token; stream replays the answer as deltas", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, converse))
      const service = yield* llm({ provider: "bedrock", model, endpoint: server.url, apiKey: Redacted.make("bedrock-key") })
      const deltas = Chunk.toReadonlyArray(yield* Stream.runCollect(service.stream({ messages: conversation, tools })))
      assert.deepStrictEqual(deltas.map((d) => d._tag), ["TextDelta", "ToolCallStart", "ToolCallDone", "Finish"])
      assert.deepStrictEqual(yield* Llm.collect(Stream.fromIterable(deltas)), {
        text: "Reading the deployment.",
        toolCalls: [{ id: "tu_2", name: "cluster_get", arguments: { kind: "Deployment" } }],
        finishReason: "tool_calls",
        usage: { promptTokens: 70, completionTokens: 15 }
      })
      assert.strictEqual(server.requests[0]!.headers.authorization, "Bearer bedrock-key")
      assert.strictEqual(server.requests[0]!.path.endsWith("/converse"), true)
    }).pipe(Effect.scoped))

  it.live("a 500 then success is retried transparently", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res, n) => (n === 1 ? json(res, 500, { message: "internal" }) : json(res, 200, converse)))
      const service = yield* llm({ provider: "bedrock", model, endpoint: server.url, apiKey: Redacted.make("k") })
      const answer = yield* service.chat({ messages: conversation })
      assert.strictEqual(answer.finishReason, "tool_calls")
      assert.strictEqual(server.requests.length, 2)
    }).pipe(Effect.scoped))
})
