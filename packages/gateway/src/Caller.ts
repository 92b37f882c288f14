/**
 * Who is calling, as the edge chain (Edge/Chain.ts) admitted them: what the MCP tools, the A2A agent and the routes
 * act on. Apart from the chain so that the MCP layer and the A2A agent can take it without depending on HTTP.
 */
import type { Redacted } from "effect"
import type { Principal } from "@kubemend/core/Auth"
import type { PrepaidToolCall } from "./Limits/RateLimits.ts"

/** An authenticated, console-admitted caller of one request. */
export interface Caller {
  readonly principal: Principal
  readonly clientIp: string
  /**
   * The route the request came in on (`/mcp`, `/a2a/invoke`, `/`, …), for audit events. Always set by the chain;
   * absent only for callers made up outside it (benchmarks, unit tests).
   */
  readonly endpoint?: string
  /** The bearer token as received: delegated to the agent, never logged. */
  readonly token: Redacted.Redacted<string>
  /** The tool-call token taken with this request's limits, when it is a single `tools/call` (`Edge.serveRead`). */
  readonly prepaidToolCall?: PrepaidToolCall
}
