/**
 * The builder and the manager on the in-memory K8s: a controller's own objects, its owned children (by
 * `spec.remediationRequestRef.name`) and a watch with a map function all queue keys of the reconciled resource; a
 * flag that is off starts nothing; loops run without leader election.
 */
import { describe, expect, it } from "@effect/vitest"
import { K8s } from "@kubemend/core/K8s"
import { K8sMemory } from "@kubemend/core/K8s/Memory"
import { Metrics } from "@kubemend/core/Metrics"
import { Effect, Layer, Option, Queue, Ref } from "effect"
import { controller, Source } from "../src/runtime/Builder.ts"
import { ControllerMetrics } from "../src/runtime/ControllerMetrics.ts"
import * as Manager from "../src/runtime/Manager.ts"

const namespace = "kubemend-system"
const options = { workers: 2, queueCapacity: 100, backoffBase: "10 millis", backoffMax: "1 second" } as const

const env = Layer.mergeAll(K8sMemory.layer({ namespace, apiGroup: "kubemend.io" }), ControllerMetrics.Default.pipe(Layer.provideMerge(Metrics.Default)))

const next = <A>(queue: Queue.Queue<A>) => Queue.take(queue).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "no key" }))

describe("controller builder and manager", () => {
  it.scopedLive("queues the primary's own keys, its owned children's owner and a watched object's mapped key", () =>
    Effect.gen(function* () {
      const k8s = yield* K8s
      const keys = yield* Queue.unbounded<string>()
      const runnable = controller("test", options)
        .for(Source.cr("remediationrequests"))
        .owns("aianalyses")
        .watches(Source.cr("effectivenessassessments", (o) => Option.some(`${namespace}/from-${o.metadata.name}`)))
        .complete((key) => Effect.as(Queue.offer(keys, key), {}))
      yield* Manager.start([runnable])

      yield* k8s.createCr("remediationrequests", { metadata: { name: "rr-a" }, spec: {} })
      expect(yield* next(keys)).toBe(`${namespace}/rr-a`)
      yield* k8s.createCr("aianalyses", { metadata: { name: "ai-rr-b" }, spec: { remediationRequestRef: { name: "rr-b" } } })
      expect(yield* next(keys)).toBe(`${namespace}/rr-b`)
      yield* k8s.createCr("effectivenessassessments", { metadata: { name: "ea-x" }, spec: {} })
      expect(yield* next(keys)).toBe(`${namespace}/from-ea-x`)
    }).pipe(Effect.provide(env)))

  it.scoped("a flag that is off starts nothing and says why; a loop runs without leader election", () =>
    Effect.gen(function* () {
      const started = yield* Ref.make(0)
      const loop = Manager.loop("count", Ref.update(started, (n) => n + 1))
      expect(loop.needLeaderElection).toBe(false)
      expect(yield* Manager.when(false, "off (test)", Effect.succeed([loop]))).toEqual([])
      const on = yield* Manager.when(true, "off (test)", Effect.succeed([loop]))
      yield* Manager.start(on)
      yield* Effect.yieldNow()
      expect(yield* Ref.get(started)).toBe(1)
    }))
})
