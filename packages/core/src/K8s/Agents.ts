/**
 * Connection reuse for the API server. client-node 1.4 builds a new http(s).Agent for every request
 * (`KubeConfig.createAgent`, called from the typed clients and from `applyToHTTPSOptions`), so every API call opened a
 * new TCP (and TLS) connection: under load the service spent its time connecting. `pooled` keeps one keep-alive agent
 * per distinct TLS identity (CA, client certificate, server name, verification) and hands it out instead; a rotated
 * client certificate (exec plugin) gets a new agent. Proxy agents are left as client-node makes them.
 */
import type { KubeConfig } from "@kubernetes/client-node"
import { createHash } from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"

/**
 * An idle socket is closed after this, well before servers close theirs (node's 5 s, Go's longer), so a request is
 * never sent on a connection the server is closing at that moment (ECONNRESET). Busy sockets are not affected; idle
 * sockets are unref'd by node, so the pool never keeps the process alive.
 */
const idleTimeoutMs = 2_000

type AgentFactory = (cluster: unknown, options: https.AgentOptions) => http.Agent

/** The TLS fields client-node copies into an agent's options; equal fields, same connections. */
const identity = (o: https.AgentOptions) => {
  const hash = createHash("sha256")
  for (const v of [o.ca, o.cert, o.key, o.pfx, o.passphrase, o.rejectUnauthorized, o.servername]) {
    const parts = Array.isArray(v) ? v : [v]
    hash.update(parts.map((p) => (p === undefined ? "-" : Buffer.isBuffer(p) ? p.toString("base64") : String(p))).join(",")).update("|")
  }
  return hash.digest("base64")
}

/** Makes `kc` hand out pooled keep-alive agents; returns `kc`. */
export const pooled = (kc: KubeConfig): KubeConfig => {
  const target = kc as unknown as { createAgent: AgentFactory }
  const original = target.createAgent.bind(kc)
  const agents = new Map<string, http.Agent>()
  target.createAgent = (cluster, options) => {
    const fresh = original(cluster, options)
    // Exactly node's agents: proxy agents (some subclass https.Agent) keep client-node's behaviour.
    if (fresh.constructor !== https.Agent && fresh.constructor !== http.Agent) return fresh
    const key = `${fresh instanceof https.Agent ? "https" : "http"}:${identity(options)}`
    let agent = agents.get(key)
    if (agent === undefined) {
      const pool = { ...options, keepAlive: true, timeout: idleTimeoutMs }
      agent = fresh instanceof https.Agent ? new https.Agent(pool) : new http.Agent(pool)
      agents.set(key, agent)
    }
    fresh.destroy()
    return agent
  }
  return kc
}
