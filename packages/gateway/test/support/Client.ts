/** The official MCP SDK client against a running gateway, as a scoped resource, plus result helpers. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"

export interface Connected {
  readonly client: Client
  readonly transport: StreamableHTTPClientTransport
  /** `notifications/message` params received so far. */
  readonly notifications: Array<unknown>
}

/** A fetch that asks for plain JSON answers (`Accept: application/json`) on POSTs. */
const jsonOnly: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers)
  if ((init?.method ?? "GET") === "POST") headers.set("accept", "application/json")
  return fetch(input, { ...init, headers })
}

export const connect = (url: string, token: string, options: { readonly json?: boolean; readonly headers?: Record<string, string> } = {}) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<Connected> => {
      const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { ...options.headers, Authorization: `Bearer ${token}` } },
        ...(options.json === true ? { fetch: jsonOnly } : {})
      })
      const client = new Client({ name: "gateway-test", version: "1.0.0" })
      const notifications: Array<unknown> = []
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notifications.push(n.params))
      await client.connect(transport)
      return { client, transport, notifications }
    }),
    ({ client, transport }) =>
      Effect.promise(async () => {
        await transport.terminateSession().catch(() => undefined)
        await client.close().catch(() => undefined)
      })
  )

export interface CallOutcome {
  readonly isError: boolean
  readonly text: string
  readonly json: any
}

export const call = (c: Connected, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(async (): Promise<CallOutcome> => {
    const result = await c.client.callTool({ name, arguments: args })
    const text = (result.content as Array<{ type: string; text: string }>).map((x) => x.text).join("")
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { isError: result.isError === true, text, json }
  })

/** A raw HTTP request to the gateway. */
export const raw = (url: string, init: RequestInit & { readonly token?: string } = {}) =>
  Effect.promise(async () => {
    const headers = new Headers(init.headers)
    if (init.token !== undefined) headers.set("authorization", `Bearer ${init.token}`)
    const res = await fetch(url, { ...init, headers })
    const text = await res.text()
    return {
      status: res.status,
      headers: res.headers,
      text,
      json: (() => {
        try {
          return JSON.parse(text)
        } catch {
          return undefined
        }
      })()
    }
  })

export const initializeBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

export const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }
