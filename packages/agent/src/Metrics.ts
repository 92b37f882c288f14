/**
 * The agent's metrics (document 3 names), registered in the process registries of core `Metrics` (provided once in
 * main, so `/metrics` renders them).
 */
import { Effect } from "effect"
import type { BreakerState } from "@kubemend/core/CircuitBreaker"
import { Metrics } from "@kubemend/core/Metrics"

/** The agent's breaker gauges: 0 closed, 1 half-open, 2 open. */
export const breakerGauge: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 }

export class AgentMetrics extends Effect.Service<AgentMetrics>()("@kubemend/agent/AgentMetrics", {
  effect: Effect.map(Metrics, (m) => ({
    investigations: m.counter({
      name: "aiagent_api_investigations_total",
      help: "Investigations that ended, by final status",
      labelNames: ["status"] as const
    }),
    investigationDuration: m.histogram({
      name: "aiagent_api_investigations_duration_seconds",
      help: "Duration of investigations from start to end",
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1500]
    }),
    llmRequests: m.counter({
      name: "aiagent_api_llm_requests_total",
      help: "LLM requests, by outcome (success, error, rate_limited, circuit_open)",
      labelNames: ["status"] as const
    }),
    llmDuration: m.histogram({
      name: "aiagent_api_llm_request_duration_seconds",
      help: "Duration of LLM requests, retries included",
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120]
    }),
    llmTokens: m.counter({
      name: "aiagent_api_llm_tokens_total",
      help: "LLM tokens used, by type (prompt or completion)",
      labelNames: ["type"] as const
    }),
    llmBreaker: m.gauge({
      name: "aiagent_api_llm_circuit_breaker_state",
      help: "LLM circuit breaker: 0 closed, 1 half-open, 2 open"
    }),
    storageBreaker: m.gauge({
      name: "aiagent_api_ds_circuit_breaker_state",
      help: "Storage service circuit breaker: 0 closed, 1 half-open, 2 open"
    }),
    alignmentGrounding: m.counter({
      name: "svc_alignment_grounding_total",
      help: "Shadow agent step reviews, by result (aligned, suspicious, error)",
      labelNames: ["result"] as const
    }),
    alignmentDuration: m.histogram({
      name: "svc_alignment_grounding_duration_seconds",
      help: "Duration of one shadow agent step review",
      buckets: [0.05, 0.1, 0.5, 1, 2, 5, 10]
    }),
    alignmentBreaker: m.counter({
      name: "alignmentCircuitBreakerTotal",
      help: "Investigations stopped by the shadow agent in enforce mode"
    })
  }))
}) {}
