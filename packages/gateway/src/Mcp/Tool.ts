/**
 * What a tool is: a name (without the prefix), a description, a flat input Schema (its JSON Schema is what
 * `tools/list` shows), and a handler that answers a JSON value or a `ToolError` (core) whose message the caller may read.
 * Handlers never see unauthenticated or unauthorized calls: the call pipeline (Call.ts) runs first.
 */
import type { Duration, Effect, Schema } from "effect"
import type { Shutdown } from "@kubemend/core/Drain"
import type { ToolError } from "@kubemend/core/ToolError"
import type { AgentLink } from "../AgentSessionsClient.ts"
import type { Caller } from "../Caller.ts"

/**
 * The investigation agent as a tool sees it: the agent client's link (AgentSessionsClient.ts) with its failures already told
 * as tool errors (the call pipeline translates them, Call.ts).
 */
export interface ToolAgent {
  readonly call: (...args: Parameters<AgentLink["call"]>) => Effect.Effect<unknown, ToolError>
  readonly follow: AgentLink["follow"]
}

export interface ToolContext {
  readonly caller: Caller
  /** The full tool name as called (`svc_watch`). */
  readonly tool: string
  /** The MCP session id, when the call came through a session. */
  readonly sessionId: string | undefined
  /** Sends an MCP `notifications/message` to the caller's session (live events of background work). */
  readonly notify: (data: unknown) => Effect.Effect<void>
  /**
   * Reports progress of this call (`notifications/progress` when the request carried a `progressToken`; nothing
   * otherwise). Long tools report what they see (a phase change); the transport adds a heartbeat while they wait.
   */
  readonly progress?: (message: string) => Effect.Effect<void>
  /** This session's link to the investigation agent (connected on first use, as the caller). */
  readonly agent: ToolAgent
  /**
   * The gateway's drain, for calls that came over HTTP: once its grace is over the call ends with a tool error. Tools
   * that could wait longer than any grace (`svc_watch`) end themselves when draining starts, with what they have.
   */
  readonly shutdown?: Shutdown
}

export interface ToolDef<A = unknown> {
  /** Without the prefix: `list_remediations`. */
  readonly name: string
  readonly description: string
  /** Flat object schema (no refinements that produce `$ref`s). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any encoded form: tools differ in theirs
  readonly input: Schema.Schema<A, any, never>
  /** Hidden when interactive investigations are disabled. */
  readonly sessionDependent?: boolean
  /** The array field a list result trims from its tail when the output cap is reached. */
  readonly listField?: string
  /** The tool's own deadline instead of the global one (config overrides still win). */
  readonly timeout?: Duration.Duration
  readonly run: (input: A, ctx: ToolContext) => Effect.Effect<unknown, ToolError>
}

/** Keeps the input type of each definition while collecting them in one list. */
export const defineTool = <A>(def: ToolDef<A>): ToolDef<unknown> => def as unknown as ToolDef<unknown>

/** The 11 tools that need interactive investigations (spec document 1). */
export const sessionDependentTools: ReadonlySet<string> = new Set([
  "investigate",
  "discover_workflows",
  "select_workflow",
  "present_decision",
  "message",
  "complete",
  "complete_no_action",
  "cancel",
  "status",
  "reconnect",
  "await_session"
])
