/** The K8s layer's parts on their own: informer timing on the TestClock, REST mapper caching, selectors, redaction. */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Either, Fiber, Ref, Stream, TestClock } from "effect"
import { K8s, type KubeObject } from "../src/K8s.ts"
import { resolveSettings } from "../src/K8s/Config.ts"
import { actions, K8sMemory } from "../src/K8s/Memory.ts"
import { redactSecret } from "../src/K8s/Redact.ts"
import * as RestMapper from "../src/K8s/RestMapper.ts"
import { HttpFailure, parseRetryAfter } from "../src/K8s/Retry.ts"
import { mergePatch } from "../src/K8s/MergePatch.ts"
import { labelFilter, matchesFields } from "../src/K8s/Selectors.ts"
import { informer, type RawWatchEvent } from "../src/K8s/Watch.ts"

const obj = (name: string, rv: string, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { name, resourceVersion: rv, labels }
})

const settings = resolveSettings({ watchMaxFailures: 4 })

describe("informer", () => {
  it.effect("relists after 410 with 100 ms, 200 ms, 400 ms ... and emits only the difference", () =>
    Effect.gen(function* () {
      const lists = yield* Ref.make(0)
      const times = yield* Ref.make<Array<number>>([])
      const source = {
        list: Effect.gen(function* () {
          const n = yield* Ref.updateAndGet(lists, (x) => x + 1)
          const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
          yield* Ref.update(times, (t) => [...t, now])
          return n === 1
            ? { items: [obj("a", "1"), obj("b", "2")], resourceVersion: "2" }
            : { items: [obj("b", "5"), obj("c", "6")], resourceVersion: "6" }
        }),
        watch: () => Stream.fail(new HttpFailure({ status: 410, message: "gone" }))
      }
      const fiber = yield* informer(source, settings).pipe(Stream.take(5), Stream.runCollect, Effect.fork)
      yield* TestClock.adjust("100 millis")
      const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber)).map((e) => `${e.type} ${e.object.metadata.name}`)
      expect(events).toEqual(["ADDED a", "ADDED b", "MODIFIED b", "ADDED c", "DELETED a"])
      const fiber2 = yield* informer(source, settings).pipe(Stream.runDrain, Effect.fork)
      yield* TestClock.adjust("100 millis")
      yield* TestClock.adjust("200 millis")
      yield* TestClock.adjust("400 millis")
      expect(yield* Ref.get(times)).toEqual([0, 100, 100, 200, 400, 800])
      yield* Fiber.interrupt(fiber2)
    }))

  it.effect("reconnects from the last resourceVersion; replayed events are not repeated", () =>
    Effect.gen(function* () {
      const from = yield* Ref.make<Array<string>>([])
      const sessions: Array<ReadonlyArray<RawWatchEvent>> = [
        [{ type: "ADDED", object: obj("b", "3") }, { type: "BOOKMARK", object: obj("", "7") }],
        // a server replaying what we already have must not produce duplicates
        [{ type: "ADDED", object: obj("b", "3") }, { type: "MODIFIED", object: obj("a", "8") }]
      ]
      const source = {
        list: Effect.succeed({ items: [obj("a", "1")], resourceVersion: "2" }),
        watch: (rv: string) => Stream.unwrap(Ref.modify(from, (f) => [Stream.fromIterable(sessions[f.length] ?? []), [...f, rv]]))
      }
      const events = yield* informer(source, settings).pipe(Stream.take(3), Stream.runCollect)
      expect(Chunk.toReadonlyArray(events).map((e) => `${e.type} ${e.object.metadata.name}`))
        .toEqual(["ADDED a", "ADDED b", "MODIFIED a"])
      expect(yield* Ref.get(from)).toEqual(["2", "7"])
    }))

  it.effect("an ERROR event carrying 410 inside a watch stream also relists", () =>
    Effect.gen(function* () {
      const lists = yield* Ref.make(0)
      const source = {
        list: Effect.map(Ref.updateAndGet(lists, (n) => n + 1), (n) =>
          n === 1 ? { items: [obj("a", "1")], resourceVersion: "1" } : { items: [obj("a", "4")], resourceVersion: "4" }),
        watch: (rv: string) =>
          rv === "1"
            ? Stream.make<Array<RawWatchEvent>>({ type: "ERROR", object: { metadata: { name: "" }, code: 410 } })
            : Stream.never
      }
      const fiber = yield* informer(source, settings).pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      yield* TestClock.adjust("100 millis")
      const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      expect(events.map((e) =>
        `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`
      ))
        .toEqual(["ADDED a 1", "MODIFIED a 4"])
    }))

  it.effect("a server closing empty watches is not spun on, and repeated failures end the stream", () =>
    Effect.gen(function* () {
      const watches = yield* Ref.make(0)
      const quiet = {
        list: Effect.succeed({ items: [], resourceVersion: "1" }),
        watch: () => Stream.fromEffect(Ref.update(watches, (n) => n + 1)).pipe(Stream.drain)
      }
      const fiber = yield* informer(quiet, settings).pipe(Stream.runDrain, Effect.fork)
      yield* TestClock.adjust("1 second")
      // 0, +100, +200, +400 ms: four watches in the first second, not thousands
      expect(yield* Ref.get(watches)).toBe(4)
      yield* Fiber.interrupt(fiber)

      const broken = { list: Effect.fail(new HttpFailure({ status: 503, message: "down" })), watch: () => Stream.empty }
      const failing = yield* informer(broken, settings).pipe(Stream.runDrain, Effect.either, Effect.fork)
      yield* TestClock.adjust("10 seconds")
      const result = yield* Fiber.join(failing)
      expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "K8sUnavailable", status: 503 })
    }))
})

