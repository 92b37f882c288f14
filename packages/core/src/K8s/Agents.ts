/**
 * Connection reuse for the API server. client-node 1.4 builds a new http(s).Agent for every request
 * (`KubeConfig.createAgent`, called from the typed clients and from `applyToHTTPSOptions`), so every API call opened a
 * new TCP (and TLS) connection: under load the service spent its time connecting. `pooled` keeps one keep-alive agent
 * per distinct TLS identity (CA, client certificate, server name, verification) and hands it out instead; a rotated
 * client certificate (exec plugin) gets a new agent. Proxy agents are left as client-node makes them.
 *
 * This runs on every call, so it neither builds client-node's throw-away agent nor hashes the certificates: the agent
 * kind follows client-node's own rule, and identities are compared field by field (Buffer.equals on the PEMs).
 */
import type { KubeConfig } from "@kubernetes/client-node"
import * as http from "node:http"
import * as https from "node:https"

/**
 * An idle socket is closed after this, well before servers close theirs (node's 5 s, Go's longer), so a request is
 * never sent on a connection the server is closing at that moment (ECONNRESET). Busy sockets are not affected; idle
 * sockets are unref'd by node, so the pool never keeps the process alive.
 */
const idleTimeoutMs = 2_000

interface Cluster {
  readonly server?: string
  readonly skipTLSVerify?: boolean
  readonly proxyUrl?: string
}
type AgentFactory = (cluster: Cluster | null, options: https.AgentOptions) => http.Agent

/** The TLS fields client-node copies into an agent's options; equal fields, same connections. */
const identityFields = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"] as const

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b)
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]))
  return false
}

const sameIdentity = (a: https.AgentOptions, b: https.AgentOptions) => identityFields.every((f) => sameValue(a[f], b[f]))

/** client-node's `createAgent` rule, without building the agent: undefined where it would do something else. */
const plainKind = (cluster: Cluster | null): "http" | "https" | undefined => {
  if (cluster === null || cluster.proxyUrl) return undefined
  if (cluster.server?.startsWith("http:")) return cluster.skipTLSVerify ? "http" : undefined
  return "https"
}

/** Makes `kc` hand out pooled keep-alive agents; returns `kc`. */
export const pooled = (kc: KubeConfig): KubeConfig => {
  const target = kc as unknown as { createAgent: AgentFactory }
  const original = target.createAgent.bind(kc)
  const agents: Array<{ readonly kind: "http" | "https"; readonly options: https.AgentOptions; readonly agent: http.Agent }> = []
  target.createAgent = (cluster, options) => {
    // Proxies, and the plain-HTTP-without-skipTLSVerify refusal, stay client-node's.
    const kind = plainKind(cluster)
    if (kind === undefined) return original(cluster, options)
    const known = agents.find((a) => a.kind === kind && sameIdentity(a.options, options))
    if (known !== undefined) return known.agent
    const pool = { ...options, keepAlive: true, timeout: idleTimeoutMs }
    const agent = kind === "https" ? new https.Agent(pool) : new http.Agent(pool)
    agents.push({ kind, options: pool, agent })
    return agent
  }
  return kc
}
