/** K8s contract: generic reads (redaction, REST mapping), events, leases, SubjectAccessReview, TokenReview. */
import { expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, TestClock } from "effect"
import { K8s } from "../../src/K8s.ts"
import { redactedValue } from "../../src/K8s/Redact.ts"
import { event, names, type Using } from "./ContractKit.ts"
import { apiGroup, K8sHarness } from "./Harness.ts"

export const clusterCases = (using: Using) => {
  const env = using()

  it.live("Secret values are redacted, keys kept", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* harness.seed([
        {
          apiVersion: "v1",
          kind: "Secret",
          metadata: {
            name: "db",
            namespace: "apps",
            annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"password\":\"c2VjcmV0\"}}" }
          },
          data: { password: "c2VjcmV0", user: "YWRtaW4=" }
        },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: "apps" }, data: { mode: "fast" } }
      ])
      const secret = yield* k8s.getResource({ kind: "Secret", namespace: "apps", name: "db" })
      expect(secret.data).toEqual({ password: redactedValue, user: redactedValue })
      expect(secret.metadata.annotations?.["kubectl.kubernetes.io/last-applied-configuration"]).toBe(redactedValue)
      expect(JSON.stringify(secret)).not.toContain("c2VjcmV0")
      const listed = yield* k8s.listResources({ kind: "Secret", namespace: "apps" })
      expect(listed.items.map((s) => s.data)).toEqual([{ password: redactedValue, user: redactedValue }])
      expect(JSON.stringify(listed)).not.toContain("c2VjcmV0")
      const cm = yield* k8s.getResource({ kind: "ConfigMap", apiVersion: "v1", namespace: "apps", name: "cfg" })
      expect(cm.data).toEqual({ mode: "fast" })
    })))

  it.live("REST mapping: a kind without a group resolves to the core group; cluster-scoped kinds; unknown kinds are named", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* harness.seed([
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "apps" }, spec: { replicas: 2 } },
        event("e1", "BackOff", "Pod", "p1")
      ])
      expect(names((yield* k8s.listResources({ kind: "Event", namespace: "apps" })).items)).toEqual(["e1"])
      expect(names((yield* k8s.listResources({ kind: "Event", apiGroup: "core", namespace: "apps" })).items)).toEqual(["e1"])
      yield* k8s.listResources({ kind: "Event", apiVersion: "events.k8s.io/v1", namespace: "apps" })
      const web = yield* k8s.getResource({ kind: "Deployment", namespace: "apps", name: "web" })
      expect(web).toMatchObject({ apiVersion: "apps/v1", kind: "Deployment", spec: { replicas: 2 } })
      expect((yield* Effect.flip(k8s.getResource({ kind: "Deployment", namespace: "apps", name: "nope" })))._tag)
        .toBe("K8sNotFound")
      yield* harness.seed([{ apiVersion: "v1", kind: "Node", metadata: { name: "node-a" }, spec: { unschedulable: true } }])
      const node = yield* k8s.getResource({ kind: "Node", namespace: "apps", name: "node-a" })
      expect(node).toMatchObject({ apiVersion: "v1", kind: "Node", spec: { unschedulable: true } })
      expect(names((yield* k8s.listResources({ kind: "Node", namespace: "apps" })).items)).toEqual(["node-a"])
      expect(yield* Effect.flip(k8s.getResource({ kind: "Frobnicator", namespace: "apps", name: "x" })))
        .toMatchObject({ _tag: "K8sUnknownKind", kind: "Frobnicator" })
    })))

  it.live("container logs: the only container by default, previous, tailLines, limitBytes and the server's 400s", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      const pod = (name: string, containers: ReadonlyArray<string>) => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: "apps" },
        spec: { containers: containers.map((c) => ({ name: c, image: "x" })) }
      })
      yield* harness.seed([pod("one", ["app"]), pod("two", ["app", "sidecar"])])
      yield* harness.setPodLog("apps", "one", "app", "start\nready\nserving\n")
      yield* harness.setPodLog("apps", "one", "app", "boot\npanic: nil map\n", true)
      expect(yield* k8s.podLog({ namespace: "apps", name: "one" })).toBe("start\nready\nserving\n")
      expect(yield* k8s.podLog({ namespace: "apps", name: "one", previous: true, tailLines: 1 })).toBe("panic: nil map\n")
      expect(yield* k8s.podLog({ namespace: "apps", name: "one", limitBytes: 5 })).toBe("start")
      expect(yield* Effect.flip(k8s.podLog({ namespace: "apps", name: "two" })))
        .toMatchObject({ _tag: "K8sUnavailable", status: 400, message: expect.stringContaining("choose one of: [app sidecar]") })
      expect(yield* Effect.flip(k8s.podLog({ namespace: "apps", name: "two", container: "sidecar", previous: true })))
        .toMatchObject({ status: 400, message: expect.stringContaining("previous terminated container") })
      expect(yield* k8s.podLog({ namespace: "apps", name: "two", container: "sidecar" })).toBe("")
      expect((yield* Effect.flip(k8s.podLog({ namespace: "apps", name: "gone" })))._tag).toBe("K8sNotFound")
    })))

  it.live("events by reason and involved object", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* harness.seed([
        event("e1", "BackOff", "Pod", "p1"),
        event("e2", "Killing", "Pod", "p1"),
        event("e3", "BackOff", "Pod", "p2")
      ])
      expect(names(yield* k8s.listEvents({ namespace: "apps", reason: "BackOff" }))).toEqual(["e1", "e3"])
      expect(names(yield* k8s.listEvents({ namespace: "apps", involvedObjectKind: "Pod", involvedObjectName: "p1" })))
        .toEqual(["e1", "e2"])
      expect(names(yield* k8s.listEvents({ namespace: "apps", reason: "BackOff", involvedObjectName: "p1" })))
        .toEqual(["e1"])
      expect(yield* k8s.listEvents({ namespace: "other" })).toEqual([])
    })))

  it.effect("leases: acquire, held, renew, expire (Clock), takeover, release, list", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const lease = "svc-interactive-1"
      const ttl = Duration.seconds(10)
      const first = yield* k8s.acquireLease(lease, "alice", ttl)
      expect(first).toMatchObject({ name: lease, holder: "alice" })
      expect(Duration.toSeconds(first.ttl)).toBe(10)
      expect(yield* Effect.flip(k8s.acquireLease(lease, "bob", ttl))).toMatchObject({ _tag: "K8sLeaseHeld", holder: "alice" })

      yield* TestClock.adjust("6 seconds")
      const renewed = yield* k8s.renewLease(lease, "alice")
      expect(renewed.renewedAt.getTime()).toBe(6000)
      expect(yield* Effect.flip(k8s.renewLease(lease, "bob"))).toMatchObject({ _tag: "K8sLeaseHeld", holder: "alice" })
      yield* TestClock.adjust("6 seconds")
      expect((yield* Effect.flip(k8s.acquireLease(lease, "bob", ttl)))._tag).toBe("K8sLeaseHeld")

      yield* TestClock.adjust("5 seconds")
      const taken = yield* k8s.acquireLease(lease, "bob", ttl)
      expect(taken.holder).toBe("bob")
      expect(taken.acquiredAt.getTime()).toBe(17_000)

      yield* k8s.acquireLease("other-1", "dave", ttl)
      expect((yield* k8s.listLeases("svc-interactive-")).map((l) => l.holder)).toEqual(["bob"])
      yield* k8s.releaseLease(lease, "alice")
      expect((yield* k8s.listLeases("svc-interactive-")).length).toBe(1)

      expect((yield* k8s.takeoverLease(lease, "carol", ttl)).holder).toBe("carol")
      yield* k8s.releaseLease(lease, "carol")
      expect(yield* k8s.listLeases("svc-interactive-")).toEqual([])
      expect((yield* Effect.flip(k8s.renewLease(lease, "carol")))._tag).toBe("K8sNotFound")
      expect((yield* k8s.acquireLease(lease, "erin", ttl)).holder).toBe("erin")
    })))

  it.effect("leases: contenders for one expired lease race on resourceVersion and exactly one wins", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const lease = "svc-race-1"
      const ttl = Duration.seconds(10)
      yield* k8s.acquireLease(lease, "old", ttl)
      yield* TestClock.adjust("11 seconds")
      // A loser of a 409 reads again after the conflict backoff (Clock): let TestClock run it.
      const race = yield* Effect.fork(
        Effect.forEach(["a", "b", "c", "d"], (who) => Effect.either(k8s.acquireLease(lease, who, ttl)), { concurrency: "unbounded" })
      )
      for (let i = 0; i < 20; i++) yield* TestClock.adjust("100 millis")
      const results = yield* Fiber.join(race)
      const winners = results.filter((r) => r._tag === "Right").map((r) => r.right.holder)
      expect(winners.length).toBe(1)
      const losers = results.filter((r) => r._tag === "Left").map((r) => r.left)
      expect(losers.every((e) => e._tag === "K8sLeaseHeld" && e.holder === winners[0])).toBe(true)
      yield* k8s.releaseLease(lease, winners[0]!)
    })))

  it.live("SubjectAccessReview", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* harness.grant({ group: "sre", verb: "use", apiGroup, resource: "tools", names: ["svc_a"] })
      const review = { user: "u1", groups: ["sre"], verb: "use", group: apiGroup, resource: "tools", name: "svc_a" }
      expect(yield* k8s.subjectAccessReview(review)).toBe(true)
      expect(yield* k8s.subjectAccessReview({ ...review, name: "svc_b" })).toBe(false)
      expect(yield* k8s.subjectAccessReview({ ...review, groups: ["other"] })).toBe(false)
      expect(yield* k8s.subjectAccessReview({ ...review, verb: "delete" })).toBe(false)
    })))

  it.live("TokenReview", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      const user = { username: "system:serviceaccount:kubemend-system:gateway", groups: ["system:serviceaccounts"] }
      yield* harness.registerToken("token-gw", user)
      const reviewed = yield* k8s.tokenReview("token-gw")
      const reviewedUser = Option.getOrThrow(reviewed)
      expect(reviewedUser.username).toBe(user.username)
      expect(reviewedUser.groups).toContain("system:serviceaccounts")
      expect(Option.isNone(yield* k8s.tokenReview("bogus"))).toBe(true)
    })))
}
