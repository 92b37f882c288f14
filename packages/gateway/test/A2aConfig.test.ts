/** The A2A, triage and status-stream settings as read from the gateway's config provider. */
import { assert, describe, it } from "@effect/vitest"
import { NodeFileSystem } from "@effect/platform-node"
import { ConfigProvider, Duration, Effect, Exit, Layer, Option } from "effect"
import { Llm } from "@kubemend/core/Llm"
import { A2aConfig, a2aConfigLive, TriageConfig, TriageModel } from "../src/A2a/index.ts"
import { StatusConfig } from "../src/Status/index.ts"

const withConfig = (json: unknown) => Layer.setConfigProvider(ConfigProvider.fromJson(json))

describe("A2A configuration", () => {
  it.scoped("defaults, overrides, and no model without an llm block", () =>
    Effect.gen(function* () {
      const a2a = yield* A2aConfig
      assert.deepStrictEqual(Duration.toMillis(a2a.keepaliveInterval), 2000)
      assert.strictEqual(a2a.llmConcurrency, 10)
      const triage = yield* TriageConfig
      assert.strictEqual(Duration.toSeconds(triage.cacheTTL), 30)
      assert.strictEqual(triage.llmConfidence, 0.8)
      assert.isTrue(Option.isNone(yield* TriageModel))
      const failed = yield* Effect.exit((yield* Llm).chat({ messages: [] }))
      assert.isTrue(Exit.isFailure(failed))
      const status = yield* StatusConfig
      assert.strictEqual(Duration.toSeconds(status.keepaliveInterval), 15)
      assert.strictEqual(Duration.toSeconds(status.closingLead), 5)
    }).pipe(Effect.provide(
      Layer.mergeAll(a2aConfigLive, StatusConfig.layerConfig).pipe(
        Layer.provide(NodeFileSystem.layer),
        Layer.provide(withConfig({ a2a: { keepaliveInterval: "2s" }, severityTriage: { llmConfidence: 0.8 } }))
      )
    )))

  it.effect("a triage model outside vertex_ai, gemini, anthropic is refused", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(a2aConfigLive.pipe(
        Layer.provide(NodeFileSystem.layer),
        Layer.provide(withConfig({ severityTriage: { llm: { provider: "openai", model: "x" } } }))
      ))))
      assert.isTrue(Exit.isFailure(exit))
      assert.match(String(Exit.isFailure(exit) ? exit.cause : ""), /vertex_ai, gemini or anthropic/)
    }))
})
