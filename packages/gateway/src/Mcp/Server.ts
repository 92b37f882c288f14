/**
 * One low-level MCP SDK `Server` per session (a Server serves one transport): `tools/list` from the registry,
 * `tools/call` through the call pipeline, `ping` and `initialize` by the SDK. The caller of each HTTP request
 * travels to the handlers in the transport's `authInfo.extra`.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import type { Shutdown } from "@kubemend/core/Drain"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Runtime } from "effect"
import { GatewayConfig } from "../GatewayConfig.ts"
import type { AgentLink } from "../AgentSessionsClient.ts"
import type { Caller } from "../Caller.ts"
import { ToolCalls } from "./Call.ts"
import { ToolRegistry } from "./Registry.ts"

export const serverInfo = { name: "kubemend-gateway", version: "1.0.0" } as const

/**
 * What the transport mount attaches to each request: the caller, and the gateway's drain (built after the
 * sessions, so it comes with each request).
 */
export const authInfoFor = (caller: Caller, shutdown: Shutdown): AuthInfo => ({
  token: "",
  clientId: caller.principal.user,
  scopes: [],
  expiresAt: Math.floor(caller.principal.expiresAt.getTime() / 1000),
  extra: { caller, shutdown }
})

const callerOf = (authInfo: AuthInfo | undefined): Caller => {
  const caller = authInfo?.extra?.["caller"] as Caller | undefined
  // The mount always attaches the caller; a request without one never passed the edge chain.
  if (caller === undefined) throw new McpError(ErrorCode.InvalidRequest, "unauthenticated request")
  return caller
}

export interface SessionContext {
  readonly sessionId: () => string | undefined
  readonly agent: AgentLink
}

/**
 * While `effect` runs, `beat` every `interval` (a client that asked for progress resets its request timeout on
 * each; without one the call runs as it is).
 */
export const heartbeat =
  (interval: Parameters<typeof Effect.sleep>[0]) =>
  (beat: (() => Effect.Effect<void>) | undefined) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    beat === undefined
      ? effect
      : Effect.raceFirst(effect, Effect.forever(Effect.zipRight(Effect.sleep(interval), Effect.suspend(beat))))

export const makeServerFactory = Effect.gen(function* () {
  const registry = yield* ToolRegistry
  const calls = yield* ToolCalls
  const { streamKeepaliveInterval } = yield* GatewayConfig
  const withHeartbeat = heartbeat(streamKeepaliveInterval)
  const runtime = yield* Effect.runtime<never>()
  const run = Runtime.runPromise(runtime)

  return (session: SessionContext): Server => {
    const server = new Server(serverInfo, {
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions: "Kubemend remediation tools. Authorization is checked per tool call; a denied call answers permission denied."
    })
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...registry.listed] }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const name = request.params.name
      const def = registry.lookup(name)
      if (def === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name}`)
      const caller = callerOf(extra.authInfo)
      const shutdown = extra.authInfo?.extra?.["shutdown"] as Shutdown | undefined
      const progressToken = request.params._meta?.progressToken
      let step = 0
      const progress = (message: string) =>
        progressToken === undefined ?
          Effect.void :
          Effect.promise(() =>
            extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: ++step, message } })
              .catch(() => undefined)
          )
      const call = calls.call(def, request.params.arguments, {
        caller,
        tool: name,
        sessionId: session.sessionId(),
        agent: session.agent,
        notify: (data) =>
          Effect.promise(() =>
            extra.sendNotification({ method: "notifications/message", params: { level: "info", logger: "kubemend", data } })
              .catch(() => undefined)
          ),
        progress,
        ...(shutdown === undefined ? {} : { shutdown })
      }).pipe(withHeartbeat(progressToken === undefined ? undefined : () => progress(`${name} is still running`)))
      // In flight for the drain even when its HTTP request is gone (a client that hung up still gets its audit).
      const result = await run(shutdown === undefined ? call : shutdown.track(call), { signal: extra.signal })
      return { ...result, content: [...result.content] }
    })
    return server
  }
})
