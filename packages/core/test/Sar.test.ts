import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Duration, Effect, Fiber, Layer, TestClock } from "effect"
import { DevKube } from "@kubemend/devkit/kube/index"
import { Authorizer } from "@kubemend/devkit/kube/Rbac"
import type { AccessReview, K8sService } from "../src/K8s.ts"
import * as K8sLive from "../src/K8s/Live.ts"
import { K8s, K8sUnavailable } from "../src/K8s.ts"
import { allToolNames, devkitRbacSpec, noConsole, personaGroup, personas, personaUser, renderRbac, toolsFor } from "../src/Personas.ts"
import type { RbacSpec } from "../src/Personas.ts"
import type { SarConfigShape } from "../src/Sar.ts"
import { Sar, SarConfig } from "../src/Sar.ts"

const apiGroup = "kubemend.io"

/** A K8s fake where only subjectAccessReview exists; it records every review it receives. */
const fakeK8s = (review: (r: AccessReview) => Effect.Effect<boolean, K8sUnavailable>) => {
  const received: Array<AccessReview> = []
  const service = new Proxy({
    namespace: "kubemend",
    apiGroup,
    subjectAccessReview: (r: AccessReview) =>
      Effect.suspend(() => {
        received.push(r)
        return review(r)
      })
  }, {
    get: (target, prop) => prop in target ? target[prop as keyof typeof target] : () => Effect.die(`unexpected K8s.${String(prop)}`)
  }) as unknown as K8sService
  return { layer: Layer.succeed(K8s, service), received }
}

const fromRbac = (spec: RbacSpec) => {
  const rbac = renderRbac(spec)
  const authorizer = Authorizer.of([...rbac.clusterRoles, ...rbac.clusterRoleBindings])
  return (r: AccessReview) => Effect.sync(() => authorizer.authorize(r).allowed)
}

const withSar = <A, E>(
  k8s: Layer.Layer<K8s>,
  body: (sar: Sar) => Effect.Effect<A, E>,
  config: Partial<SarConfigShape> = {}
) =>
  Effect.flatMap(Sar, body).pipe(
    Effect.provide(Sar.DefaultWithoutDependencies.pipe(Layer.provide(SarConfig.layer(config)), Layer.provide(k8s)))
  )

const sre = { user: personaUser("sre"), groups: [personaGroup("sre")] }
const devSpec = devkitRbacSpec({ apiGroup, toolPrefix: "svc" })

