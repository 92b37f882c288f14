/**
 * A stand-in for the investigation agent's interactive MCP server (`/api/v1/mcp`, tools `svc_investigate`,
 * `svc_select_workflow`, `svc_complete_no_action`) that passes the same contract suite as the real agent
 * (AgentContract.test.ts): one session per RR held by the user who started it (another user's start answers
 * `session_active`, their other actions are refused until they take over), sessions that stay `active` after their
 * analysis answered until completed or cancelled, live events of a call sent before its answer, and each session's
 * event log on `GET /api/v1/incident/session/<id>/stream` (REST SSE, for `restToken` only; `interactive_state` when
 * the session changes hands, then its end; `event_seq` in answers; `Last-Event-ID` resumes), as the real agent
 * does. The acting user is the one the gateway names (`acting_user`). It records every
 * call with the headers the gateway sent; `stop()` takes it offline, `forget()` loses its sessions as a restart does. Test knobs: `slow:<ms>` as a message delays
 * the answer, `flood:<n>` sends n large events during the call, `pollsUntilAnswered` keeps a started analysis
 * `running` for that many `status`/`follow` calls.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

interface AgentCall {
  readonly tool: string
  readonly args: Record<string, unknown>
  readonly headers: Readonly<Record<string, string | undefined>>
}

export interface FakeAgent {
  readonly url: string
  /** The one bearer token the REST event stream admits (the gateway's ServiceAccount). */
  readonly restToken: string
  readonly calls: () => ReadonlyArray<AgentCall>
  readonly clear: () => void
  /** Refuse connections (the gateway sees the agent down) until `start()`. */
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
  /** Forgets every session, as a restarted agent has (its sessions live in memory): their streams answer 404. */
  readonly forget: () => void
}

export interface FakeAgentOptions {
  readonly pollsUntilAnswered?: number
}

const workflows = [
  { workflow_id: "wf-restart", name: "restart-deployment", description: "Rolling restart", kind: "Deployment", parameters: [] },
  {
    workflow_id: "wf-scale",
    name: "scale-deployment",
    description: "Scale replicas",
    kind: "Deployment",
    parameters: [{ name: "replicas", type: "integer", description: "target replicas", required: true, default: 3 }]
  },
  { workflow_id: "wf-evict", name: "evict-pod", description: "Evict a pod", kind: "Pod", parameters: [] }
]

const actions = new Set(["start", "message", "complete", "cancel", "takeover", "status", "reconnect", "discover_workflows", "start_autonomous", "follow"])

interface LoggedEvent {
  readonly seq: number
  readonly type: string
  readonly data: Record<string, unknown>
}

interface Session {
  readonly id: string
  holder: string
  status: "active" | "cancelled" | "completed" | "completed_no_action" | "escalated"
  polls: number
  selected: string | undefined
  readonly log: Array<LoggedEvent>
  readonly live: Set<(e: LoggedEvent) => void>
}

const restToken = "fake-agent-rest-token"
const streamPath = /^\/api\/v1\/incident\/session\/([^/?]+)\/stream$/

const frame = (e: LoggedEvent) =>
  `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ type: e.type, timestamp: new Date().toISOString(), ...e.data })}\n\n`

class Refused extends Error {}

const headersOf = (headers: Record<string, string | Array<string> | undefined>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]))

