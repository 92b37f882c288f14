/**
 * A cancel is never overwritten: for every phase an RR moves to on its way to Completed (with an approval on the
 * way), a cancel is written between the orchestrator's read of the RR and its status write of that phase. The
 * transition's write carries the resourceVersion it read, so it conflicts, reads again, and finds the RR cancelled.
 */
import { describe, expect, it } from "@effect/vitest"
import { K8s, type K8sService, type KubeObject } from "@kubemend/core/K8s"
import { K8sMemory } from "@kubemend/core/K8s/Memory"
import { Context, Duration, Effect, Layer, Option, Ref, TestClock } from "effect"
import { apiGroup, harness, type Harness, managedNamespace, namespace, rr, workload } from "./LifecycleHarness.ts"

interface Race {
  /** The phase whose write the cancel races; none: no cancel. */
  readonly before: Option.Option<string>
  /** Every phase the orchestrator wrote to the RR, in order. */
  readonly written: Array<string>
  fired: boolean
}

/** The in-memory K8s, with the cancel injected right before the RR's status write of `race.before`. */
const racingBackend = (race: Race, seed: ReadonlyArray<KubeObject>) =>
  Effect.gen(function* () {
    const memory = yield* Layer.build(K8sMemory.layer({ namespace, apiGroup, seed: [managedNamespace(), ...seed] }))
    const control = Context.get(memory, K8sMemory)
    const inner = Context.get(memory, K8s)
    const k8s: K8sService = {
      ...inner,
      patchCrStatus: (plural, name, status, options) =>
        Effect.suspend(() => {
          const to = status["overallPhase"]
          if (plural !== "remediationrequests" || typeof to !== "string") return inner.patchCrStatus(plural, name, status, options)
          const cancel = !race.fired && Option.contains(race.before, to)
          if (cancel) race.fired = true
          const write = inner.patchCrStatus(plural, name, status, options).pipe(Effect.tap(() => Effect.sync(() => race.written.push(to))))
          return cancel
            ? Effect.zipRight(inner.patchCrStatus(plural, name, { overallPhase: "Cancelled", message: "cancelled by alice" }).pipe(Effect.orDie), write)
            : write
        })
    }
    return {
      k8s: Layer.succeed(K8s, k8s),
      writes: Effect.map(Ref.get(control.actions), (as) => as.filter((a) => a.verb !== "get" && a.verb !== "list" && a.verb !== "watch").length),
      namespaceLabels: (name: string) =>
        Effect.map(control.objects("v1", "Namespace"), (ns) => Option.fromNullable(ns.find((n) => n.metadata.name === name)?.metadata.labels)),
      seed: (objects: ReadonlyArray<KubeObject>) => Effect.asVoid(control.seed(objects))
    }
  })

/** Takes rr-a as far as it goes: approves when asked, lets the execution and verification run out. */
const drive = (h: Harness) =>
  Effect.gen(function* () {
    for (let step = 0; step < 8; step++) {
      yield* h.settle
      const phase = (yield* h.rr("rr-a")).status?.overallPhase
      if (phase === "AwaitingApproval") {
        yield* h.k8s.patchCrStatus("remediationapprovalrequests", "rar-rr-a", { decision: "Approved", decidedBy: "alice" })
      }
      yield* TestClock.adjust(Duration.minutes(1))
    }
    return (yield* h.rr("rr-a")).status?.overallPhase as string
  })

const run = (before: Option.Option<string>) =>
  Effect.gen(function* () {
    const race: Race = { before, written: [], fired: false }
    const seed = [rr("rr-a", { target: "recommendations" }), ...workload("recommendations")]
    const h = yield* harness({ config: { stabilizationWindow: Duration.seconds(30) }, backend: yield* racingBackend(race, seed) })
    // Below the auto-approval threshold: the path goes through AwaitingApproval and Approved.
    h.agent.script = () => ({ result: { confidence: 0.6 } })
    const final = yield* drive(h)
    return { final, race }
  })

describe("resourceVersion-guarded transitions", () => {
  it.scoped("a cancel between the orchestrator's read and its write of any phase stays cancelled", () =>
    Effect.gen(function* () {
      const plain = yield* run(Option.none())
      expect(plain.final).toBe("Completed")
      const phases = [...new Set(plain.race.written)]
      expect(phases).toEqual(expect.arrayContaining(["AwaitingApproval", "Completed"]))
      const lost: Array<string> = []
      for (const phase of phases) {
        const { final, race } = yield* run(Option.some(phase))
        expect(race.fired, phase).toBe(true)
        if (final !== "Cancelled") lost.push(`${phase}: ended ${final}`)
      }
      expect(lost).toEqual([])
    }), { timeout: 120_000 })
})
