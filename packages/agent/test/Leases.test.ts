import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Stream, TestClock } from "effect"
import { K8s } from "@kubemend/core/K8s"
import { K8sMemory } from "@kubemend/core/K8s/Memory"
import { Llm } from "@kubemend/core/Llm"
import { AgentConfig } from "../src/AgentConfig.ts"
import { MetricsLive, SessionsLive } from "../src/Service.ts"
import { AlignmentLlm } from "../src/Investigation/Alignment.ts"
import { Audit } from "@kubemend/core/Audit"
import { InteractiveLive } from "../src/Interactive/McpEndpoint.ts"
import { Investigations } from "../src/Interactive/Investigations.ts"
import { namespace, StorageTest } from "./Harness.ts"

/** A model that always answers at once, so everything here runs on the TestClock. */
const InstantLlm = Layer.succeed(Llm, {
  chat: () => Effect.succeed({ text: "noted", toolCalls: [], finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 } }),
  stream: () =>
    Stream.make(
      { _tag: "TextDelta", text: "noted" } as const,
      { _tag: "Finish", finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 } } as const
    ),
  route: () => Effect.succeed({ provider: "openai", model: "instant" })
})

const orphan = {
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name: "svc-interactive-orphan", namespace },
  spec: { holderIdentity: "gone-user", leaseDurationSeconds: 60, renewTime: "1969-12-31T23:00:00.000000Z" }
}

const UnitLive = InteractiveLive.pipe(
  Layer.provideMerge(SessionsLive),
  Layer.provide(StorageTest),
  Layer.provide(AlignmentLlm.fromMain),
  Layer.provide(InstantLlm),
  Layer.provideMerge(K8sMemory.layer({ namespace, seed: [orphan] })),
  Layer.provide(Audit.layerRecording),
  Layer.provide(AgentConfig.layer({
    interactive: { ...AgentConfig.defaults.interactive, enabled: true, leaseTTL: Duration.seconds(30), inactivityTimeout: Duration.minutes(2) }
  })),
  Layer.provide(MetricsLive)
)

const alice = { user: "alice", groups: [], via: "gateway" } as const
const bob = { user: "bob", groups: [], via: "gateway" } as const

describe("interactive leases", () => {
  it.scoped("orphaned leases are reclaimed at start; a lapsed lease lets another user start, abandoning the first", () =>
    Effect.gen(function* () {
      const k8s = yield* K8s
      const investigations = yield* Investigations
      assert.deepStrictEqual((yield* k8s.listLeases("svc-interactive-")).map((l) => l.name), [])

      assert.strictEqual((yield* investigations.start("rr-x", alice))["status"], "active")
      yield* TestClock.adjust("1 minute")
      // alice is active: her lease is renewed, so bob is told who drives the session.
      assert.strictEqual((yield* investigations.start("rr-x", bob))["status"], "session_active")
      assert.strictEqual((yield* investigations.send("rr-x", alice, "anything new?"))["status"], "active")

      // alice goes quiet: renewal stops after the inactivity timeout and the lease runs out.
      yield* TestClock.adjust("3 minutes")
      assert.strictEqual((yield* investigations.status("rr-x"))["status"], "disconnected")
      const taken = yield* investigations.start("rr-x", bob)
      assert.strictEqual(taken["status"], "active")
      assert.strictEqual(taken["holder"], "bob")
      assert.strictEqual((yield* k8s.listLeases("svc-interactive-rr-x"))[0]?.holder, "bob")
      const locked = yield* Effect.exit(investigations.send("rr-x", alice, "hello?"))
      assert.isTrue(Exit.isFailure(locked))
    }).pipe(Effect.provide(UnitLive)))
})
