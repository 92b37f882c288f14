/**
 * The policy ConfigMaps the platform CR names, kept loaded in the policy engine over OPA's REST API (the devkit's
 * stand-in) against the dev API server: first load, reload after a change, a module the engine rejects leaves the
 * previous one in force, and an engine that restarted empty is refilled.
 */
import { describe, expect, it } from "@effect/vitest"
import { DevKube } from "@kubemend/devkit/kube/index"
import { make as makeOpa } from "@kubemend/devkit/Opa"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Effect, Layer } from "effect"
import * as ClusterLive from "../src/runtime/Cluster/Live.ts"
import { renderCrds } from "../src/Crds.ts"
import { LifecycleConfig } from "../src/remediation/LifecycleConfig.ts"
import { defaultPolicies } from "../src/policy/Defaults.ts"
import { OpaClient } from "../src/clients/OpaClient.ts"
import { makePolicySync } from "../src/policy/PolicySync.ts"
import { platformCr } from "@kubemend/local/Platform"
import { apiGroup, namespace } from "./LifecycleHarness.ts"

const configMap = (name: string, key: string, text: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { [key]: text } })

/** The local platform's CR: `signalProcessing.policy.configMapName: sp-policy`, `aiAnalysis…: approval-policy`. */
const platform = platformCr("https://issuer.example", { provider: "openai", model: "m", endpoint: "http://llm.example", apiKey: "k" }, "http://alerts.example")

const strict = `package approval
import rego.v1
default require_approval := true
reasons contains "every change is reviewed"
`

describe("policy sync", () => {
  it.live("loads the CR's ConfigMaps into the engine, reloads a change, keeps the previous module when one is rejected", () =>
    Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      kube.seed([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
        ...renderCrds(apiGroup),
        platform,
        configMap("sp-policy", "policy.rego", defaultPolicies["policy.rego"]),
        configMap("approval-policy", "approval.rego", defaultPolicies["approval.rego"])
      ])
      const opa = yield* makeOpa()
      const layer = Layer.mergeAll(
        K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig() }),
        ClusterLive.layer({ apiGroup, kubeconfig: kube.kubeConfig() }),
        OpaClient.layer.pipe(Layer.provide(LifecycleConfig.layer({ policy: { url: opa.url } })))
      )
      const sync = yield* Effect.provide(makePolicySync, yield* Layer.build(layer))
      const decide = (confidence: number) => Effect.sync(() => opa.policies.evaluate(["approval"], { confidence, threshold: 0.8 }))

      expect(yield* sync.syncOnce).toBe(2)
      expect(opa.policies.ids()).toEqual(["kubemend/policy.rego", "kubemend/approval.rego"])
      expect(yield* decide(0.9)).toEqual({ require_approval: false, reasons: [] })
      // Unchanged: nothing pushed.
      expect(yield* sync.syncOnce).toBe(0)

      kube.put(configMap("approval-policy", "approval.rego", strict))
      expect(yield* sync.syncOnce).toBe(1)
      expect(yield* decide(0.9)).toEqual({ require_approval: true, reasons: ["every change is reviewed"] })

      kube.put(configMap("approval-policy", "approval.rego", "package approval\nrequire_approval := \n"))
      expect(yield* sync.syncOnce).toBe(0)
      expect(yield* decide(0.9)).toMatchObject({ require_approval: true })

      // The engine restarted empty: the periodic full push (every 6th pass) loads the accepted modules again.
      opa.policies.remove("kubemend/policy.rego")
      opa.policies.remove("kubemend/approval.rego")
      kube.put(configMap("approval-policy", "approval.rego", defaultPolicies["approval.rego"]))
      let pushed = 0
      for (let pass = 0; pass < 6; pass++) pushed += yield* sync.syncOnce
      expect(pushed).toBeGreaterThanOrEqual(2)
      expect(opa.policies.ids()).toEqual(expect.arrayContaining(["kubemend/policy.rego", "kubemend/approval.rego"]))
      expect(yield* decide(0.9)).toEqual({ require_approval: false, reasons: [] })
    }).pipe(Effect.scoped))

  it.live("an unreachable engine: nothing is pushed, the pass does not fail, and the next pass loads it", () =>
    Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      kube.seed([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
        ...renderCrds(apiGroup),
        platform,
        configMap("sp-policy", "policy.rego", defaultPolicies["policy.rego"]),
        configMap("approval-policy", "approval.rego", defaultPolicies["approval.rego"])
      ])
      const opa = yield* makeOpa()
      opa.setFault("unavailable")
      const layer = Layer.mergeAll(
        K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig() }),
        ClusterLive.layer({ apiGroup, kubeconfig: kube.kubeConfig() }),
        OpaClient.layer.pipe(Layer.provide(LifecycleConfig.layer({ policy: { url: opa.url } })))
      )
      const sync = yield* Effect.provide(makePolicySync, yield* Layer.build(layer))
      expect(yield* sync.syncOnce).toBe(0)
      opa.setFault("none")
      expect(yield* sync.syncOnce).toBe(2)
    }).pipe(Effect.scoped))
})
