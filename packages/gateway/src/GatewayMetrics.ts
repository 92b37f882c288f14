/**
 * The gateway's metrics, all prefixed `af_`: HTTP requests by endpoint/method/status, tool calls by tool and
 * outcome, SAR cache hits/misses, rate-limit rejections, open MCP sessions, circuit breaker states, shared state (Valkey) degraded.
 */
import { Effect } from "effect"
import { Metrics } from "@kubemend/core/Metrics"
import { Sar } from "@kubemend/core/Sar"

export type ToolOutcome = "success" | "failure" | "timeout" | "denied"

/** Gateway breaker states as document 3 numbers them: 0 closed, 1 half-open, 2 open. */
export const breakerStateValue = { closed: 0, half_open: 1, open: 2 } as const

export class GatewayMetrics extends Effect.Service<GatewayMetrics>()("@kubemend/gateway/GatewayMetrics", {
  effect: Effect.gen(function* () {
    const metrics = yield* Metrics
    const sar = yield* Sar
    const requests = metrics.counter({
      name: "af_http_requests_total",
      help: "HTTP requests by endpoint, method and status",
      labelNames: ["endpoint", "method", "status"] as const
    })
    const requestDuration = metrics.histogram({
      name: "af_http_request_duration_seconds",
      help: "HTTP request duration by endpoint, method and status",
      labelNames: ["endpoint", "method", "status"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    })
    const toolCalls = metrics.counter({
      name: "af_tool_calls_total",
      help: "MCP tool calls by tool and outcome",
      labelNames: ["tool", "outcome"] as const
    })
    const toolDuration = metrics.histogram({
      name: "af_tool_call_duration_seconds",
      help: "MCP tool call duration by tool and outcome",
      labelNames: ["tool", "outcome"] as const,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 900]
    })
    const rateLimited = metrics.counter({
      name: "af_rate_limit_rejections_total",
      help: "Requests and tool calls refused by a rate limit, by scope (ip, user, tool)",
      labelNames: ["scope"] as const
    })
    const sessions = metrics.gauge({ name: "af_mcp_sessions_open", help: "Open MCP sessions" })
    const sharedDegraded = metrics.gauge({
      name: "af_gateway_shared_state_degraded",
      help: "1 while the configured Valkey is unreachable and this replica counts sessions and rate limits on its own, else 0"
    })
    const breakers = metrics.gauge({
      name: "af_circuit_breaker_state",
      help: "Circuit breaker state by dependency: 0 closed, 1 half-open, 2 open",
      labelNames: ["name"] as const
    })
    // The Sar service keeps the counters; these read them at scrape time.
    const sarStats = () => Effect.runSync(sar.stats)
    metrics.gauge({
      name: "af_sar_cache_hits",
      help: "SubjectAccessReview cache hits since start",
      collect() {
        this.set(sarStats().hits)
      }
    })
    metrics.gauge({
      name: "af_sar_cache_misses",
      help: "SubjectAccessReview cache misses (reviews sent) since start",
      collect() {
        this.set(sarStats().misses)
      }
    })

    return {
      request: (endpoint: string, method: string, status: number, seconds: number) =>
        Effect.sync(() => {
          const labels = { endpoint, method, status: String(status) }
          requests.inc(labels)
          requestDuration.observe(labels, seconds)
        }),
      toolCall: (tool: string, outcome: ToolOutcome, seconds: number) =>
        Effect.sync(() => {
          toolCalls.inc({ tool, outcome })
          toolDuration.observe({ tool, outcome }, seconds)
        }),
      rateLimited: (scope: "ip" | "user" | "tool") => Effect.sync(() => rateLimited.inc({ scope })),
      sessionsOpen: (n: number) => Effect.sync(() => sessions.set(n)),
      sharedStateDegraded: (degraded: boolean) => Effect.sync(() => sharedDegraded.set(degraded ? 1 : 0)),
      breakerState: (name: string, state: keyof typeof breakerStateValue) => Effect.sync(() => breakers.set({ name }, breakerStateValue[state]))
    } as const
  })
}) {}
