/**
 * The gateway as an MCP client of the investigation agent's interactive sessions (`<agent>/api/v1/mcp`, its
 * `<prefix>_investigate`, `<prefix>_select_workflow` and `<prefix>_complete_no_action` tools).
 *
 * Acting user: every HTTP request to the agent carries the caller's own bearer token (delegation, audited once per
 * link as `jwt.delegation`) plus `X-Kubemend-User` and `X-Kubemend-Groups` (comma-separated), and every tool call
 * carries `acting_user` / `acting_user_groups` arguments, which is where the agent's tool schema takes them. The
 * agent trusts the token (its `interactive.jwtProviders`) and attributes the session to that user.
 *
 * One link per MCP session of the gateway (so the agent's progress notifications reach that session), connected
 * on first use and reconnected after a transport failure. Calls go through the agent circuit breaker. A link also
 * follows the investigations its session holds between calls (`follow`, AgentEvents.ts), for as long as it lives.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Data, Duration, Effect, FiberMap, Option, Redacted, Scope } from "effect"
import { DependencyUnavailable } from "@kubemend/core/Errors"
import { AgentEvents } from "./AgentEvents.ts"
import { Breakers } from "./Breakers.ts"
import { GatewayAudit } from "./GatewayAudit.ts"
import { GatewayConfig } from "./GatewayConfig.ts"
import { redactMessage } from "./Redact.ts"

export interface ActingUser {
  readonly user: string
  readonly groups: ReadonlyArray<string>
  readonly token: Redacted.Redacted<string>
}

export interface AgentLink {
  /**
   * Calls an agent tool (unprefixed name, e.g. `investigate`) as `acting`; answers its JSON result. `timeout` is the
   * calling tool's own deadline (default `tools.timeout`); running out of it is a timeout, not an outage.
   */
  readonly call: (
    tool: string,
    args: Record<string, unknown>,
    acting: ActingUser,
    timeout?: Duration.Duration
  ) => Effect.Effect<unknown, AgentCallFailed>
  /**
   * Delivers the agent session `sessionId` of `rrId` to this link's notifications from after event `after` on, in
   * the background, until it ends or another user takes it over; a second call for the same session does nothing.
   */
  readonly follow: (rrId: string, sessionId: string, after: number, user: string) => Effect.Effect<void>
}

/**
 * Why a call to the agent failed, in words its caller may read (already redacted). The client's own error: the MCP
 * call pipeline tells it as a tool error (Mcp/Call.ts), so this client knows nothing of MCP tools.
 */
export class AgentCallFailed extends Data.TaggedError("AgentCallFailed")<{
  /**
   * `unavailable`: not configured, unreachable or its circuit open; `refused`: the agent does not admit the caller's
   * identity; `timeout`: the caller's deadline passed; `rejected`: the agent answered the call with an error.
   */
  readonly reason: "unavailable" | "refused" | "timeout" | "rejected"
  readonly message: string
}> {}

/** A link as its MCP session holds it: the session may stop a follow (another gateway replica took it over). */
export interface SessionLink extends AgentLink {
  /** Stops following `rrId`'s investigation, if this link does; a later `follow` starts again. */
  readonly unfollow: (rrId: string) => Effect.Effect<void>
}

/** A fault of the link itself (unreachable, 5xx, broken stream): counts against the breaker. */
class AgentDown {
  readonly _tag = "AgentDown"
  constructor(readonly message: string) {}
}

/**
 * The agent refused the caller's token (401/403: an identity the agent does not admit, e.g. a ServiceAccount without
 * `agent-client`). That caller's problem, not an outage: it must not count against the breaker every user shares.
 */
class AgentRefused {
  readonly _tag = "AgentRefused"
  constructor(readonly status: number) {}
}

/** A slow answer (an LLM turn can take minutes): the caller's deadline passed, the agent is not down. */
class AgentSlow {
  readonly _tag = "AgentSlow"
  constructor(readonly after: Duration.Duration) {}
}

const textOf = (result: { content?: ReadonlyArray<{ type: string; text?: string }> }) =>
  (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n")

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return { message: text }
  }
}

