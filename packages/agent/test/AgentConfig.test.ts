import { assert, describe, it } from "@effect/vitest"
import { Config, ConfigProvider, Duration, Effect, Option, Redacted } from "effect"
import { settingsConfig } from "@kubemend/core/Llm"
import { AgentConfig, withShortLlmEnv } from "../src/AgentConfig.ts"

const file = ConfigProvider.fromJson({
  llm: { provider: "openai", model: "gpt-file", endpoint: "http://llm.local" },
  maxTurns: 12,
  safety: { anomaly: { maxToolCallsPerTool: 5 }, sanitization: { credentialScrubEnabled: false } },
  alignmentCheck: { enabled: true, mode: "enforce", timeout: "3s" },
  session: { ttl: "1h" },
  summarizer: { threshold: 2000 }
})

const env = (vars: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(vars)), { pathDelim: "_" })

describe("AgentConfig", () => {
  it.effect("reads the CR-shaped file with defaults for the rest", () =>
    Effect.gen(function* () {
      const c = yield* AgentConfig
      assert.strictEqual(c.maxTurns, 12)
      assert.strictEqual(c.maxToolCallsPerTool, 5)
      assert.strictEqual(c.maxTotalToolCalls, 40)
      assert.isFalse(c.credentialScrubEnabled)
      assert.isTrue(c.injectionPatternsEnabled)
      assert.deepStrictEqual(c.alignment, { enabled: true, mode: "enforce", timeout: Duration.seconds(3), maxStepTokens: 500 })
      assert.isTrue(Duration.equals(c.sessionTTL, Duration.hours(1)))
      assert.isTrue(Duration.equals(c.investigationTimeout, Duration.minutes(25)))
      assert.strictEqual(c.summarizerThreshold, 2000)
      assert.strictEqual(c.maxToolOutputSize, 100_000)
      assert.isTrue(Duration.equals(c.interactive.startWait, Duration.seconds(20)))
    }).pipe(Effect.provide(AgentConfig.layerConfig), Effect.withConfigProvider(withShortLlmEnv(file, env({})))))

  it.effect("LLM_* env vars are short names of AGENT_LLM_*, which win; other env vars are not read", () =>
    Effect.gen(function* () {
      const llm = yield* Config.nested(settingsConfig, "llm")
      assert.strictEqual(llm.provider, "anthropic")
      assert.strictEqual(llm.model, "claude-from-agent-env")
      assert.strictEqual(llm.endpoint, "http://llm.local")
      assert.strictEqual(Redacted.value(llm.apiKey!), "sk-short")
      assert.isTrue(Option.isNone(yield* Config.option(Config.integer("port"))))
    }).pipe(Effect.withConfigProvider(withShortLlmEnv(
      file,
      env({
        LLM_PROVIDER: "anthropic",
        LLM_MODEL: "claude-short",
        AGENT_LLM_MODEL: "claude-from-agent-env",
        LLM_API_KEY: "sk-short",
        PORT: "1"
      })
    ))))

  it.effect("a bad value stops the service with the key named", () =>
    Effect.gen(function* () {
      const failed = yield* Effect.flip(Effect.provide(AgentConfig, AgentConfig.layerConfig))
      assert.include(String(failed), "maxTurns")
    }).pipe(Effect.withConfigProvider(withShortLlmEnv(ConfigProvider.fromJson({ maxTurns: 0 }), env({})))))
})
