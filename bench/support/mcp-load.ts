/**
 * What `bench/gateway-mcp.ts` drives and compares against: official MCP SDK clients calling one tool back to back,
 * and the same tool handlers behind the SDK's plain server (low-level `Server` + its Node transport, no auth).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { setMaxListeners } from "node:events"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { renderResult } from "../../packages/gateway/src/Mcp/Output.ts"
import type { ToolRegistry } from "../../packages/gateway/src/Mcp/Registry.ts"
import type { ToolContext } from "../../packages/gateway/src/Mcp/Tool.ts"

/** The same handlers behind the SDK's plain server: a session per client, no authentication or limits. */
export const bareServer = (registry: ToolRegistry, ctx: ToolContext, run: <A, E>(e: Effect.Effect<A, E>) => Promise<A>) =>
  new Promise<{ url: string; close: () => void }>((resolve) => {
    const transports = new Map<string, StreamableHTTPServerTransport>()
    const http = Http.createServer(async (req, res) => {
      const id = req.headers["mcp-session-id"]
      let transport = typeof id === "string" ? transports.get(id) : undefined
      if (transport === undefined) {
        const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void transports.set(sid, t) })
        const server = new Server({ name: "bare", version: "1" }, { capabilities: { tools: {}, logging: {} } })
        server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...registry.listed] }))
        server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
          const def = registry.lookup(request.params.name)!
          // Notifications go out as on the gateway, so both servers send the same messages.
          const notify = (data: unknown) =>
            Effect.promise(() =>
              extra.sendNotification({ method: "notifications/message", params: { level: "info", logger: "kubemend", data } }).catch(() => undefined)
            )
          const value = await run(def.run(request.params.arguments as never, { ...ctx, tool: request.params.name, notify }))
          return { content: [{ type: "text", text: renderResult(value, 16_384, def.listField) }] }
        })
        await server.connect(t)
        transport = t
      }
      await transport.handleRequest(req, res)
    })
    http.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, close: () => void http.close() }))
  })

// The SDK client adds an abort listener per request to its transport's one signal; thousands of calls per client
// are what a benchmark makes, not a leak to be warned of.
setMaxListeners(0)

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

export interface LoadResult {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  readonly calls: number
  /** CPU of this process (clients and in-process servers) per completed call. */
  readonly cpuMsPerCall: number
}

/** `n` connected SDK clients (sessions open), reused across rounds. */
export interface ClientPool {
  /** Every client calls `tool` `warmup` times, then back to back for `duration` seconds. */
  readonly run: (tool: string, args: Record<string, unknown>, duration: number, warmup?: number) => Promise<LoadResult>
  /** Ends each session (`DELETE /mcp`) and closes the clients. */
  readonly close: () => Promise<void>
}

/** `n` SDK clients with their sessions open; given several urls (replicas), each request goes to the next one. */
export const connect = async (url: string | ReadonlyArray<string>, token: string | undefined, n: number): Promise<ClientPool> => {
  const urls = typeof url === "string" ? [url] : url
  const connected = await Promise.all(Array.from({ length: n }, async () => {
    let next = 0
    const transport = new StreamableHTTPClientTransport(new URL("http://replicas/mcp"), {
      requestInit: token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
      fetch: (input, init) => fetch(String(input).replace("http://replicas", urls[next++ % urls.length]!), init)
    })
    const client = new Client({ name: "bench", version: "1" })
    await client.connect(transport)
    return { client, transport }
  }))
  const call = async (i: number, tool: string, args: Record<string, unknown>) => {
    const r = await connected[i]!.client.callTool({ name: tool, arguments: args })
    if (r.isError === true) throw new Error(JSON.stringify(r.content))
  }
  const run = async (tool: string, args: Record<string, unknown>, duration: number, warmup = 20): Promise<LoadResult> => {
    const clients = connected.map((_, i) => i)
    for (const c of clients) for (let k = 0; k < warmup; k++) await call(c, tool, args)
    const latencies: Array<number> = []
    let errors = 0
    const end = performance.now() + duration * 1000
    const started = performance.now()
    const cpu = process.cpuUsage()
    await Promise.all(clients.map(async (c) => {
      while (performance.now() < end) {
        const t = performance.now()
        try {
          await call(c, tool, args)
          latencies.push(performance.now() - t)
        } catch {
          errors++
        }
      }
    }))
    const elapsed = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    latencies.sort((a, b) => a - b)
    return {
      rps: latencies.length / elapsed,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      errors,
      calls: latencies.length,
      // Client and server share this process; the clients' share is the same for every server, so the difference
      // is the server-side cost, which holds up better than wall time on a busy machine.
      cpuMsPerCall: (used.user + used.system) / 1000 / Math.max(1, latencies.length)
    }
  }
  const close = async () => {
    await Promise.all(connected.map(async ({ client, transport }) => {
      await transport.terminateSession().catch(() => undefined)
      await client.close()
    }))
  }
  return { run, close }
}

/**
 * `n` SDK clients calling `tool` back to back for `duration` seconds, after 20 calls each to warm up. Given several
 * urls (replicas), each request goes to the next one, round robin.
 */
export const load = async (
  url: string | ReadonlyArray<string>,
  token: string | undefined,
  tool: string,
  args: Record<string, unknown>,
  duration: number,
  n: number
): Promise<LoadResult> => {
  const pool = await connect(url, token, n)
  try {
    return await pool.run(tool, args, duration)
  } finally {
    await pool.close()
  }
}
