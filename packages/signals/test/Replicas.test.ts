/**
 * Two replicas of the signal service (two real HTTP servers, each with its own index and count writer) against one
 * dev API server: a signal never makes two requests, and the duplicates both replicas counted add up.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { alert, post, startKube, startSignals, webhook } from "./Harness.ts"

const prom = "/api/v1/signals/prometheus"
const rrKind = ["kubemend.io/v1alpha1", "RemediationRequest"] as const

/** Polls `check` (which throws until satisfied) for up to 10 s. */
const eventually = (check: () => void) =>
  Effect.promise(async () => {
    for (let i = 0;; i++) {
      try {
        return check()
      } catch (e) {
        if (i >= 200) throw e
        await new Promise((r) => setTimeout(r, 50))
      }
    }
  })

describe("two signal-service replicas", () => {
  it.scopedLive(
    "a burst spread over both makes exactly one request; the loser of the create race folds into it; the counts add up",
    () =>
      Effect.gen(function* () {
        const { kube, sender } = yield* startKube
        const a = yield* startSignals(kube)
        const b = yield* startSignals(kube)
        const body = webhook([alert({ namespace: "shop", pod: "checkout-7d9f-abcde" })])
        // Creates take 2 s (long against this machine's scheduling delays): the first alert at each replica is a
        // create, so the two race for the same name.
        const removeLatency = kube.faults.addLatency(2000, { verb: "create", resource: "remediationrequests" })
        const [first, second] = yield* Effect.all([post(a.url + prom, body, sender), post(b.url + prom, body, sender)], { concurrency: 2 })
        removeLatency()
        expect([first.status, second.status].sort()).toEqual([201, 202])
        expect(second.body.remediationRequestRef).toEqual(first.body.remediationRequestRef)
        expect(kube.requests().filter((r) => r.verb === "create" && r.resource === "remediationrequests")).toHaveLength(2)

        const rest = yield* Effect.forEach(
          Array.from({ length: 198 }, (_, i) => (i % 2 === 0 ? a : b)),
          (svc) => post(svc.url + prom, body, sender),
          { concurrency: 20 }
        )
        expect(rest.every((r) => r.status === 202)).toBe(true)
        const rrs = kube.list(...rrKind, "kubemend-system")
        expect(rrs).toHaveLength(1)
        const name = rrs[0]!.metadata.name
        expect(name).toBe(`rr-${first.body.fingerprint.slice(0, 16)}-1`)
        expect(first.body.remediationRequestRef.name).toBe(name)
        // Both replicas wrote their share of the 199 duplicates; neither overwrote the other's.
        yield* eventually(() => expect((kube.get(...rrKind, name, "kubemend-system")!.status as any)?.deduplication?.occurrenceCount).toBe(200))
        const metrics = yield* Effect.forEach([a, b], (svc) => Effect.promise(() => fetch(svc.metricsUrl + "/metrics").then((r) => r.text())))
        const total = (pattern: RegExp) => metrics.reduce((n, text) => n + Number(pattern.exec(text)?.[1] ?? 0), 0)
        expect(total(/gateway_crds_created_total\{source_type="prometheus",status="success"\} (\d+)/)).toBe(1)
        expect(total(/gateway_signals_deduplicated_total\{signal_name="KubePodCrashLooping"\} (\d+)/)).toBe(199)
      }),
    { timeout: 60_000 }
  )

  it.scopedLive("after the request ended and the cooldown passed, both replicas agree on the next name: one new request", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const body = webhook([alert({ namespace: "shop", deployment: "checkout" })])
      // The first request came from a replica since gone; it ended ten minutes ago (past the 5 minute cooldown).
      const first = yield* Effect.scoped(Effect.flatMap(startSignals(kube), (svc) => post(svc.url + prom, body, sender)))
      expect(first.status).toBe(201)
      const rr = kube.get(...rrKind, first.body.remediationRequestRef.name, "kubemend-system")!
      kube.put({ ...rr, status: { ...(rr.status as object), overallPhase: "Completed", completedAt: new Date(Date.now() - 10 * 60_000).toISOString() } })
      const a = yield* startSignals(kube)
      const b = yield* startSignals(kube)
      const removeLatency = kube.faults.addLatency(300, { verb: "create", resource: "remediationrequests" })
      const answers = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b)),
        (svc) => post(svc.url + prom, body, sender),
        { concurrency: 20 }
      )
      removeLatency()
      expect(answers.filter((r) => r.status === 201)).toHaveLength(1)
      expect(answers.filter((r) => r.status === 202)).toHaveLength(19)
      const names = kube.list(...rrKind, "kubemend-system").map((r) => r.metadata.name).sort()
      const prefix = `rr-${first.body.fingerprint.slice(0, 16)}`
      expect(names).toEqual([`${prefix}-1`, `${prefix}-2`])
      expect(new Set(answers.map((r) => r.body.remediationRequestRef.name))).toEqual(new Set([`${prefix}-2`]))
    }), { timeout: 60_000 })
})
