/**
 * A loopback LLM speaking the OpenAI chat-completions protocol (plain and SSE streaming, tool calls, usage) that
 * plays scripted transcripts, so investigations are deterministic and replayable. Fault controls (429/500 for the
 * next N requests, latency) exercise the client's retries. The local platform's default model.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer, Redacted } from "effect"
import { layer as llmLayer } from "@kubemend/core/Llm"
import type { PhaseModels } from "@kubemend/core/Llm/Config"
import { chunks, completion, play } from "./llm/Completion.ts"
import { chooseScript, defaultScripts, fill, firstUserText, type Script, turnFor, variablesOf, type WireMessage } from "./llm/Scripts.ts"

export * from "./llm/Scripts.ts"

export interface ScriptedLlmOptions {
  /** Defaults to the built-in investigation script. */
  readonly scripts?: ReadonlyArray<Script>
  /** 0 (default) picks a free port. */
  readonly port?: number
  readonly host?: string
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  readonly apiKey?: string
  /** Delay before every answer, in milliseconds. */
  readonly latencyMs?: number
  /** Per-phase models for `layerScripted` (the same server answers; requests name the phase's model). */
  readonly phaseModels?: PhaseModels
}

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  /** The parsed JSON body (undefined for GET or unparsable bodies). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the request body as the client sent it
  readonly body: any
}

export interface Fault {
  readonly status: 429 | 500 | 503
  /** Sent as `Retry-After` (429 only). */
  readonly retryAfterSeconds?: number
}

export interface ScriptedLlmServer {
  /** The origin, without `/v1` (as configured for provider `openai`). */
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly setScripts: (scripts: ReadonlyArray<Script>) => void
  /** Plays this one script for every conversation. */
  readonly setScript: (script: Omit<Script, "match">) => void
  /** The next `count` chat requests fail with this fault. */
  readonly failNext: (count: number, fault: Fault) => void
  readonly setLatency: (ms: number) => void
  /** Forgets recorded requests and pending faults. */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Array<Buffer> = []
    req.on("data", (c: Buffer) => parts.push(c))
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")))
    req.on("error", reject)
  })

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

const apiError = (message: string, type: string) => ({ error: { message, type, code: null } })

export const start = async (options: ScriptedLlmOptions = {}): Promise<ScriptedLlmServer> => {
  let scripts = options.scripts ?? defaultScripts
  let latencyMs = options.latencyMs ?? 0
  let faults: Array<Fault> = []
  const requests: Array<RecordedRequest> = []
  let served = 0

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the request body as the client sent it
  const chat = (res: ServerResponse, body: any) => {
    const messages: ReadonlyArray<WireMessage> = Array.isArray(body?.messages) ? body.messages : []
    const script = chooseScript(scripts, messages)
    if (script === undefined || script.turns.length === 0) {
      return sendJson(res, 400, apiError("no script matches this conversation", "invalid_request_error"))
    }
    const { index, turn } = turnFor(script, messages)
    const played = play(fill(turn, variablesOf(firstUserText(messages))) as typeof turn, index, messages)
    const model = typeof body?.model === "string" ? body.model : "scripted"
    const id = `chatcmpl-scripted-${++served}`
    if (body?.stream !== true) return sendJson(res, 200, completion(played, model, id))
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    for (const chunk of chunks(played, model, id, body?.stream_options?.include_usage === true)) {
      res.write(`data: ${JSON.stringify(chunk)}\n\n`)
    }
    res.end("data: [DONE]\n\n")
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const text = await readBody(req)
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the request body as the client sent it
    let body: any
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    requests.push({ method: req.method ?? "GET", path, headers: req.headers, body })
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs))
    if (req.method === "GET" && (path === "/healthz" || path === "/")) return sendJson(res, 200, { status: "ok" })
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendJson(res, 401, apiError("invalid api key", "authentication_error"))
    }
    if (req.method === "GET" && (path === "/v1/models" || path === "/models")) {
      return sendJson(res, 200, { object: "list", data: [{ id: "scripted", object: "model", owned_by: "kubemend" }] })
    }
    if (req.method !== "POST" || !(path === "/v1/chat/completions" || path === "/chat/completions")) {
      return sendJson(res, 404, apiError(`no route ${req.method} ${path}`, "invalid_request_error"))
    }
    if (body === undefined) return sendJson(res, 400, apiError("body must be JSON", "invalid_request_error"))
    const fault = faults.shift()
    if (fault !== undefined) {
      const retry = fault.retryAfterSeconds === undefined ? {} : { "retry-after": String(fault.retryAfterSeconds) }
      return fault.status === 429
        ? sendJson(res, 429, apiError("rate limited (scripted)", "rate_limit_error"), retry)
        : sendJson(res, fault.status, apiError("server error (scripted)", "server_error"))
    }
    chat(res, body)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => sendJson(res, 500, apiError(String(e), "server_error")))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve())
  })
  const { address, port } = server.address() as AddressInfo
  const host = address.includes(":") ? `[${address}]` : address

  return {
    url: `http://${host}:${port}`,
    requests,
    setScripts: (next) => {
      scripts = next
    },
    setScript: (script) => {
      scripts = [{ name: script.name, turns: script.turns }]
    },
    failNext: (count, fault) => {
      faults = [...faults, ...Array.from({ length: count }, () => fault)]
    },
    setLatency: (ms) => {
      latencyMs = ms
    },
    reset: () => {
      requests.length = 0
      faults = []
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

export class ScriptedLlm extends Context.Tag("@kubemend/core/devkit/ScriptedLlm")<ScriptedLlm, ScriptedLlmServer>() {}

/** The server for the life of the scope. */
export const scoped = (options: ScriptedLlmOptions = {}) => Effect.acquireRelease(Effect.promise(() => start(options)), (s) => Effect.promise(() => s.close()))

export const layerServer = (options: ScriptedLlmOptions = {}) => Layer.scoped(ScriptedLlm, scoped(options))

/**
 * `Llm` on the scripted server through the real openai adapter, plus the server handle for assertions.
 * Needs an HttpClient and a FileSystem like `Llm.layer`.
 */
export const layerScripted = (options: ScriptedLlmOptions = {}) =>
  Layer.unwrapScoped(Effect.map(scoped(options), (server) =>
    Layer.merge(
      Layer.succeed(ScriptedLlm, server),
      llmLayer({
        provider: "openai",
        model: "scripted",
        endpoint: server.url,
        ...(options.apiKey === undefined ? {} : { apiKey: Redacted.make(options.apiKey) }),
        ...(options.phaseModels === undefined ? {} : { phaseModels: options.phaseModels })
      })
    )))
