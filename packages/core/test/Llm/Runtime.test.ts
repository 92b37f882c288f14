import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Duration, Effect } from "effect"
import type * as Llm from "../../src/Llm.ts"
import { llm } from "./Fake.ts"

/** Polls (real time) until the route of `phase` uses `model`. */
const eventually = (service: Llm.LlmService, phase: Llm.Phase, model: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 200; i++) {
      if ((yield* service.route({ phase })).model === model) return
      yield* Effect.sleep(Duration.millis(10))
    }
    assert.fail(`phase ${phase} never routed to ${model}`)
  })

/**
 * Replaces the file in one step, as the kubelet updates a mounted ConfigMap; a plain write truncates first, and a
 * reload landing in between reads an empty file (no phaseModels: the static ones), which made this test flaky.
 */
const replace = (file: string, content: string) => {
  writeFileSync(`${file}.new`, content)
  renameSync(`${file}.new`, file)
}

describe("llm-runtime.yaml", () => {
  it.live("phaseModels reload when the file changes; a bad file keeps the last good ones", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "llm-runtime-"))
      const file = join(dir, "llm-runtime.yaml")
      replace(file, "phaseModels:\n  rca:\n    model: runtime-a\n")
      const service = yield* llm({
        provider: "openai",
        model: "base",
        endpoint: "http://127.0.0.1:9",
        phaseModels: { validation: { model: "static-v" } },
        runtimeConfigFile: file,
        runtimeReloadInterval: Duration.millis(20)
      })
      // Read at start: the file's phaseModels replace the static ones.
      assert.strictEqual((yield* service.route({ phase: "rca" })).model, "runtime-a")
      assert.strictEqual((yield* service.route({ phase: "validation" })).model, "base")

      replace(file, "phaseModels:\n  rca:\n    model: runtime-b\n  workflow_discovery:\n    model: wd\n")
      yield* eventually(service, "rca", "runtime-b")
      assert.strictEqual((yield* service.route({ phase: "workflow_discovery" })).model, "wd")

      replace(file, "phaseModels:\n  triage:\n    model: nope\n")
      yield* Effect.sleep(Duration.millis(100))
      assert.strictEqual((yield* service.route({ phase: "rca" })).model, "runtime-b")

      replace(file, "phaseModels: [not, a, map\n")
      yield* Effect.sleep(Duration.millis(100))
      assert.strictEqual((yield* service.route({ phase: "rca" })).model, "runtime-b")

      rmSync(file)
      yield* Effect.sleep(Duration.millis(100))
      assert.strictEqual((yield* service.route({ phase: "rca" })).model, "runtime-b")

      // Without a phaseModels key the static overrides apply again.
      replace(file, "other: 1\n")
      yield* eventually(service, "validation", "static-v")
      assert.strictEqual((yield* service.route({ phase: "rca" })).model, "base")
    }).pipe(Effect.scoped))

  it.live("a missing file at start keeps the static phaseModels", () =>
    Effect.gen(function* () {
      const service = yield* llm({
        provider: "openai",
        model: "base",
        endpoint: "http://127.0.0.1:9",
        phaseModels: { rca: { model: "static-rca" } },
        runtimeConfigFile: join(tmpdir(), "does-not-exist", "llm-runtime.yaml")
      })
      assert.strictEqual((yield* service.route({ phase: "rca" })).model, "static-rca")
    }).pipe(Effect.scoped))
})