export const makeFakeAgent = (options: FakeAgentOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<FakeAgent & { close: () => Promise<void> }> => {
      const calls: Array<AgentCall> = []
      const sessions = new Map<string, Session>()
      const transports = new Map<string, StreamableHTTPServerTransport>()
      const pollsUntilAnswered = options.pollsUntilAnswered ?? 0

      const byId = new Map<string, Session>()
      const summary = (rr: string) => `RCA for ${rr}: the memory limit is too low`
      const emit = (s: Session, type: string, data: Record<string, unknown>) => {
        const e = { seq: s.log.length + 1, type, data }
        s.log.push(e)
        s.live.forEach((f) => f(e))
      }
      const end = (s: Session, type: "complete" | "cancelled", data: Record<string, unknown>) => {
        emit(s, type, data)
        emit(s, "session_ended", { status: s.status === "cancelled" ? "cancelled" : "completed" })
      }
      const view = (rr: string, s: Session, extra: Record<string, unknown> = {}) => {
        const answered = s.polls >= pollsUntilAnswered
        return {
          session_id: s.id,
          rr_id: rr,
          status: s.status,
          holder: s.holder,
          analysis: answered ? "answered" : "running",
          ...(answered ? { summary: summary(rr) } : {}),
          event_seq: s.log.length,
          ...extra
        }
      }
      const announce = (rr: string, s: Session, extra: Record<string, unknown> = {}) => {
        const v = view(rr, s)
        emit(s, "interactive_state", {
          rr_id: rr,
          holder: s.holder,
          status: "active",
          analysis: v.analysis,
          ...(v.summary === undefined ? {} : { summary: v.summary }),
          ...extra
        })
      }
      const open = (rr: string) => {
        const s = sessions.get(rr)
        return s !== undefined && s.status === "active" ? s : undefined
      }
      /** The caller's own open session, as the real agent's `held`. */
      const held = (rr: string, user: string) => {
        const s = open(rr)
        if (s === undefined) throw new Refused(`no interactive session for ${rr}; use action start`)
        if (s.holder !== user) throw new Refused(`${s.holder} holds this session; use action takeover`)
        return s
      }
      const fresh = (rr: string, user: string): Session => {
        const s: Session = { id: randomUUID(), holder: user, status: "active", polls: 0, selected: undefined, log: [], live: new Set() }
        sessions.set(rr, s)
        byId.set(s.id, s)
        announce(rr, s)
        return s
      }

      const answer = (tool: string, args: Record<string, unknown>, user: string): Record<string, unknown> => {
        const rr = String(args.rr_id ?? "")
        if (tool === "svc_select_workflow") {
          const s = held(rr, user)
          s.selected = String(args.workflow_id)
          return view(rr, s, { status: "selected", workflow_id: s.selected, message: `workflow ${s.selected} selected for ${rr}` })
        }
        if (tool === "svc_complete_no_action") {
          const s = held(rr, user)
          const escalated = typeof args.escalation_reason === "string" && args.escalation_reason.trim() !== ""
          s.status = escalated ? "escalated" : "completed_no_action"
          end(s, "complete", { result: { investigation_outcome: escalated ? "escalated" : "completed_no_action" } })
          return view(rr, s, { message: escalated ? String(args.escalation_reason) : "investigation completed no action" })
        }
        switch (args.action) {
          case "start": {
            const current = open(rr)
            if (current !== undefined && current.holder !== user) return { session_id: current.id, rr_id: rr, status: "session_active", holder: current.holder }
            return view(rr, current ?? fresh(rr, user), { message: "investigation started" })
          }
          case "takeover": {
            const current = open(rr)
            if (current === undefined) return view(rr, fresh(rr, user), { message: "investigation started" })
            if (current.holder !== user) announce(rr, current, { previous_holder: current.holder, holder: user })
            current.holder = user
            return view(rr, current, { message: "taken over" })
          }
          case "message":
            return view(rr, held(rr, user), { message: `ack: ${String(args.message ?? "")}` })
          case "discover_workflows":
            held(rr, user)
            return { session_id: sessions.get(rr)!.id, rr_id: rr, status: "active", workflows, count: workflows.length }
          case "status":
          case "follow": {
            const s = sessions.get(rr)
            if (s === undefined) return { rr_id: rr, status: "disconnected", message: "no interactive session on this agent" }
            s.polls++
            return view(rr, s)
          }
          case "reconnect": {
            const s = open(rr)
            if (s === undefined) throw new Refused(`no open interactive session for ${rr}; use action start`)
            if (s.holder !== user) return { session_id: s.id, rr_id: rr, status: "session_active", holder: s.holder }
            return view(rr, s, { message: "reconnected" })
          }
          case "complete": {
            const s = held(rr, user)
            if (s.selected === undefined) throw new Refused("no workflow selected: use discover_workflows and svc_select_workflow before completing")
            s.status = "completed"
            end(s, "complete", { result: { investigation_outcome: "workflow_selected" } })
            return view(rr, s, { message: "investigation completed" })
          }
          case "cancel": {
            const s = held(rr, user)
            s.status = "cancelled"
            end(s, "cancelled", { reason: `cancelled by ${user}` })
            return view(rr, s, { message: "investigation cancelled; the lease is released" })
          }
          case "start_autonomous":
            return { session_id: randomUUID(), rr_id: rr, status: "started" }
          default:
            throw new Refused(`invalid arguments: action must be one of ${[...actions].join(", ")}`)
        }
      }

      const newServer = () => {
        const server = new Server({ name: "fake-agent", version: "1" }, { capabilities: { tools: {}, logging: {} } })
        server.setRequestHandler(ListToolsRequestSchema, async () => ({
          tools: ["svc_investigate", "svc_select_workflow", "svc_complete_no_action"].map((name) => ({
            name,
            inputSchema: { type: "object" as const }
          }))
        }))
        server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
          const args = (request.params.arguments ?? {}) as Record<string, unknown>
          const headers = headersOf((extra.requestInfo?.headers ?? {}) as Record<string, string | Array<string> | undefined>)
          calls.push({ tool: request.params.name, args, headers })
          const user = String(args.acting_user ?? headers["x-kubemend-user"] ?? "")
          const event = (data: Record<string, unknown>) =>
            extra.sendNotification({ method: "notifications/message", params: { level: "info", logger: "kubemend-interactive", data } }).catch(() => undefined)
          const slow = /^slow:(\d+)$/.exec(String(args.message ?? ""))
          if (slow !== null) await new Promise((r) => setTimeout(r, Number(slow[1])))
          const flood = /^flood:(\d+)$/.exec(String(args.message ?? ""))
          if (flood !== null) {
            const padding = "x".repeat(64 * 1024)
            for (let i = 0; i < Number(flood[1]); i++) await event({ event: "flood", i, padding })
          }
          try {
            const result = answer(request.params.name, args, user)
            // The events of a call go out while it is open, before its answer.
            if (args.action === "start" || args.action === "message") {
              await event({ event: "progress", rr_id: args.rr_id, message: `analysing ${String(args.rr_id)}` })
            }
            return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result }
          } catch (e) {
            if (!(e instanceof Refused)) {
              throw e
            }
            return { content: [{ type: "text", text: e.message }], isError: true }
          }
        })
        return server
      }

      /** The REST event stream of one session: history after `Last-Event-ID`, then live, ending with the session. */
      const serveStream = (id: string, req: IncomingMessage, res: ServerResponse) => {
        const problem = (status: number, title: string) =>
          void res.writeHead(status, { "content-type": "application/problem+json" }).end(JSON.stringify({ type: "about:blank", title, status }))
        if (req.headers.authorization !== `Bearer ${restToken}`) return problem(401, "Unauthorized")
        const s = byId.get(decodeURIComponent(id))
        if (s === undefined) return problem(404, "Not Found")
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        const after = Number(req.headers["last-event-id"] ?? "0")
        const write = (e: LoggedEvent) => {
          res.write(frame(e))
          if (e.type === "session_ended") res.end()
        }
        for (const e of s.log) if (e.seq > after) write(e)
        if (res.writableEnded) return
        const keepalive = setInterval(() => res.write(": keepalive\n\n"), 15_000)
        s.live.add(write)
        res.once("close", () => {
          clearInterval(keepalive)
          s.live.delete(write)
        })
      }

      let http: HttpServer | undefined
      let port = 0
      const start = () =>
        new Promise<void>((resolve) => {
          http = createServer((req, res) => {
            const stream = req.method === "GET" ? streamPath.exec(req.url ?? "") : null
            if (stream !== null) return serveStream(stream[1]!, req, res)
            // Like the real agent, the MCP admits no caller without a token (this fake does not verify it).
            if ((req.headers.authorization ?? "").trim() === "") {
              return void res.writeHead(401, { "content-type": "application/problem+json" })
                .end(JSON.stringify({ type: "about:blank", title: "Authentication Failed", status: 401 }))
            }
            void (async () => {
              const id = req.headers["mcp-session-id"]
              let transport = typeof id === "string" ? transports.get(id) : undefined
              if (transport === undefined) {
                const created = new StreamableHTTPServerTransport({
                  sessionIdGenerator: () => randomUUID(),
                  onsessioninitialized: (sid) => void transports.set(sid, created)
                })
                transport = created
                await newServer().connect(created)
              }
              await transport.handleRequest(req, res)
            })()
          })
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
        restToken,
        calls: () => calls,
        clear: () => void calls.splice(0),
        stop,
        start,
        forget: () => {
          sessions.clear()
          byId.clear()
        },
        close: stop
      }
    }),
    (agent) => Effect.promise(() => agent.close())
  )

export const startFakeAgent = makeFakeAgent()
