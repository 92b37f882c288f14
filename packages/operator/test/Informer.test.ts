import { describe, expect, it } from "@effect/vitest"
import { DevKube } from "@kubemend/devkit/kube/index"
import { Deferred, Duration, Effect, Layer, Logger, LogLevel, Queue, Schedule } from "effect"
import { runInformer, specOrDeletionChanged } from "@kubemend/core/K8s/Informer"
import { collectionSource } from "../src/runtime/Cluster.ts"
import * as ClusterLive from "../src/runtime/Cluster/Live.ts"
import { layerInProcess } from "../src/Service.ts"
import { apiGroup, namespace, platform, platformApiVersion, references, spec } from "./PlatformHarness.ts"

/** Polls `check` until it holds (real time, bounded). */
const eventually = (check: () => boolean, timeout: Duration.DurationInput = "10 seconds") =>
  Effect.suspend(() => (check() ? Effect.void : Effect.fail("not yet"))).pipe(
    Effect.retry(Schedule.spaced("20 millis")),
    Effect.timeoutFail({ duration: timeout, onTimeout: () => "condition not reached in time" }),
    Effect.orDie
  )

const cr = (name: string, ns = namespace) => ({ ...platform(), metadata: { name, namespace: ns } })
const listRequests = (kube: DevKube) => kube.requests().filter((r) => r.resource === "kubemends" && r.verb === "list").length

const informer = Effect.gen(function* () {
  const kube = yield* DevKube.scoped({ apiGroup })
  const cluster = yield* ClusterLive.make({ kubeconfig: kube.kubeConfig(), apiGroup })
  const keys = yield* Queue.unbounded<string>()
  const synced = yield* Deferred.make<void>()
  yield* Effect.forkScoped(
    runInformer({
      source: collectionSource(cluster, { apiVersion: platformApiVersion, kind: "Kubemend" }, Duration.minutes(5)),
      onKey: (k) => Queue.offer(keys, k),
      relevant: specOrDeletionChanged,
      backoffMax: Duration.millis(200),
      synced
    }).pipe(Logger.withMinimumLogLevel(LogLevel.Error))
  )
  const drain = Queue.takeAll(keys).pipe(Effect.map((c) => [...c]))
  const next = Effect.timeoutFail(Queue.take(keys), { duration: "5 seconds", onTimeout: () => "no key" as const })
  return { kube, synced, keys, drain, next }
})

describe("platform CR informer", () => {
  it.live("lists, then watches across namespaces; skips status-only changes", () =>
    Effect.scoped(Effect.gen(function* () {
      const { kube, synced, next, drain } = yield* informer
      kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: "team-b" } }, cr("one")])
      yield* Deferred.await(synced)
      expect(yield* next).toBe(`${namespace}/one`)
      kube.put(cr("two", "team-b"))
      expect(yield* next).toBe("team-b/two")
      const two = kube.get(platformApiVersion, "Kubemend", "two", "team-b")!
      kube.put({ ...two, status: { phase: "Running" } })
      kube.put({
        ...cr("two", "team-b"),
        spec: spec((s) => {
          s.valkey.port = 6380
        })
      })
      expect(yield* next).toBe("team-b/two")
      expect(yield* drain).toEqual([])
    })))

  it.live("an expired resourceVersion during the watch (410 ERROR event) relists and goes on", () =>
    Effect.scoped(Effect.gen(function* () {
      const { kube, synced, next } = yield* informer
      kube.put(cr("one"))
      yield* Deferred.await(synced)
      yield* next
      expect(listRequests(kube)).toBe(1)
      // Newer changes elsewhere, then compaction: the informer's last version is gone when it reconnects.
      kube.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "default" }, data: {} }])
      kube.compactHistory()
      kube.faults.closeWatches()
      yield* eventually(() => listRequests(kube) === 2)
      expect(yield* next).toBe(`${namespace}/one`)
      kube.put(cr("three"))
      expect(yield* next).toBe(`${namespace}/three`)
    })))

  it.live("a watch answered 410 Gone relists; other failures relist after backoff", () =>
    Effect.scoped(Effect.gen(function* () {
      const { kube, synced, next } = yield* informer
      yield* Deferred.await(synced)
      kube.faults.failNext(1, { verb: "watch", resource: "kubemends", status: 410 })
      kube.faults.closeWatches()
      yield* eventually(() => listRequests(kube) === 2)
      kube.faults.failNext(1, { verb: "watch", resource: "kubemends", status: 500 })
      kube.faults.closeWatches()
      yield* eventually(() => listRequests(kube) === 3)
      kube.put(cr("four"))
      expect(yield* next).toBe(`${namespace}/four`)
    })))
})

describe("platform controller in process", () => {
  it.live("reconciles a created CR to Running through informer, queue and workers", () =>
    Effect.scoped(Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      kube.seed(references)
      yield* Layer.build(
        layerInProcess({
          kubeconfig: kube.kubeConfig(),
          apiGroup,
          progressRequeue: Duration.millis(100),
          backoffBase: Duration.millis(50)
        }).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Error)))
      )
      kube.put(platform())
      const phase = () => (kube.get(platformApiVersion, "Kubemend", "kubemend", namespace)?.status as any)?.phase as string | undefined
      yield* eventually(() => phase() === "Migrating")
      for (const job of kube.list("batch/v1", "Job", namespace)) kube.put({ ...job, status: { succeeded: 1 } })
      yield* eventually(() => phase() === "Deploying")
      for (const d of kube.list("apps/v1", "Deployment", namespace)) {
        const replicas = (d.spec as { replicas?: number } | undefined)?.replicas ?? 1
        kube.put({ ...d, status: { observedGeneration: d.metadata.generation, replicas, updatedReplicas: replicas, readyReplicas: replicas } })
      }
      yield* eventually(() => phase() === "Running")
    })))
})