describe("REST mapper", () => {
  it.effect("caches discovery for the TTL and falls back to the static table when it fails", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const up = yield* Ref.make(true)
      const discover = Effect.gen(function* () {
        yield* Ref.update(calls, (n) => n + 1)
        if (!(yield* Ref.get(up))) return yield* Effect.fail(new HttpFailure({ status: 503, message: "down" }))
        return [{ group: "example.com", version: "v1", resource: "widgets", kind: "Widget", namespaced: true, preferred: true }]
      })
      const mapper = yield* RestMapper.make({ discover, fallback: RestMapper.staticTable("kubemend.io"), ttl: Duration.minutes(5) })
      expect((yield* mapper.resolve({ kind: "Widget" })).resource).toBe("widgets")
      expect((yield* mapper.resolve({ kind: "widget" })).group).toBe("example.com")
      expect(yield* Ref.get(calls)).toBe(1)
      // unknown kind: one rediscovery at most per ttl/10
      expect((yield* Effect.flip(mapper.resolve({ kind: "Nope" })))._tag).toBe("K8sUnknownKind")
      expect((yield* Effect.flip(mapper.resolve({ kind: "Nope" })))._tag).toBe("K8sUnknownKind")
      expect(yield* Ref.get(calls)).toBe(1)
      yield* TestClock.adjust("5 minutes")
      yield* Ref.set(up, false)
      expect((yield* mapper.resolve({ kind: "Widget" })).resource).toBe("widgets")
      expect(yield* Ref.get(calls)).toBe(2)

      const cold = yield* RestMapper.make({ discover, fallback: RestMapper.staticTable("kubemend.io"), ttl: Duration.minutes(5) })
      expect((yield* cold.resolve({ kind: "Deployment" })).group).toBe("apps")
      // Without a group the core group wins, as kubectl resolves it; another group needs naming.
      expect((yield* cold.resolve({ kind: "Event" })).group).toBe("")
      expect((yield* cold.resolve({ kind: "Event", apiGroup: "events.k8s.io" })).group).toBe("events.k8s.io")
      expect(yield* cold.resolve({ kind: "Namespace" })).toMatchObject({ resource: "namespaces", namespaced: false })
      expect(yield* cold.resolve({ kind: "node" })).toMatchObject({ resource: "nodes", namespaced: false })
    }))
})

describe("selectors, merge-patch, redaction, Retry-After", () => {
  it("label and field selectors", () => {
    const o = { ...obj("a", "1", { app: "x", tier: "web" }), reason: "BackOff" }
    const matchesLabels = (selector: string) => {
      const filter = labelFilter(selector)
      if (filter instanceof HttpFailure) throw new Error(filter.message)
      return filter(o)
    }
    expect(matchesLabels("app=x,tier in (web,db)")).toBe(true)
    expect(matchesLabels("app=x,!tier")).toBe(false)
    expect(matchesLabels("app notin (y),env!=prod")).toBe(true)
    // A selector the API server refuses is its 400, not an empty list.
    expect(labelFilter("app=x,bad key")).toMatchObject({ status: 400, message: expect.stringContaining("invalid label key") })
    expect(matchesFields(o, "metadata.name=a,reason=BackOff")).toBe(true)
    expect(matchesFields(o, "reason!=BackOff")).toBe(false)
  })

  it("merge-patch follows RFC 7386", () => {
    expect(mergePatch({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { b: { c: null, x: 1 }, e: [2], f: "n" }))
      .toEqual({ a: 1, b: { d: 3, x: 1 }, e: [2], f: "n" })
  })

  it("Secret values and stringData are redacted; other kinds untouched", () => {
    const secret = redactSecret({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { k: "dg==" }, stringData: { p: "v" } })
    expect(secret).toMatchObject({ data: { k: "<redacted>" }, stringData: { p: "<redacted>" } })
    const cm: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { k: "v" } }
    expect(redactSecret(cm)).toBe(cm)
  })

  it("Retry-After in seconds or as an HTTP date", () => {
    expect(Duration.toMillis(parseRetryAfter("3", 0)!)).toBe(3000)
    expect(Duration.toMillis(parseRetryAfter(new Date(5000).toUTCString(), 1000)!)).toBe(4000)
    expect(parseRetryAfter("soon", 0)).toBeUndefined()
  })
})

describe("K8sMemory control", () => {
  it.effect("records actions, status writes as plural/status", () =>
    Effect.gen(function* () {
      const k8s = yield* K8s
      yield* k8s.createCr("aianalyses", { metadata: { name: "x" }, spec: {} })
      yield* k8s.patchCrStatus("aianalyses", "x", { phase: "Done" })
      yield* k8s.getCr("aianalyses", "x")
      expect(yield* actions).toEqual([
        { verb: "create", plural: "aianalyses", name: "x" },
        { verb: "patch", plural: "aianalyses/status", name: "x" },
        { verb: "get", plural: "aianalyses", name: "x" }
      ])
      const control = yield* K8sMemory
      const stored = yield* control.getCr("aianalyses", "x")
      expect(stored._tag === "Some" && stored.value).toMatchObject({ kind: "AIAnalysis", status: { phase: "Done" } })
    }).pipe(Effect.provide(K8sMemory.layer({ namespace: "ns" }))))
})
