/**
 * The `tools/call` pipeline: per-tool SAR (`use` on `tools/<name>`; a deny or an error answers "permission
 * denied" and the tool never runs) -> tool calls per user per minute (the verdict of the token taken with the
 * request's own limits, when the edge took one: `RateLimits.withToolCall`) -> argument decoding -> the tool under its
 * deadline (and, on a draining gateway, its grace) -> the `tool.executed` audit event and metrics. Every outcome
 * is a tool result, never a JSON-RPC error: failures are `isError: true` with a redacted message, successes JSON
 * text within the output cap. The agent client's failures (`AgentCallFailed`) become tool errors here, at the MCP
 * boundary, so the client knows nothing of tools.
 */
import { Cause, Clock, Duration, Effect, Either, Exit, ParseResult, Schema } from "effect"
import { bounded } from "@kubemend/core/Drain"
import { Sar } from "@kubemend/core/Sar"
import { ToolError } from "@kubemend/core/ToolError"
import type { AgentCallFailed, AgentLink } from "../AgentSessionsClient.ts"
import { RateLimits } from "../Limits/RateLimits.ts"
import { GatewayAudit } from "../GatewayAudit.ts"
import { GatewayConfig, toolDeadline } from "../GatewayConfig.ts"
import { GatewayMetrics, type ToolOutcome } from "../GatewayMetrics.ts"
import { redactMessage } from "../Redact.ts"
import { renderResult } from "./Output.ts"
import type { ToolContext, ToolDef } from "./Tool.ts"

export interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly isError?: boolean
  readonly [key: string]: unknown
}

const text = (t: string, isError: boolean): ToolResult =>
  isError ? { content: [{ type: "text", text: t }], isError: true } : { content: [{ type: "text", text: t }] }

export const deniedMessage = (tool: string) => `permission denied: role lacks access to ${tool}`
export const rateLimitedMessage = "rate limit exceeded — too many tool calls per minute, please retry later"
export const shutdownMessage = "the gateway is shutting down and stopped this call before it finished; call it again"

/** A call as the pipeline gets it: the agent as its client links it, before its failures are told as tool errors. */
export interface CallContext extends Omit<ToolContext, "agent"> {
  readonly agent: AgentLink
}

/** How a failed call to the agent reads as the tool's failure: the client's message, an audit code per reason. */
const agentFailure = {
  unavailable: { code: "agent_unavailable" },
  refused: { code: "permission_denied" },
  timeout: { kind: "timeout", code: "timeout" },
  rejected: { code: "agent_error" }
} as const satisfies Record<AgentCallFailed["reason"], { readonly kind?: "timeout"; readonly code: string }>

const toolErrorOf = (e: AgentCallFailed) => new ToolError({ message: e.message, ...agentFailure[e.reason] })

const argumentsOf = (args: unknown) => (args === undefined || args === null ? {} : args)

/** The RR (or RAR) a call is about, for the audit correlation id. */
const correlationOf = (args: unknown): string | undefined => {
  const a = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {}
  for (const k of ["rr_id", "rr_name", "rar_name", "rar_id", "name"]) if (typeof a[k] === "string" && a[k] !== "") return a[k] as string
  return undefined
}