describe("Sar", () => {
  it.effect("sends use/tools reviews in the configured group and caches answers for the TTL", () => {
    const k8s = fakeK8s(fromRbac(devSpec))
    return withSar(k8s.layer, (sar) =>
      Effect.gen(function* () {
        assert.isTrue(yield* sar.check(sre, "tools", "svc_cancel_remediation"))
        assert.deepStrictEqual(k8s.received[0], {
          user: "sre-user",
          groups: ["kubemend-sre"],
          verb: "use",
          group: apiGroup,
          resource: "tools",
          name: "svc_cancel_remediation"
        })
        assert.isFalse(yield* sar.check(sre, "tools", "svc_approve"))
        // same subject, groups in another order: one cache key
        const twoGroups = { user: "u", groups: ["b", "a"] }
        yield* sar.check(twoGroups, "tools", "svc_watch")
        yield* sar.check({ user: "u", groups: ["a", "b"] }, "tools", "svc_watch")
        yield* sar.check(sre, "tools", "svc_cancel_remediation")
        yield* sar.check(sre, "tools", "svc_approve")
        assert.strictEqual(k8s.received.length, 3)
        yield* TestClock.adjust("29 seconds")
        yield* sar.check(sre, "tools", "svc_approve")
        assert.strictEqual(k8s.received.length, 3, "a deny is cached too, within the TTL")
        yield* TestClock.adjust("1 second")
        yield* sar.check(sre, "tools", "svc_approve")
        yield* sar.check(sre, "tools", "svc_cancel_remediation")
        assert.strictEqual(k8s.received.length, 5, "expired answers are reviewed again")
        assert.deepStrictEqual(yield* sar.stats, { hits: 4, misses: 5, coalesced: 0 })
      }))
  })

  it.effect("a revoked grant stops access once the TTL has passed", () => {
    let granted = true
    const k8s = fakeK8s(() => Effect.sync(() => granted))
    return withSar(k8s.layer, (sar) =>
      Effect.gen(function* () {
        assert.isTrue(yield* sar.check(sre, "console"))
        granted = false
        yield* TestClock.adjust("10 seconds")
        assert.isTrue(yield* sar.check(sre, "console"))
        yield* TestClock.adjust("5 seconds")
        assert.isFalse(yield* sar.check(sre, "console"))
        assert.isUndefined(k8s.received[0]!.name, "console review carries no name")
      }), { cacheTTL: Duration.seconds(15) })
  })

  it.effect("N concurrent misses for one key make one review, and a caller's interruption does not hurt the rest", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const k8s = fakeK8s(() => Effect.as(Deferred.await(gate), true))
      yield* withSar(k8s.layer, (sar) =>
        Effect.gen(function* () {
          const fibers = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.fork(sar.check(sre, "tools", "svc_watch")))
          for (let i = 0; i < 100; i++) {
            const { misses, coalesced } = yield* sar.stats
            if (misses + coalesced === 20) break
            yield* Effect.yieldNow()
          }
          yield* Fiber.interrupt(fibers[0]!)
          yield* Deferred.succeed(gate, undefined)
          const results = yield* Fiber.joinAll(fibers.slice(1))
          assert.deepStrictEqual(results, Array(19).fill(true))
          assert.strictEqual(k8s.received.length, 1)
          assert.deepStrictEqual(yield* sar.stats, { hits: 0, misses: 1, coalesced: 19 })
          assert.isTrue(yield* sar.check(sre, "tools", "svc_watch"))
          assert.strictEqual(k8s.received.length, 1)
        }))
    }))

  it.effect("fails closed on a review error and does not cache it", () => {
    let failing = true
    const k8s = fakeK8s(() => failing ? Effect.fail(new K8sUnavailable({ message: "503" })) : Effect.succeed(true))
    return withSar(k8s.layer, (sar) =>
      Effect.gen(function* () {
        assert.isFalse(yield* sar.check(sre, "tools", "svc_watch"))
        assert.isFalse(yield* sar.check(sre, "tools", "svc_watch"))
        assert.strictEqual(k8s.received.length, 2, "errors are not cached")
        failing = false
        assert.isTrue(yield* sar.check(sre, "tools", "svc_watch"))
      }))
  })

  it.effect("fails closed when the review takes longer than the timeout, and does not cache it", () => {
    let hang = true
    const k8s = fakeK8s(() => hang ? Effect.never : Effect.succeed(true))
    return withSar(k8s.layer, (sar) =>
      Effect.gen(function* () {
        const first = yield* Effect.fork(sar.check(sre, "tools", "svc_watch"))
        yield* TestClock.adjust("1999 millis")
        assert.isNull(first.unsafePoll())
        yield* TestClock.adjust("1 millis")
        assert.isFalse(yield* Fiber.join(first))
        hang = false
        assert.isTrue(yield* sar.check(sre, "tools", "svc_watch"))
        assert.strictEqual(k8s.received.length, 2)
      }))
  })

  it.effect("keeps at most maxEntries answers", () => {
    const k8s = fakeK8s(() => Effect.succeed(true))
    return withSar(k8s.layer, (sar) =>
      Effect.gen(function* () {
        for (const name of ["a", "b", "c"]) yield* sar.check(sre, "tools", name)
        yield* sar.check(sre, "tools", "c")
        yield* sar.check(sre, "tools", "a")
        assert.strictEqual(k8s.received.length, 4, "the oldest answer was dropped")
      }), { maxEntries: 2 })
  })

  it.effect("persona matrix: each persona may use exactly its tools (rendered roles, fake review)", () => {
    const k8s = fakeK8s(fromRbac(devSpec))
    return withSar(k8s.layer, (sar) =>
      Effect.gen(function* () {
        for (const persona of personas) {
          const who = { user: personaUser(persona), groups: [personaGroup(persona)] }
          assert.isTrue(yield* sar.check(who, "console"), persona)
          for (const tool of allToolNames("svc")) {
            assert.strictEqual(yield* sar.check(who, "tools", tool), toolsFor(persona, "svc").includes(tool), `${persona} ${tool}`)
          }
        }
        const nc = { user: personaUser(noConsole), groups: [personaGroup(noConsole)] }
        assert.isTrue(yield* sar.check(nc, "tools", "svc_list_remediations"), "no-console has tool grants")
        assert.isFalse(yield* sar.check(nc, "console"), "but no console grant")
      }))
  })

  describe("console gate (document 3 consoleAccessGroups)", () => {
    const bindings: RbacSpec["roleBindings"] = [
      { role: "sre", groups: ["oncall"] },
      { role: "observability", groups: ["dashboards", "oncall"] }
    ]
    const consoleFor = (consoleAccessGroups: ReadonlyArray<string> | undefined, groups: ReadonlyArray<string>) => {
      const spec: RbacSpec = { apiGroup, toolPrefix: "svc", roleBindings: bindings, ...(consoleAccessGroups === undefined ? {} : { consoleAccessGroups }) }
      return withSar(fakeK8s(fromRbac(spec)).layer, (sar) => sar.check({ user: "someone", groups }, "console"))
    }
    it.effect("unset: every group of any roleBinding", () =>
      Effect.gen(function* () {
        assert.isTrue(yield* consoleFor(undefined, ["oncall"]))
        assert.isTrue(yield* consoleFor(undefined, ["dashboards"]))
        assert.isFalse(yield* consoleFor(undefined, ["strangers"]))
      }))
    it.effect("a non-empty list narrows", () =>
      Effect.gen(function* () {
        assert.isTrue(yield* consoleFor(["oncall"], ["oncall"]))
        assert.isFalse(yield* consoleFor(["oncall"], ["dashboards"]))
      }))
    it.effect("an empty list denies everyone", () =>
      Effect.gen(function* () {
        assert.isFalse(yield* consoleFor([], ["oncall"]))
        assert.isFalse(yield* consoleFor([], ["dashboards"]))
      }))
  })

  it.effect("reads sarCacheTTL as a Go duration", () =>
    Effect.gen(function* () {
      const config = yield* Effect.provide(SarConfig, SarConfig.layerConfig()).pipe(
        Effect.withConfigProvider(ConfigProvider.fromJson({ sarCacheTTL: "45s" }))
      )
      assert.isTrue(Duration.equals(config.cacheTTL, Duration.seconds(45)))
      assert.isTrue(Duration.equals(config.timeout, Duration.seconds(2)))
    }))

  it.effect("layerAllowAll and layerTable", () =>
    Effect.gen(function* () {
      const all = yield* Effect.provide(Sar, Sar.layerAllowAll)
      assert.isTrue(yield* all.check({ user: "x", groups: [] }, "tools", "anything"))
      const table = yield* Effect.provide(
        Sar,
        Sar.layerTable([
          { groups: ["g"], resource: "tools", names: ["svc_watch"] },
          { users: ["alice"], resource: "console" }
        ])
      )
      assert.isTrue(yield* table.check({ user: "bob", groups: ["g"] }, "tools", "svc_watch"))
      assert.isFalse(yield* table.check({ user: "bob", groups: ["g"] }, "tools", "svc_approve"))
      assert.isFalse(yield* table.check({ user: "bob", groups: ["g"] }, "console"))
      assert.isTrue(yield* table.check({ user: "alice", groups: [] }, "console"))
    }))
})

