/**
 * How the agent's pieces fit: the investigation services, the sessions, the API server with its drain, the
 * health and metrics listeners with the readiness checks. `main.ts` adds the live dependencies; tests add fakes
 * (scripted LLM, in-memory cluster, static catalog, recording audit).
 */
import { Layer } from "effect"
import { Drain } from "@kubemend/core/Drain"
import { Metrics } from "@kubemend/core/Metrics"
import { ApiServerLive, DrainOnShutdown, OpsServersLive, Readiness } from "@kubemend/core/Servers"
import { serve } from "./Api.ts"
import { Alignment } from "./Investigation/Alignment.ts"
import * as Catalog from "./Investigation/Catalog.ts"
import { Investigator } from "./Investigation/Investigator.ts"
import { Loop } from "./Investigation/Loop.ts"
import { Model } from "./Investigation/Model.ts"
import { Summarizer } from "./Investigation/Summarizer.ts"
import { Tools } from "./Investigation/Tools.ts"
import { AgentMetrics } from "./Metrics.ts"
import { ReadinessChecksLive } from "./Readiness.ts"
import { Sessions } from "./Sessions.ts"
import { InteractiveLive, McpRouteLive } from "./Interactive/McpEndpoint.ts"

/** Investigations and sessions; needs AgentConfig, Llm, AlignmentLlm, K8s, Storage, Audit, AgentMetrics. */
export const SessionsLive = Sessions.Default.pipe(
  Layer.provideMerge(Investigator.Default),
  Layer.provideMerge(Loop.Default),
  Layer.provideMerge(Layer.mergeAll(Tools.Default.pipe(Layer.provide(Summarizer.Default)), Model.Default, Alignment.Default)),
  Layer.provideMerge(Catalog.layer)
)

/** One prom-client registry for the process, with the agent's metrics in it. */
export const MetricsLive = AgentMetrics.Default.pipe(Layer.provideMerge(Metrics.Default))

/**
 * The API listener (REST + MCP) with the drain on top, health and metrics listeners, readiness checks. The drain's
 * finalizer runs before the listener closes.
 */
export const ServerLive = DrainOnShutdown.pipe(
  Layer.provideMerge(serve(McpRouteLive)),
  Layer.provideMerge(ApiServerLive),
  Layer.provideMerge(OpsServersLive),
  Layer.provideMerge(ReadinessChecksLive),
  Layer.provideMerge(InteractiveLive),
  Layer.provideMerge(SessionsLive),
  Layer.provideMerge(Layer.mergeAll(Drain.Default, Readiness.Default))
)