export class ToolCalls extends Effect.Service<ToolCalls>()("@kubemend/gateway/ToolCalls", {
  effect: Effect.gen(function* () {
    const sar = yield* Sar
    const limits = yield* RateLimits
    const config = yield* GatewayConfig
    const audit = yield* GatewayAudit
    const metrics = yield* GatewayMetrics

    const call = Effect.fn("ToolCalls.call")(function* (def: ToolDef, rawArgs: unknown, ctx: CallContext) {
      const start = yield* Clock.currentTimeMillis
      const args = argumentsOf(rawArgs)
      const user = ctx.caller.principal.user
      const finish = (outcome: ToolOutcome, body: string, isError: boolean, code?: string) =>
        Effect.gen(function* () {
          const durationMs = (yield* Clock.currentTimeMillis) - start
          yield* metrics.toolCall(ctx.tool, outcome, durationMs / 1000)
          const correlationId = correlationOf(args) ?? ctx.sessionId
          yield* audit.emit({
            type: "tool.executed",
            outcome: outcome === "success" ? "success" : "failure",
            userId: user,
            clientIp: ctx.caller.clientIp,
            durationMs,
            ...(correlationId === undefined ? {} : { correlationId }),
            data: {
              session_id: ctx.sessionId ?? "",
              tool_name: ctx.tool,
              execution_duration_ms: Math.round(durationMs),
              tool_outcome: outcome,
              ...(code === undefined ? {} : { error_code: code })
            }
          })
          return text(body, isError)
        })

      if (!(yield* sar.check(ctx.caller.principal, "tools", ctx.tool))) {
        yield* audit.emit({
          type: "auth.access_denied",
          outcome: "failure",
          userId: user,
          clientIp: ctx.caller.clientIp,
          data: {
            tool_name: ctx.tool,
            user_role: ctx.caller.principal.groups.join(","),
            ...(ctx.caller.endpoint === undefined ? {} : { endpoint: ctx.caller.endpoint })
          }
        })
        return yield* finish("denied", deniedMessage(ctx.tool), true, "permission_denied")
      }
      if (Either.isLeft(yield* Effect.either(limits.toolCall(user, ctx.caller.prepaidToolCall)))) {
        return yield* finish("denied", rateLimitedMessage, true, "rate_limited")
      }
      const decoded = Schema.decodeUnknownEither(def.input, { onExcessProperty: "error", errors: "all" })(args)
      if (Either.isLeft(decoded)) {
        // One issue per argument: an optional one also fails its `undefined` branch ("Expected undefined, actual
        // <the whole value>"), which says nothing the first does not and can echo kilobytes back.
        const firstPerPath = new Map<string, string>()
        for (const i of ParseResult.ArrayFormatter.formatErrorSync(decoded.left)) {
          const path = i.path.join(".")
          if (!firstPerPath.has(path)) firstPerPath.set(path, path === "" ? i.message : `${path}: ${i.message}`)
        }
        const issues = [...firstPerPath.values()].slice(0, 5)
        return yield* finish("failure", redactMessage(`invalid arguments: ${issues.join("; ")}`), true, "invalid_arguments")
      }
      const deadline = toolDeadline(config, def.name, def.timeout)
      // The tool's deadline reaches the agent client, so a per-tool timeout is not cut at the global one.
      const agent = {
        follow: ctx.agent.follow,
        call: (t, a, u, timeout = deadline) => Effect.mapError(ctx.agent.call(t, a, u, timeout), toolErrorOf)
      } satisfies ToolContext["agent"]
      const exit = yield* def.run(decoded.right, { ...ctx, agent }).pipe(
        // A draining gateway gives the call its grace, then stops it and answers for it, so the answer still goes
        // out in time.
        bounded({
          shutdown: ctx.shutdown,
          duration: deadline,
          onTimeout: () => new ToolError({ message: `${ctx.tool} timed out after ${Duration.format(deadline)}`, kind: "timeout", code: "timeout" }),
          onShutdown: () => new ToolError({ message: shutdownMessage, code: "shutdown" })
        }),
        Effect.exit,
        // The caller cancelled (or its connection went away): still one audit record for the call.
        Effect.onInterrupt(() => finish("failure", "cancelled", true, "cancelled"))
      )
      if (Exit.isSuccess(exit)) return yield* finish("success", renderResult(exit.value, config.maxToolOutputBytes, def.listField), false)
      const failure = Cause.failureOption(exit.cause)
      if (failure._tag === "Some") {
        const e = failure.value
        return yield* finish(e.kind === "timeout" ? "timeout" : "failure", redactMessage(e.message), true, e.code)
      }
      if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
      yield* Effect.logError("tool failed unexpectedly", exit.cause).pipe(Effect.annotateLogs({ tool: ctx.tool }))
      return yield* finish("failure", "internal error", true, "internal")
    })

    return { call } as const
  })
}) {}
