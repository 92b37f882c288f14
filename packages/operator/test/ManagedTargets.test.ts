import { assert, describe, it } from "@effect/vitest"
import { K8s, type K8sService, K8sUnavailable } from "@kubemend/core/K8s"
import { Effect, Either, Layer, Option } from "effect"
import { ManagedTargets } from "../src/remediation/Targets.ts"

// Only getResource is reached; the rest of the service is never called here.
const k8sAnswering = (status: number) =>
  Layer.succeed(K8s, {
    namespace: "kubemend-system",
    apiGroup: "kubemend.io",
    getResource: () => Effect.fail(new K8sUnavailable({ message: `status ${status}`, status }))
  } as unknown as K8sService)

const target = { kind: "Widget", name: "w", namespace: "shop", apiVersion: "example.com/v1" }
const unlabeledNamespace = () => Effect.succeed(Option.some({}))

describe("managed targets", () => {
  it.effect("a target kind the operator may not read (403) counts as unlabeled, not as an outage", () =>
    Effect.gen(function* () {
      const targets = yield* ManagedTargets.make(unlabeledNamespace)
      assert.isFalse(yield* targets.isManaged(target))
    }).pipe(Effect.provide(k8sAnswering(403))))

  it.effect("other API failures stay failures, so the check is retried", () =>
    Effect.gen(function* () {
      const targets = yield* ManagedTargets.make(unlabeledNamespace)
      const result = yield* Effect.either(targets.isManaged(target))
      assert.isTrue(Either.isLeft(result))
    }).pipe(Effect.provide(k8sAnswering(503))))
})
