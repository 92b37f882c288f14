import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema, TestClock } from "effect"
import { IncidentRequest } from "@kubemend/core/domain/Incident"
import { AgentConfig } from "../src/AgentConfig.ts"
import { MetricsLive } from "../src/Service.ts"
import { Investigator } from "../src/Investigation/Investigator.ts"
import { Sessions } from "../src/Sessions.ts"
import { incident } from "./Harness.ts"

const request = Schema.decodeUnknownSync(IncidentRequest)(incident("Clocked"))

/** An investigation that never finishes by itself (a model that never answers). */
const StuckInvestigator = Layer.succeed(
  Investigator,
  new Investigator({ investigate: () => Effect.never, report: () => Effect.void })
)

const SessionsTest = Sessions.Default.pipe(
  Layer.provide(StuckInvestigator),
  Layer.provide(AgentConfig.layer()),
  Layer.provide(MetricsLive)
)

describe("Sessions", () => {
  it.scoped("the 25-minute wall-clock limit ends a run failed with a reason", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const id = yield* sessions.submit(request)
      yield* TestClock.adjust("24 minutes")
      assert.strictEqual((yield* sessions.status(id)).status, "investigating")
      yield* TestClock.adjust("2 minutes")
      const status = yield* sessions.status(id)
      assert.strictEqual(status.status, "failed")
      assert.match(status.error ?? "", /25m wall-clock limit/)
      const result = yield* sessions.result(id)
      assert.strictEqual(result.investigation_outcome, "failed")
    }).pipe(Effect.provide(SessionsTest)))

  it.scoped("finished sessions are garbage-collected after the session TTL", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const id = yield* sessions.submit(request)
      yield* sessions.cancel(id)
      yield* TestClock.adjust("29 minutes")
      assert.strictEqual((yield* sessions.status(id)).status, "cancelled")
      yield* TestClock.adjust("2 minutes")
      const gone = yield* Effect.exit(sessions.status(id))
      assert.isTrue(Exit.isFailure(gone))
    }).pipe(Effect.provide(SessionsTest)))

  it.scoped("an interactive request waits pending for its start, and is failed if it never comes", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const id = yield* sessions.submit({ ...request, interactive: true })
      assert.strictEqual((yield* sessions.status(id)).status, "pending")
      yield* TestClock.adjust("31 minutes")
      const status = yield* sessions.status(id)
      assert.strictEqual(status.status, "failed")
      assert.match(status.error ?? "", /never started/)
    }).pipe(Effect.provide(SessionsTest)))
})
