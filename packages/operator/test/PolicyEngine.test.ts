/**
 * The policy engine's client at its edges, over HTTP: an engine that never answers is the safe decision once the
 * request deadline passes (approval required, degraded), and a module the engine cannot compile is refused with
 * its message.
 */
import { describe, expect, it } from "@effect/vitest"
import { make as makeOpa } from "@kubemend/devkit/Opa"
import { Metrics } from "@kubemend/core/Metrics"
import { Duration, Effect, Layer } from "effect"
import { LifecycleConfig } from "../src/remediation/LifecycleConfig.ts"
import { LifecycleMetrics } from "../src/remediation/LifecycleMetrics.ts"
import { defaultPolicies } from "../src/policy/Defaults.ts"
import { OpaClient } from "../src/clients/OpaClient.ts"
import { PolicyEngine } from "../src/remediation/PolicyEngine.ts"
import { sample } from "./LifecycleHarness.ts"

const engineAt = (url: string) =>
  Layer.build(PolicyEngine.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(OpaClient.layer, LifecycleMetrics.Default)),
    Layer.provideMerge(Metrics.Default),
    Layer.provide(LifecycleConfig.layer({ policy: { url, requestTimeout: Duration.millis(200) } }))
  ))

describe("policy engine client", () => {
  it.live("an engine that never answers: after the deadline, approval required and classification built in, both degraded", () =>
    Effect.gen(function* () {
      const opa = yield* makeOpa({
        policies: { "kubemend/policy.rego": defaultPolicies["policy.rego"], "kubemend/approval.rego": defaultPolicies["approval.rego"] }
      })
      const context = yield* engineAt(opa.url)
      const engine = yield* Effect.provide(PolicyEngine, context)
      expect(yield* engine.approval({ confidence: 0.99, threshold: 0.8 })).toEqual({ requireApproval: false, reasons: [], degraded: false })
      opa.setFault("hang")
      const decision = yield* engine.approval({ confidence: 0.99, threshold: 0.8 })
      expect(decision).toMatchObject({ requireApproval: true, degraded: true })
      expect(decision.reasons[0]).toContain("policy engine unavailable")
      const classification = yield* engine.classify({ signal: { severity: "high", labels: { environment: "staging" } } })
      expect(classification).toMatchObject({ environment: "staging", priority: "P1", criticality: "High", actionable: true, degraded: true })
      const text = (yield* Effect.flatMap(Effect.provide(Metrics, context), (m) => m.render(undefined))).body
      expect(sample(text, "aianalysis_rego_evaluations_total", { outcome: "RequireApproval", degraded: "true" })).toBe(1)
      expect(sample(text, "aianalysis_rego_evaluations_total", { outcome: "AutoApprove", degraded: "false" })).toBe(1)
    }).pipe(Effect.scoped))

  it.live("a module the engine cannot compile is refused with the engine's message", () =>
    Effect.gen(function* () {
      const opa = yield* makeOpa()
      const client = yield* Effect.provide(OpaClient, yield* engineAt(opa.url))
      const refused = yield* Effect.flip(client.putPolicy("kubemend/approval.rego", "package approval\nallow if {\n"))
      expect(refused).toMatchObject({ _tag: "PolicyRejected", id: "kubemend/approval.rego" })
      expect(refused._tag === "PolicyRejected" && refused.detail).toContain("rego_parse_error")
      expect(opa.policies.ids()).toEqual([])
    }).pipe(Effect.scoped))
})
