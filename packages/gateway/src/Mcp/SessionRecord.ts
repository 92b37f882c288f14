/**
 * An MCP session as the shared state keeps it, so that any gateway replica can serve its next request: who owns
 * it, its slot in the session pool, and what its client sent in `initialize`.
 *
 * Re-creating the session on another replica uses only the SDK's public API: a transport whose
 * `sessionIdGenerator` answers the recorded id is handed the recorded `initialize` (and `notifications/initialized`),
 * so it and its `Server` come out initialized exactly as on the first replica, with the client's capabilities and
 * protocol version. (SDK 1.32 has no other way to adopt a session id; see modelcontextprotocol/typescript-sdk#1882.)
 */
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { Effect } from "effect"

/** What the client sent in `initialize`. */
export interface InitializeParams {
  readonly protocolVersion: string
  readonly capabilities: unknown
  readonly clientInfo: unknown
}

export interface SessionRecord {
  readonly owner: string
  /** Its slot in `SessionSlots`. */
  readonly slot: string
  readonly initialize: InitializeParams
  readonly createdAt: number
  readonly lastUsed: number
}

export const recordKey = (sessionId: string) => `mcp:${sessionId}`

/** Past this, a client's capabilities or info are not kept (a record per session must stay small in Valkey). */
const maxKeptBytes = 16 * 1024

const bounded = (value: unknown, otherwise: unknown) => value === undefined || JSON.stringify(value).length > maxKeptBytes ? otherwise : value

/** The `initialize` params of a request body (what a later replica replays), within `maxKeptBytes` each. */
export const initializeParams = (params: unknown, protocolVersion: string): InitializeParams => {
  const p = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>
  return { protocolVersion, capabilities: bounded(p.capabilities, {}), clientInfo: bounded(p.clientInfo, { name: "unknown", version: "0" }) }
}

const post = (transport: WebStandardStreamableHTTPServerTransport, body: unknown, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await transport.handleRequest(
      new Request("http://gateway/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(body)
      }),
      { parsedBody: body }
    )
    // Drains the answer (an SSE stream that ends once the initialize result is out).
    await response.text()
    return response.status
  })

/** Replays the recorded handshake on a fresh transport (already connected to its Server); true when it took. */
export const replayHandshake = (transport: WebStandardStreamableHTTPServerTransport, sessionId: string, init: InitializeParams) =>
  Effect.gen(function* () {
    const status = yield* post(transport, { jsonrpc: "2.0", id: 0, method: "initialize", params: init })
    if (status !== 200 || transport.sessionId !== sessionId) return false
    yield* post(transport, { jsonrpc: "2.0", method: "notifications/initialized" }, {
      "mcp-session-id": sessionId,
      "mcp-protocol-version": init.protocolVersion
    })
    return true
  })