export class AgentSessionsClient extends Effect.Service<AgentSessionsClient>()("@kubemend/gateway/AgentSessionsClient", {
  effect: Effect.gen(function* () {
    const config = yield* GatewayConfig
    const { agent: breaker } = yield* Breakers
    const audit = yield* GatewayAudit
    const events = yield* AgentEvents
    const endpoint = Option.map(config.agentUrl, (u) => new URL(`${u.replace(/\/+$/, "")}/api/v1/mcp`))

    /** A link for one session; `onNotification` receives the agent's `notifications/message` params. */
    const link = (onNotification: (params: unknown) => void): Effect.Effect<SessionLink, never, Scope.Scope> =>
      Effect.gen(function* () {
        let current: ActingUser | undefined
        let connection: Promise<{ client: Client; transport: StreamableHTTPClientTransport }> | undefined
        let delegated = false

        const withActing: typeof fetch = (input, init) => {
          const headers = new Headers(init?.headers)
          if (current !== undefined) {
            headers.set("authorization", `Bearer ${Redacted.value(current.token)}`)
            headers.set("x-kubemend-user", current.user)
            headers.set("x-kubemend-groups", current.groups.join(","))
          }
          return fetch(input, { ...init, headers })
        }

        const connect = (url: URL) => {
          connection ??= (async () => {
            const transport = new StreamableHTTPClientTransport(url, { fetch: withActing })
            const client = new Client({ name: "kubemend-gateway", version: "1.0.0" }, { capabilities: {} })
            client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
              events.fromCall(n.params)
              onNotification(n.params)
            })
            await client.connect(transport)
            return { client, transport }
          })().catch((e) => {
            connection = undefined
            throw e
          })
          return connection
        }

        yield* Effect.addFinalizer(() =>
          Effect.promise(async () => {
            const c = await connection?.catch(() => undefined)
            await c?.transport.terminateSession().catch(() => undefined)
            await c?.client.close().catch(() => undefined)
          })
        )

        const invoke = (url: URL, name: string, args: Record<string, unknown>, timeout: Duration.Duration) =>
          Effect.tryPromise({
            try: async (signal) => {
              const { client } = await connect(url)
              return client.callTool({ name, arguments: args }, undefined, {
                signal,
                timeout: Duration.toMillis(Duration.hours(1))
              })
            },
            catch: (e) => e
          }).pipe(
            Effect.timeoutFail({ duration: timeout, onTimeout: () => new AgentSlow(timeout) }),
            Effect.mapError((e) => {
              if (e instanceof AgentSlow) return e
              // A JSON-RPC error is the agent's answer; a refusal of the caller is theirs; anything else (network,
              // another HTTP status) is an outage.
              if (e instanceof McpError && e.code !== -32000 && e.code !== -32001) return rejected(e.message)
              connection = undefined
              if (e instanceof StreamableHTTPError && (e.code === 401 || e.code === 403)) return new AgentRefused(e.code)
              return new AgentDown(e instanceof Error ? e.message : String(e))
            })
          )

        const call: AgentLink["call"] = (tool, args, acting, timeout = config.toolTimeout) =>
          Option.match(endpoint, {
            onNone: () => Effect.fail(new AgentCallFailed({ reason: "unavailable", message: "the investigation agent is not configured" })),
            onSome: (url) =>
              Effect.gen(function* () {
                current = acting
                if (!delegated) {
                  delegated = true
                  yield* audit.emit({
                    type: "jwt.delegation",
                    outcome: "success",
                    userId: acting.user,
                    data: { delegated_to: "agent", groups: acting.groups.join(",") }
                  })
                }
                const result = yield* breaker.run(
                  invoke(url, `${config.agentToolPrefix}_${tool}`, {
                    ...args,
                    acting_user: acting.user,
                    acting_user_groups: acting.groups
                  }, timeout),
                  (e) => e instanceof AgentDown
                )
                const text = textOf(result as { content?: ReadonlyArray<{ type: string; text?: string }> })
                if ((result as { isError?: boolean }).isError === true) return yield* rejected(text)
                return (result as { structuredContent?: unknown }).structuredContent ?? parse(text)
              }).pipe(
                Effect.catchIf((e): e is AgentRefused => e instanceof AgentRefused, (e) =>
                  Effect.fail(
                    new AgentCallFailed({
                      reason: "refused",
                      message:
                        `the investigation agent does not admit your identity (HTTP ${e.status}): it needs a user token of its trusted issuers with the console grant`
                    })
                  )),
                Effect.catchIf((e): e is AgentSlow => e instanceof AgentSlow, (e) =>
                  Effect.fail(
                    new AgentCallFailed({ reason: "timeout", message: `the investigation agent did not answer within ${Duration.format(e.after)}` })
                  )),
                Effect.catchIf(
                  (e): e is AgentDown | DependencyUnavailable => e instanceof AgentDown || e instanceof DependencyUnavailable,
                  (e) =>
                    Effect.fail(
                      new AgentCallFailed({
                        reason: "unavailable",
                        message: `the investigation agent is unavailable: ${redactMessage(e instanceof AgentDown ? e.message : e.detail ?? "")}`
                      })
                    )
                )
              )
          })

        const follows = yield* FiberMap.make<string>()
        const following = new Map<string, string>()
        const follow: AgentLink["follow"] = (rrId, sessionId, after, user) =>
          Effect.gen(function* () {
            if (following.get(rrId) === sessionId && (yield* FiberMap.has(follows, rrId))) return
            following.set(rrId, sessionId)
            yield* FiberMap.run(
              follows,
              rrId,
              events.follow({
                rrId,
                sessionId,
                after,
                user,
                deliver: (data) => Effect.sync(() => onNotification({ level: "info", logger: "kubemend-interactive", data }))
              })
            )
          })

        const unfollow: SessionLink["unfollow"] = (rrId) => Effect.zipRight(Effect.sync(() => void following.delete(rrId)), FiberMap.remove(follows, rrId))

        return { call, follow, unfollow } satisfies SessionLink
      })

    /** One call on a link of its own (for callers without a session, such as the A2A agent loop). */
    const callOnce = (tool: string, args: Record<string, unknown>, acting: ActingUser) =>
      Effect.scoped(Effect.flatMap(link(() => {}), (l) => l.call(tool, args, acting)))

    return { link, callOnce } as const
  })
}) {}

const rejected = (message: string) => new AgentCallFailed({ reason: "rejected", message: redactMessage(message || "the agent refused the call") })
