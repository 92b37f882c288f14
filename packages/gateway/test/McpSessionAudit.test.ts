/**
 * `mcp.session_init` records the protocol version the session runs: the one the client asked for when the gateway
 * supports it (the official client asks for the SDK's latest), else the latest the gateway speaks, as its
 * initialize answer says.
 */
import { assert, layer } from "@effect/vitest"
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { connect, mcpHeaders, raw } from "./support/Client.ts"
import { InfraLive, startGateway, token } from "./support/Harness.ts"

const initialize = (protocolVersion: string) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } } })

layer(InfraLive, { excludeTestServices: true })("mcp.session_init", (it) => {
  it.scoped("records the negotiated protocol version", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway()
      const sre = yield* token("sre")
      const c = yield* connect(gw.url, sre)
      const headers = { ...mcpHeaders, accept: "application/json" }
      const older = yield* raw(`${gw.url}/mcp`, { method: "POST", headers, body: initialize("2025-06-18"), token: sre })
      const unknown = yield* raw(`${gw.url}/mcp`, { method: "POST", headers, body: initialize("1999-01-01"), token: sre })
      assert.strictEqual(older.json.result.protocolVersion, "2025-06-18")
      assert.strictEqual(unknown.json.result.protocolVersion, LATEST_PROTOCOL_VERSION)

      const inits = (yield* gw.audit.entries).filter((e) => e.type === "mcp.session_init")
      const versionOf = (sid: string | null | undefined) => inits.find((e) => e.data["mcp_session_id"] === sid)?.data["protocol_version"]
      assert.strictEqual(versionOf(c.transport.sessionId), LATEST_PROTOCOL_VERSION)
      assert.strictEqual(versionOf(older.headers.get("mcp-session-id")), "2025-06-18")
      assert.strictEqual(versionOf(unknown.headers.get("mcp-session-id")), LATEST_PROTOCOL_VERSION)
    }))
})
