/**
 * An MCP SDK client of the agent's interactive server, speaking for a user the way the gateway does (its
 * ServiceAccount token plus identity headers), with the `notifications/message` it received.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { baseUrl, gatewayToken } from "./Harness.ts"

export type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ type: string; text?: string }> }

interface Notification {
  readonly event?: string
  readonly message?: string
}

export const connect = (user: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const url = yield* baseUrl
      const mcp = new Client({ name: `test-${user}`, version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${gatewayToken}`, "X-Kubemend-User": user, "X-Kubemend-Groups": "sre" } }
      })
      yield* Effect.promise(() => mcp.connect(transport))
      const logs: Array<string> = []
      const notifications: Array<Notification & { readonly logger?: string }> = []
      mcp.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        const data = n.params.data as Notification
        logs.push(String(data.message))
        notifications.push({ ...data, ...(n.params.logger === undefined ? {} : { logger: n.params.logger }) })
      })
      const call = (name: string, args: Record<string, unknown>) => Effect.promise(() => mcp.callTool({ name, arguments: args }) as Promise<Result>)
      const investigate = (rr: string, action: string, extra: Record<string, unknown> = {}) => call("svc_investigate", { rr_id: rr, action, ...extra })
      return { mcp, call, investigate, logs, notifications }
    }),
    ({ mcp }) => Effect.promise(() => mcp.close())
  )

export const text = (r: Result) => r.content.map((c) => c.text ?? "").join("")
