import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Config, ConfigProvider, Duration, Effect, Either, Redacted } from "effect"
import * as Llm from "../../src/Llm.ts"
import { parseRetryAfter } from "../../src/Llm/Transport.ts"
import { fake, json, llm, platform } from "./Fake.ts"

const ask: Llm.ChatRequest = { messages: [Llm.message.user("hi")] }
const ok = { choices: [{ message: { content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1 } }

const fromJson = (block: unknown) => Effect.withConfigProvider(Config.nested(Llm.settingsConfig, "llm"), ConfigProvider.fromJson({ llm: block }))

describe("llm config", () => {
  it.effect("endpoint is required for openai, openai_compatible, ollama, azure and mistral", () =>
    Effect.gen(function* () {
      for (const provider of ["openai", "openai_compatible", "ollama", "azure", "mistral"] as const) {
        const error = yield* Effect.flip(llm({ provider, model: "m" }))
        assert.deepStrictEqual([error._tag, error.key], ["LlmConfigError", "llm.endpoint"], provider)
      }
      const vertex = yield* Effect.flip(llm({ provider: "vertex", model: "g" }))
      assert.strictEqual(vertex.key, "llm.vertexProject")
      const bedrock = yield* Effect.flip(llm({ provider: "bedrock", model: "b" }))
      assert.strictEqual(bedrock.key, "llm.apiKey")
      const badUrl = yield* Effect.flip(llm({ provider: "openai", model: "m", endpoint: "not a url" }))
      assert.strictEqual(badUrl.key, "llm.endpoint")
    }).pipe(Effect.scoped))

  it.live("the openai endpoint is an origin: /v1 is appended unless the path ends with it", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, ok))
      for (const endpoint of [server.url, `${server.url}/`, `${server.url}/v1`, `${server.url}/v1/`, `${server.url}/gw`]) {
        const service = yield* llm({ provider: "openai", model: "m", endpoint })
        yield* service.chat(ask)
      }
      assert.deepStrictEqual(server.requests.map((r) => r.path), [
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/gw/v1/chat/completions"
      ])
    }).pipe(Effect.scoped))

  it.effect("reads the llm block: aliases, defaults, redacted secrets, timeoutSeconds", () =>
    Effect.gen(function* () {
      const settings = yield* fromJson({
        provider: "vertexAi",
        model: "claude-sonnet",
        vertexProject: "p",
        apiKey: "secret",
        timeoutSeconds: 30,
        runtimeReloadInterval: "2s",
        temperature: "0.3",
        oauth2: { tokenURL: "https://idp/token", clientId: "c", clientSecret: "s", scopes: ["x"] },
        phaseModels: { rca: { model: "claude-opus" }, validation: { provider: "openai", endpoint: "http://o", model: "g" } }
      })
      assert.strictEqual(settings.provider, "vertex_ai")
      assert.strictEqual(settings.maxRetries, 3)
      assert.isTrue(Duration.equals(settings.timeout, Duration.seconds(30)))
      assert.strictEqual(settings.temperature, 0.3)
      assert.isTrue(Duration.equals(settings.runtimeReloadInterval, Duration.seconds(2)))
      assert.strictEqual(Redacted.value(settings.apiKey!), "secret")
      assert.strictEqual(settings.oauth2?.tokenUrl, "https://idp/token")
      assert.deepStrictEqual(settings.phaseModels, {
        rca: { model: "claude-opus" },
        validation: { provider: "openai", endpoint: "http://o", model: "g" }
      })
      assert.isFalse("temperature" in (yield* fromJson({ provider: "openai", model: "m" })))
    }))

  it.effect("phaseModels keys other than rca, workflow_discovery, validation are rejected, naming the key", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(fromJson({ provider: "openai", model: "m", phaseModels: { triage: { model: "x" } } }))
      assert.include(String(error), "phaseModels.triage")
      const decoded = Llm.decodePhaseModels({ rca: { model: "a" }, summarize: { model: "b" } })
      assert.isTrue(Either.isLeft(decoded))
      assert.strictEqual(Either.isLeft(decoded) ? decoded.left.key : "", "llm.phaseModels.summarize")
      const extraField = Llm.decodePhaseModels({ rca: { model: "a", temperature: "1" } })
      assert.strictEqual(Either.isLeft(extraField) ? extraField.left.key : "", "llm.phaseModels.rca")
      const badProvider = yield* Effect.flip(fromJson({ provider: "gpt", model: "m" }))
      assert.include(String(badProvider), "unknown provider")
    }))

  it.effect("env overrides read LLM_PROVIDER, LLM_ENDPOINT, LLM_MODEL, LLM_API_KEY", () =>
    Effect.gen(function* () {
      const env = ConfigProvider.fromMap(
        new Map([["LLM_PROVIDER", "openai"], ["LLM_ENDPOINT", "http://h"], ["LLM_MODEL", "m"], ["LLM_API_KEY", "k"], ["LLM_MAX_RETRIES", "5"]]),
        { pathDelim: "_" }
      ).pipe(ConfigProvider.constantCase)
      const settings = yield* Effect.withConfigProvider(Config.nested(Llm.settingsConfig, "llm"), env)
      assert.deepStrictEqual([settings.provider, settings.endpoint, settings.model, settings.maxRetries], ["openai", "http://h", "m", 5])
      assert.strictEqual(Redacted.value(settings.apiKey!), "k")
    }))

  it.live("temperature is sent only when set", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, ok))
      yield* (yield* llm({ provider: "openai", model: "m", endpoint: server.url })).chat(ask)
      yield* (yield* llm({ provider: "openai", model: "m", endpoint: server.url, temperature: 0 })).chat(ask)
      yield* (yield* llm({ provider: "openai", model: "m", endpoint: server.url })).chat({ ...ask, temperature: 0.7 })
      assert.deepStrictEqual(server.requests.map((r) => r.body.temperature), [undefined, 0, 0.7])
      assert.isFalse("temperature" in server.requests[0]!.body)
    }).pipe(Effect.scoped))

  it.live("a phase override picks its model (and provider); other phases and settings are inherited", () =>
    Effect.gen(function* () {
      const openai = yield* fake((_, res) => json(res, 200, ok))
      const anthropic = yield* fake((_, res) =>
        json(res, 200, { content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } })
      )
      const service = yield* llm({
        provider: "openai",
        model: "small",
        endpoint: openai.url,
        apiKey: Redacted.make("base-key"),
        phaseModels: {
          rca: { model: "big" },
          validation: { provider: "anthropic", model: "claude", endpoint: anthropic.url, apiKey: Redacted.make("ant-key") }
        }
      })
      yield* service.chat({ ...ask, phase: "rca" })
      yield* service.chat({ ...ask, phase: "workflow_discovery" })
      yield* service.chat({ ...ask, phase: "rca", model: "explicit" })
      yield* service.chat({ ...ask, phase: "validation" })
      assert.deepStrictEqual(openai.requests.map((r) => r.body.model), ["big", "small", "explicit"])
      assert.deepStrictEqual(openai.requests.map((r) => r.headers.authorization), Array(3).fill("Bearer base-key"))
      assert.deepStrictEqual([anthropic.requests[0]!.body.model, anthropic.requests[0]!.headers["x-api-key"]], ["claude", "ant-key"])
      assert.deepStrictEqual(yield* service.route({ phase: "validation" }), {
        provider: "anthropic",
        model: "claude",
        endpoint: anthropic.url
      })
    }).pipe(Effect.scoped))

  it.live("a static phase override that breaks a rule stops the service at start", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(llm({ provider: "anthropic", model: "c", phaseModels: { rca: { provider: "ollama" } } }))
      assert.strictEqual(error.key, "llm.phaseModels.rca.endpoint")
    }).pipe(Effect.scoped))

  it.live("apiKeyFile provides the key (the mounted credentials secret); unreadable files name their key", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "llm-"))
      writeFileSync(join(dir, "api-key"), "file-key\n")
      const server = yield* fake((_, res) => json(res, 200, ok))
      yield* (yield* llm({ provider: "openai", model: "m", endpoint: server.url, apiKeyFile: join(dir, "api-key") })).chat(ask)
      assert.strictEqual(server.requests[0]!.headers.authorization, "Bearer file-key")
      const missing = yield* Effect.flip(llm({ provider: "openai", model: "m", endpoint: server.url, apiKeyFile: join(dir, "nope") }))
      assert.strictEqual(missing.key, "llm.apiKeyFile")
      const noCa = yield* Effect.flip(llm({ provider: "openai", model: "m", endpoint: server.url, tlsCaFile: join(dir, "ca.pem") }))
      assert.strictEqual(noCa.key, "llm.tlsCaFile")
    }).pipe(Effect.scoped))

  it.live("layerConfig builds the service from the config provider", () =>
    Effect.gen(function* () {
      const server = yield* fake((_, res) => json(res, 200, ok))
      const answer = yield* Effect.flatMap(Llm.Llm, (l) => l.chat(ask)).pipe(
        Effect.provide(Llm.layerConfig()),
        Effect.provide(platform),
        Effect.withConfigProvider(ConfigProvider.fromJson({ llm: { provider: "openai", model: "cfg", endpoint: server.url } }))
      )
      assert.strictEqual(answer.text, "ok")
      assert.strictEqual(server.requests[0]!.body.model, "cfg")
    }).pipe(Effect.scoped))

  it("Retry-After: seconds or an HTTP date, capped at 60 s", () => {
    const now = Date.parse("2025-01-01T00:00:00Z")
    assert.strictEqual(Duration.toSeconds(parseRetryAfter("3", now)!), 3)
    assert.strictEqual(Duration.toSeconds(parseRetryAfter("3600", now)!), 60)
    assert.strictEqual(Duration.toSeconds(parseRetryAfter("Wed, 01 Jan 2025 00:00:05 GMT", now)!), 5)
    assert.isUndefined(parseRetryAfter("soon", now))
    assert.isUndefined(parseRetryAfter(undefined, now))
  })
})
