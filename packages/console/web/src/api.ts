/**
 * The console's calls, all to its own origin: the console server adds the user's bearer and forwards to the
 * gateway. MCP tools through `/mcp` (one session, JSON answers), A2A through `/a2a/invoke`, the status stream
 * through `/a2a/status`. Signed out (401) goes back through sign-in and returns to the same page.
 */
import { createParser } from "eventsource-parser"

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

const signIn = () => {
  window.location.assign(`/oauth2/sign_in?rd=${encodeURIComponent(window.location.pathname + window.location.search)}`)
  return new ApiError(401, "signed out; signing in again")
}

const problemText = async (res: Response) => {
  const text = await res.text()
  try {
    const body = JSON.parse(text) as { detail?: string; title?: string; error?: { message?: string } }
    return body.detail ?? body.error?.message ?? body.title ?? `HTTP ${res.status}`
  } catch {
    return text === "" ? `HTTP ${res.status}` : text.slice(0, 200)
  }
}

export interface Me {
  readonly user: string
  readonly groups: ReadonlyArray<string>
}

export const me = async (): Promise<Me> => {
  const res = await fetch("/oauth2/userinfo")
  if (res.status === 401) throw signIn()
  if (!res.ok) throw new ApiError(res.status, await problemText(res))
  return (await res.json()) as Me
}

export const signOut = async () => {
  await closeMcp()
  const res = await fetch("/oauth2/sign_out", { method: "POST" })
  const { location } = (await res.json()) as { location: string }
  window.location.assign(location)
}

export type Access = "allowed" | "denied" | "unverifiable"

/** The console-access pre-flight: only a 200 saying `allowed: true` lets the app in (fail closed). */
export const checkAccess = async (): Promise<Access> => {
  try {
    const res = await fetch("/a2a/access", { headers: { accept: "application/json" } })
    if (res.status === 401) throw signIn()
    if (res.status === 403) return "denied"
    if (!res.ok) return "unverifiable"
    const body = (await res.json()) as { allowed?: unknown }
    return body.allowed === true ? "allowed" : body.allowed === false ? "denied" : "unverifiable"
  } catch {
    return "unverifiable"
  }
}

const rpc = (id: number, method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params })

/**
 * The MCP session is kept for the tab (sessionStorage), so a reload goes on with it: a new session per page load
 * would reach the gateway's per-user session limit after ten reloads. Another user's id answers 404 and is replaced.
 */
const sessionKey = "kubemend.console.mcpSession"
const kept = sessionStorage.getItem(sessionKey)
let mcpSession: Promise<string> | undefined = kept === null ? undefined : Promise.resolve(kept)
let nextId = 1

const closeMcp = async () => {
  const id = await mcpSession?.catch(() => undefined)
  mcpSession = undefined
  sessionStorage.removeItem(sessionKey)
  if (id !== undefined) await fetch("/mcp", { method: "DELETE", headers: { "mcp-session-id": id } }).catch(() => undefined)
}

const openMcp = async (): Promise<string> => {
  const res = await fetch("/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: rpc(nextId++, "initialize", { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "kubemend-console", version: "0.1.0" } })
  })
  if (res.status === 401) throw signIn()
  if (!res.ok) throw new ApiError(res.status, await problemText(res))
  const id = res.headers.get("mcp-session-id")
  if (id === null) throw new ApiError(502, "the gateway opened no MCP session")
  await fetch("/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", "mcp-session-id": id },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
  })
  sessionStorage.setItem(sessionKey, id)
  return id
}

/** A tool's result (its JSON text parsed); a tool error or refusal is thrown with the gateway's words. */
export const callTool = async <T>(name: string, args: Record<string, unknown> = {}, retried = false): Promise<T> => {
  mcpSession ??= openMcp().catch((e: unknown) => {
    mcpSession = undefined
    throw e
  })
  const session = await mcpSession
  const res = await fetch("/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", "mcp-session-id": session },
    body: rpc(nextId++, "tools/call", { name, arguments: args })
  })
  if (res.status === 401) throw signIn()
  // The session ended at the gateway (restart, idle expiry): open another once.
  if (res.status === 404 && !retried) {
    mcpSession = undefined
    sessionStorage.removeItem(sessionKey)
    return callTool<T>(name, args, true)
  }
  if (!res.ok) throw new ApiError(res.status, await problemText(res))
  const body = (await res.json()) as {
    error?: { code: number; message: string }
    result?: { isError?: boolean; content?: Array<{ type: string; text?: string }> }
  }
  if (body.error !== undefined) throw new ApiError(body.error.code === -32003 ? 403 : 400, body.error.message)
  const text = body.result?.content?.find((c) => c.type === "text")?.text ?? "null"
  if (body.result?.isError === true) throw new ApiError(text.startsWith("permission denied") ? 403 : 400, text)
  return JSON.parse(text) as T
}

/**
 * A JSON-RPC call answered as an SSE stream (`/a2a/status`, A2A `message/stream`): each event's data to `onEvent`
 * as it arrives. Resolves when the stream ends; rejects on an HTTP error before it started.
 */
export const stream = async (
  path: string,
  method: string,
  params: unknown,
  onEvent: (event: string | undefined, data: unknown) => void,
  signal: AbortSignal
): Promise<void> => {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: rpc(nextId++, method, params),
    signal
  })
  if (res.status === 401) throw signIn()
  if (!res.ok || res.body === null) throw new ApiError(res.status, await problemText(res))
  if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    onEvent(undefined, await res.json())
    return
  }
  const parser = createParser({
    onEvent: (e) => {
      try {
        onEvent(e.event, JSON.parse(e.data))
      } catch {
        // A frame that is not JSON is not ours to show.
      }
    }
  })
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return
    parser.feed(value)
  }
}
