/**
 * The failure of an MCP tool call that its caller is told about: answered as a result with `isError: true` and this
 * message (already redacted), never as a JSON-RPC error. One definition for the gateway's bridge and the agent's
 * interactive server, which mean the same by it.
 */
import { Data } from "effect"

/** A failure the caller is told about; `timeout` counts as outcome timeout. */
export class ToolError extends Data.TaggedError("ToolError")<{
  readonly message: string
  readonly kind?: "failure" | "timeout"
  /** Short machine code for audit (`not_found`, `invalid_arguments`, `agent_unavailable` …). */
  readonly code?: string
}> {}
