/**
 * How a tool is declared: a flat Effect Schema for its arguments (turned into the JSON Schema the model sees) and a
 * handler. A handler never fails: what went wrong is a result the model reads (`ok: false`).
 */
import { Effect, JSONSchema, ParseResult, Schema } from "effect"
import type { ToolDefinition } from "@kubemend/core/Llm"
import type { Escalation, RunState } from "./Run.ts"

export interface ToolResult {
  readonly ok: boolean
  /** JSON-serialisable value or text; serialised and sanitised before the model reads it. */
  readonly content: unknown
  /** Stop the run and hand it to a human. */
  readonly escalate?: Escalation
}

export interface Tool {
  readonly definition: ToolDefinition
  readonly run: (args: Record<string, unknown>, run: RunState) => Effect.Effect<ToolResult>
}

export const ok = (content: unknown): ToolResult => ({ ok: true, content })
export const failed = (message: string): ToolResult => ({ ok: false, content: { error: message } })

/** JSON Schema of a flat struct without `$schema`/`$defs` noise. */
const parametersOf = (schema: Schema.Schema.AnyNoContext): Record<string, unknown> => {
  const { $schema: _s, ...rest } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  return rest
}

export const tool = <A, I extends Record<string, unknown>>(
  name: string,
  description: string,
  args: Schema.Schema<A, I, never>,
  handler: (args: A, run: RunState) => Effect.Effect<ToolResult>
): Tool => {
  const decode = Schema.decodeUnknownEither(args, { errors: "all", onExcessProperty: "error" })
  return {
    definition: { name, description, parameters: parametersOf(args) },
    run: (raw, state) => {
      const decoded = decode(raw)
      return decoded._tag === "Left"
        ? Effect.succeed(failed(`invalid arguments for ${name}: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`))
        : handler(decoded.right, state)
    }
  }
}

/** An optional string argument, flat in JSON Schema. */
export const opt = <S extends Schema.Schema.All>(s: S) => Schema.optionalWith(s, { exact: true })