describe("Sar over real SubjectAccessReviews (dev API server + live K8s layer)", () => {
  /** The dev API server seeded with the devkit's rendered RBAC, and Sar on the live K8s layer talking to it. */
  const withLiveSar = <A, E>(body: (sar: Sar, kube: DevKube) => Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      const rbac = renderRbac(devSpec)
      kube.seed([...rbac.clusterRoles, ...rbac.clusterRoleBindings])
      const k8s = K8sLive.layer({ namespace: "kubemend", apiGroup, kubeconfig: kube.kubeConfig() })
      return yield* Effect.flatMap(Sar, (sar) => body(sar, kube)).pipe(
        Effect.provide(Sar.DefaultWithoutDependencies.pipe(Layer.provide(SarConfig.layer()), Layer.provide(k8s)))
      )
    })

  it.scopedLive("persona matrix: each persona may use exactly its tools; no-console has tools but no console", () =>
    withLiveSar((sar, kube) =>
      Effect.gen(function* () {
        const cells = personas.flatMap((persona) => [undefined, ...allToolNames("svc")].map((tool) => ({ persona, tool })))
        const answers = yield* Effect.forEach(cells, ({ persona, tool }) => {
          const who = { user: personaUser(persona), groups: [personaGroup(persona)] }
          return tool === undefined ? sar.check(who, "console") : sar.check(who, "tools", tool)
        }, { concurrency: 16 })
        cells.forEach(({ persona, tool }, i) => {
          const expected = tool === undefined || toolsFor(persona, "svc").includes(tool)
          assert.strictEqual(answers[i], expected, `${persona} ${tool ?? "console"}`)
        })
        const nc = { user: personaUser(noConsole), groups: [personaGroup(noConsole)] }
        assert.isTrue(yield* sar.check(nc, "tools", "svc_cancel_remediation"))
        assert.isFalse(yield* sar.check(nc, "console"))
        assert.isFalse(yield* sar.check({ user: "stranger", groups: ["nobody"] }, "console"))
        const reviews = kube.requests().filter((r) => r.path.includes("subjectaccessreviews"))
        assert.strictEqual(reviews.length, personas.length * (allToolNames("svc").length + 1) + 3)
      })
    ))

  it.scoped("a revoked grant stops access once the cache TTL has passed", () =>
    withLiveSar((sar, kube) =>
      Effect.gen(function* () {
        const cicd = { user: personaUser("cicd"), groups: [personaGroup("cicd")] }
        assert.isTrue(yield* sar.check(cicd, "tools", "svc_watch"))
        assert.isTrue(kube.delete("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "tool-cicd-2"))
        assert.isTrue(yield* sar.check(cicd, "tools", "svc_watch"), "still cached")
        yield* TestClock.adjust("30 seconds")
        assert.isFalse(yield* sar.check(cicd, "tools", "svc_watch"))
      })
    ))
})
