/**
 * `svc_present_decision` (local): hands a decision point with its options to the caller's MCP session as a
 * `notifications/message` (logger `decision`), so a client UI can render the choices; answers what it presented.
 */
import { Effect, Schema } from "effect"
import { defineTool } from "../Mcp/Tool.ts"
import { optional, Text } from "./Common.ts"

const Target = Schema.Struct({
  api_version: optional(Text(253)),
  kind: Text(63),
  name: Text(253),
  namespace: Text(63)
})

export const presentTools = Effect.succeed([
  defineTool({
    name: "present_decision",
    description: "Present a decision point requiring user input: a summary and the workflow options to choose from.",
    input: Schema.Struct({
      session_id: Text(253),
      summary: Text(8192),
      rca: optional(Schema.Struct({
        severity: Text(32),
        confidence: Schema.Number,
        causal_chain: optional(Schema.Array(Text(1024))),
        target: Text(512),
        tool_calls_count: optional(Schema.Number),
        llm_turns: optional(Schema.Number)
      })),
      options: Schema.Array(Schema.Struct({
        workflow_id: Text(253),
        name: Text(253),
        description: Text(4096),
        risk: optional(Text(64)),
        recommended: optional(Schema.Boolean),
        parameters: optional(Schema.Record({ key: Schema.String, value: Schema.String })),
        ruled_out_reason: optional(Text(1024))
      })).pipe(Schema.maxItems(50)),
      searched_target: optional(Target),
      signal_target: optional(Target)
    }),
    sessionDependent: true,
    run: (input, ctx) =>
      Effect.as(
        ctx.notify({ type: "decision", ...input }),
        {
          presented: true,
          message: `presented ${input.options.length} option${input.options.length === 1 ? "" : "s"} for session ${input.session_id}`
        }
      )
  })
])
