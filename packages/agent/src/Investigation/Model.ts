/**
 * One model turn of an investigation: streamed so the session's subscribers see tokens as they come, counted
 * (requests, durations, tokens), and guarded by the LLM circuit breaker. Retries of 429/5xx happen inside the Llm
 * layer; what is left after them ends the investigation `failed` with a reason.
 */
import * as CircuitBreaker from "@kubemend/core/CircuitBreaker"
import type { DependencyUnavailable } from "@kubemend/core/Errors"
import { Clock, Duration, Effect, Ref, Stream } from "effect"
import { type ChatRequest, type ChatResponse, collect, Llm, type LlmError } from "@kubemend/core/Llm"
import { InvestigationFailed, type Session } from "../Sessions/Session.ts"
import { AgentMetrics, breakerGauge } from "../Metrics.ts"

const reasonOf = (e: LlmError | DependencyUnavailable): string => {
  switch (e._tag) {
    case "LlmRateLimited":
      return `LLM rate limit (HTTP 429) persisted after retries: ${e.message}`
    case "LlmUnavailable":
      return `LLM unavailable: ${e.message}`
    case "LlmBadRequest":
      return `LLM rejected the request: ${e.message}`
    case "LlmConfigError":
      return `LLM configuration error (${e.key}): ${e.message}`
    case "DependencyUnavailable":
      return "LLM circuit breaker is open after repeated failures"
  }
}

const statusOf = (e: LlmError | DependencyUnavailable) =>
  e._tag === "LlmRateLimited" ? "rate_limited" : e._tag === "DependencyUnavailable" ? "circuit_open" : "error"

export class Model extends Effect.Service<Model>()("@kubemend/agent/Model", {
  effect: Effect.gen(function* () {
    const llm = yield* Llm
    const metrics = yield* AgentMetrics
    const breaker = yield* CircuitBreaker.make({
      name: "llm",
      failureThreshold: 5,
      resetTimeout: Duration.seconds(30),
      unavailableDetail: "LLM circuit breaker is open after repeated failures",
      onState: (s) => Effect.sync(() => metrics.llmBreaker.set(breakerGauge[s]))
    })

    const complete = Effect.fn("Model.complete")(function* (session: Session, turn: number, request: ChatRequest) {
      const started = yield* Clock.currentTimeMillis
      const deltas = llm.stream(request).pipe(
        Stream.tap((d) =>
          d._tag === "TextDelta"
            ? session.log.publish("token_delta", { turn, text: d.text }, { ephemeral: true })
            : d._tag === "ToolCallStart"
            ? session.log.publish("tool_call_start", { turn, id: d.id, name: d.name })
            : Effect.void
        )
      )
      const response: ChatResponse = yield* breaker.run(collect(deltas), (e) => e._tag === "LlmUnavailable" || e._tag === "LlmRateLimited").pipe(
        Effect.tapBoth({
          onFailure: (e) => Effect.sync(() => metrics.llmRequests.inc({ status: statusOf(e) })),
          onSuccess: () => Effect.sync(() => metrics.llmRequests.inc({ status: "success" }))
        }),
        Effect.ensuring(
          Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => metrics.llmDuration.observe((now - started) / 1000)))
        ),
        Effect.mapError((e) => new InvestigationFailed({ reason: reasonOf(e) }))
      )
      metrics.llmTokens.inc({ type: "prompt" }, response.usage.promptTokens)
      metrics.llmTokens.inc({ type: "completion" }, response.usage.completionTokens)
      yield* Ref.update(session.state, (s) => ({
        ...s,
        promptTokens: s.promptTokens + response.usage.promptTokens,
        completionTokens: s.completionTokens + response.usage.completionTokens
      }))
      if (response.text.trim() !== "") yield* session.log.publish("reasoning_delta", { turn, text: response.text })
      return response
    })

    return { complete, isOpen: Effect.map(breaker.state, (s) => s === "open") } as const
  })
}) {}
