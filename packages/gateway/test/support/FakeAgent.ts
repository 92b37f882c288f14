/**
 * A stand-in for the investigation agent's MCP server (`/api/v1/mcp`, tools `svc_investigate`,
 * `svc_select_workflow`, `svc_complete_no_action`) until the real agent is wired into these tests. It records
 * every call with the headers the gateway sent and answers with scripted results; `stop()` takes it offline.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"

interface AgentCall {
  readonly tool: string
  readonly args: Record<string, unknown>
  readonly headers: Readonly<Record<string, string | undefined>>
}

export interface FakeAgent {
  readonly url: string
  readonly calls: () => ReadonlyArray<AgentCall>
  readonly clear: () => void
  /** Refuse connections (the gateway sees the agent down) until `start()`. */
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
}

const workflows = [
  { workflow_id: "wf-restart", name: "restart-deployment", description: "Rolling restart", kind: "Deployment", parameters: [] },
  { workflow_id: "wf-scale", name: "scale-deployment", description: "Scale replicas", kind: "Deployment", parameters: [{ name: "replicas", type: "integer", description: "target replicas", required: true, default: 3 }] },
  { workflow_id: "wf-evict", name: "evict-pod", description: "Evict a pod", kind: "Pod", parameters: [] }
]

const answer = (tool: string, args: Record<string, unknown>) => {
  const rr = String(args.rr_id ?? "")
  const session = `ka-${rr}`
  if (tool === "svc_select_workflow") return { status: "selected", message: `workflow ${String(args.workflow_id)} selected for ${rr}` }
  if (tool === "svc_complete_no_action") {
    return args.escalation_reason === undefined
      ? { session_id: session, status: "completed_no_action" }
      : { session_id: session, status: "escalated", message: String(args.escalation_reason) }
  }
  switch (args.action) {
    case "start":
      return { session_id: session, status: "active", summary: `investigation of ${rr} started` }
    case "message":
      return { session_id: session, status: "active", message: `ack: ${String(args.message)}` }
    case "discover_workflows":
      return { workflows, count: workflows.length }
    case "status":
      return { session_id: session, status: "active" }
    case "complete":
      return { session_id: session, status: "completed", message: "remediation pipeline triggered" }
    case "cancel":
      return { session_id: session, status: "cancelled" }
    case "reconnect":
      return { session_id: session, status: "active", message: "reconnected" }
    default:
      return undefined
  }
}

const headersOf = (headers: Record<string, string | Array<string> | undefined>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]))

export const startFakeAgent = Effect.acquireRelease(
  Effect.promise(async (): Promise<FakeAgent & { close: () => Promise<void> }> => {
    const calls: Array<AgentCall> = []
    const transports = new Map<string, StreamableHTTPServerTransport>()

    const newServer = () => {
      const server = new Server({ name: "fake-agent", version: "1" }, { capabilities: { tools: {}, logging: {} } })
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: ["svc_investigate", "svc_select_workflow", "svc_complete_no_action"].map((name) => ({
          name, inputSchema: { type: "object" as const }
        }))
      }))
      server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
        const args = (request.params.arguments ?? {}) as Record<string, unknown>
        const headers = (extra.requestInfo?.headers ?? {}) as Record<string, string | Array<string> | undefined>
        calls.push({ tool: request.params.name, args, headers: headersOf(headers) })
        const result = answer(request.params.name, args)
        if (result === undefined) return { content: [{ type: "text", text: `unknown action ${String(args.action)}` }], isError: true }
        const slow = /^slow:(\d+)$/.exec(String(args.message ?? ""))
        // A slow answer (an LLM turn that takes long), for the deadline tests.
        if (slow !== null) await new Promise((r) => setTimeout(r, Number(slow[1])))
        const flood = /^flood:(\d+)$/.exec(String(args.message ?? ""))
        if (flood !== null) {
          // Many large live events, for the slow-reader test.
          const padding = "x".repeat(64 * 1024)
          setTimeout(async () => {
            for (let i = 0; i < Number(flood[1]); i++) {
              await server.sendLoggingMessage({ level: "info", logger: "kubemend-interactive", data: { i, padding } }).catch(() => undefined)
            }
          }, 10)
        }
        if (args.action === "start") {
          // A live event after the start answered: the gateway forwards it to its caller's session.
          setTimeout(() => void server.sendLoggingMessage({ level: "info", logger: "kubemend-interactive", data: { event: "progress", rr_id: args.rr_id } }).catch(() => undefined), 20)
        }
        return { content: [{ type: "text", text: JSON.stringify(result) }] }
      })
      return server
    }

    const handler = async (req: IncomingMessage, res: import("node:http").ServerResponse) => {
      const id = req.headers["mcp-session-id"]
      let transport = typeof id === "string" ? transports.get(id) : undefined
      if (transport === undefined) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (sid) => void transports.set(sid, transport!)
        })
        await newServer().connect(transport)
      }
      await transport.handleRequest(req, res)
    }

    let http: HttpServer | undefined
    let port = 0
    const start = () =>
      new Promise<void>((resolve) => {
        http = createServer((req, res) => void handler(req, res))
        http.listen(port, "127.0.0.1", () => {
          port = (http!.address() as AddressInfo).port
          resolve()
        })
      })
    const stop = () =>
      new Promise<void>((resolve) => {
        for (const t of transports.values()) void t.close()
        transports.clear()
        http?.closeAllConnections()
        http?.close(() => resolve())
      })
    await start()
    return {
      url: `http://127.0.0.1:${port}`,
      calls: () => calls,
      clear: () => void calls.splice(0),
      stop,
      start,
      close: stop
    }
  }),
  (agent) => Effect.promise(() => agent.close())
)
