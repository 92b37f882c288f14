/** The LLM circuit breaker as the agent wires core's breaker: the failure reason, the request status, the gauge. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Ref, Stream, TestClock } from "effect"
import { Llm, LlmUnavailable } from "@kubemend/core/Llm"
import { Metrics } from "@kubemend/core/Metrics"
import { Model } from "../src/Investigation/Model.ts"
import { MetricsLive } from "../src/Service.ts"
import { makeEventLog, type Session, type SessionState } from "../src/Sessions/Session.ts"

const run = Effect.gen(function* () {
  const up = yield* Ref.make(false)
  const llm = Layer.succeed(Llm, {
    chat: () => Effect.die("unused"),
    route: () => Effect.die("unused"),
    stream: () =>
      Stream.unwrap(Effect.map(Ref.get(up), (ok) =>
        ok
          ? Stream.make({ _tag: "Finish" as const, finishReason: "stop" as const, usage: { promptTokens: 1, completionTokens: 1 } })
          : Stream.fail(new LlmUnavailable({ message: "connection refused" }))))
  })
  const ctx = yield* Layer.build(Model.Default.pipe(Layer.provideMerge(MetricsLive), Layer.provide(llm)))
  const session: Session = {
    id: "s-1",
    request: {} as Session["request"],
    createdAt: 0,
    interactive: false,
    state: yield* Ref.make<SessionState>({ status: "investigating", progress: "", turn: 0, phase: "rca", promptTokens: 0, completionTokens: 0 }),
    log: yield* makeEventLog(100, 100)
  }
  const model = yield* Effect.provide(Model, ctx)
  const metrics = yield* Effect.provide(Metrics, ctx)
  const complete = model.complete(session, 1, { messages: [] })
  const turn = Effect.flip(complete)
  const series = (name: string) => Effect.map(metrics.render(undefined), ({ body }) => body.split("\n").filter((l) => l.startsWith(name)))
  return { up, model, complete, turn, series }
})

describe("LLM circuit breaker", () => {
  it.scoped("five outages open it: the next turn fails at once as circuit_open; after 30 s one trial closes it", () =>
    Effect.gen(function* () {
      const { complete, model, series, turn, up } = yield* run
      for (let i = 0; i < 5; i++) expect((yield* turn).reason).toBe("LLM unavailable: connection refused")
      expect(yield* model.isOpen).toBe(true)
      expect(yield* series("aiagent_api_llm_circuit_breaker_state")).toEqual(["aiagent_api_llm_circuit_breaker_state 2"])
      yield* Ref.set(up, true)
      expect((yield* turn).reason).toBe("LLM circuit breaker is open after repeated failures")
      expect(yield* series("aiagent_api_llm_requests_total{status=\"circuit_open\"}")).toHaveLength(1)
      yield* TestClock.adjust(Duration.seconds(30))
      yield* complete
      expect(yield* model.isOpen).toBe(false)
      expect(yield* series("aiagent_api_llm_circuit_breaker_state")).toEqual(["aiagent_api_llm_circuit_breaker_state 0"])
    }))
})
