/**
 * A fake investigation agent for the lifecycle tests: a loopback HTTP server with the REST endpoints the analysis
 * controller uses (submit, poll, result, cancel), held to the real agent's contract by AgentRestClient.test.ts.
 * Each submitted session follows a script (how many polls it stays `investigating`, then `completed` with a result
 * or `failed`); `restart()` forgets every session, as an agent restart does, so the next poll answers 404.
 */
import { IncidentRequest, type IncidentResponse } from "@kubemend/core/AgentApi"
import { listenScoped } from "@kubemend/devkit/Listen"
import { Effect, Either, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type * as http from "node:http"

interface Script {
  /** Polls answered `investigating` before the session completes; Infinity never completes. */
  readonly polls?: number
  readonly outcome?: "completed" | "failed"
  /** Fields of the IncidentResponse over the defaults (a workflow with confidence 0.9). */
  readonly result?: Partial<IncidentResponse>
}

interface Session {
  readonly request: Record<string, unknown>
  readonly script: Script
  polled: number
  cancelled: boolean
}

export interface FakeAgent {
  readonly url: string
  /** Submitted requests, in order. */
  readonly submitted: Array<Record<string, unknown>>
  /** How the next sessions behave (per request). */
  script: (request: Record<string, unknown>) => Script
  /** Forget every session (an agent restart). */
  readonly restart: () => void
  readonly sessionIds: () => ReadonlyArray<string>
  /** A session opened outside the controller (as an interactive start does); its id. */
  readonly open: (request: Record<string, unknown>, script: Script) => string
}

export const workflowResult = (over: Partial<IncidentResponse> = {}): IncidentResponse => ({
  incident_id: "x",
  analysis: "checkout is OOMKilled",
  root_cause_analysis: { summary: "memory limit too low", contributing_factors: ["limit 128Mi"] },
  root_cause: "memory limit too low",
  confidence: 0.9,
  timestamp: new Date(0).toISOString(),
  investigation_outcome: "workflow_selected",
  actionable: true,
  selected_workflow: {
    workflow_id: "increase-memory-limit",
    name: "increase-memory-limit",
    version: "1.0.0",
    action_type: "IncreaseMemoryLimit",
    execution_bundle: "registry.example/increase-memory-limit:1.0.0",
    parameters: { MEMORY_LIMIT: "256Mi" }
  },
  needs_human_review: false,
  human_review_reason: null,
  ...over
})

const problem = (res: http.ServerResponse, status: number, title: string, detail?: string) => {
  res.writeHead(status, { "content-type": "application/problem+json" })
  res.end(JSON.stringify({ type: `https://kubemend.io/problems/${title.toLowerCase()}`, title, status, detail }))
}

const decodeRequest = Schema.decodeUnknownEither(Schema.parseJson(IncidentRequest))

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

/** The analysis controller's token the fake accepts; any other (or none) gets the real agent's 401. */
export const fakeAgentToken = "analysis-controller-token"

export const startFakeAgent = Effect.gen(function* () {
  const sessions = new Map<string, Session>()
  const agent: FakeAgent = {
    url: "",
    submitted: [],
    script: () => ({}),
    restart: () => sessions.clear(),
    sessionIds: () => [...sessions.keys()],
    open: (request, script) => {
      const id = randomUUID()
      sessions.set(id, { request, script, polled: 0, cancelled: false })
      return id
    }
  }
  const listening = yield* listenScoped((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0]!
      if (req.headers.authorization !== `Bearer ${fakeAgentToken}`) return problem(res, 401, "Unauthorized")
      if (req.method === "POST" && path === "/api/v1/incident/analyze") {
        // As the real agent: a body that is not an IncidentRequest is a 400 and opens no session.
        const decoded = decodeRequest(body)
        if (Either.isLeft(decoded)) return problem(res, 400, "BadRequest", decoded.left.message)
        const request = JSON.parse(body) as Record<string, unknown>
        agent.submitted.push(request)
        const id = randomUUID()
        sessions.set(id, { request, script: agent.script(request), polled: 0, cancelled: false })
        return json(res, 202, { session_id: id })
      }
      const m = /^\/api\/v1\/incident\/session\/([^/]+)(\/result|\/cancel)?$/.exec(path)
      const session = m === null ? undefined : sessions.get(m[1]!)
      if (m === null || req.method !== (m[2] === "/cancel" ? "POST" : "GET")) return problem(res, 404, "NotFound")
      if (session === undefined) return problem(res, 404, "NotFound")
      const done = session.cancelled || session.polled >= (session.script.polls ?? 0)
      const status = session.cancelled ? "cancelled" : done ? session.script.outcome ?? "completed" : "investigating"
      if (m[2] === "/cancel") {
        // Only a running session can be cancelled, once.
        if (done) return problem(res, 409, "Conflict", `session is ${status}`)
        session.cancelled = true
        return json(res, 200, { session_id: m[1], status: "cancelled" })
      }
      if (m[2] === undefined) {
        session.polled++
        return json(res, 200, { session_id: m[1], status, progress: `poll ${session.polled}` })
      }
      if (!done || session.cancelled) return problem(res, 409, "Conflict", `session is ${status}`)
      return json(res, 200, { ...workflowResult(session.script.result), incident_id: String(session.request["incident_id"]) })
    })
  })
  return Object.assign(agent, { url: listening.url })
})
