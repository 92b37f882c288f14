/**
 * Steady traffic against the local platform's service urls while replicas are killed (localFaults in
 * localReplicas.test.ts): official MCP and A2A SDK clients, an audit writer and an alert sender, each recording every
 * outcome with its time, so the test can tell what a client saw around each kill and what the platform kept.
 * Every request takes a connection of its own, so the balancers spread them over the replicas as a Kubernetes Service
 * spreads new connections.
 */
import { type Client as A2aClient, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { type Task } from "@a2a-js/sdk"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { randomUUID } from "node:crypto"
import { request } from "../../gateway/test/A2aSdk.ts"
import { auditEvent } from "../../storage/test/support/Harness.ts"

/** One request's outcome: when it started and ended, and its error (a retryable one: the client goes on). */
interface Outcome {
  readonly startedAt: number
  readonly at: number
  readonly error?: string
}

export interface Traffic {
  readonly name: string
  readonly outcomes: Array<Outcome>
  /** Stops after the request in flight; resolves once the loop has ended. */
  readonly stop: () => Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** `step` every `intervalMs` until stopped, each outcome recorded. */
const loop = (name: string, intervalMs: number, step: () => Promise<void>): Traffic => {
  const outcomes: Array<Outcome> = []
  let running = true
  const done = (async () => {
    while (running) {
      const startedAt = Date.now()
      try {
        await step()
        outcomes.push({ startedAt, at: Date.now() })
      } catch (e) {
        outcomes.push({ startedAt, at: Date.now(), error: e instanceof Error ? `${e.message}${e.cause ? ` (${String(e.cause)})` : ""}` : String(e) })
      }
      await sleep(intervalMs)
    }
  })()
  return { name, outcomes, stop: () => ((running = false), done) }
}

const fresh = (token: string) => ({ authorization: `Bearer ${token}`, connection: "close" })

/** An MCP session through the gateway's url calling a read tool; the session must outlive any replica. */
export const mcpClient = async (gatewayUrl: string, persona: string, token: string, tool: string, intervalMs: number) => {
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), { requestInit: { headers: fresh(token) } })
  const client = new Client({ name: `fault-${persona}`, version: "1.0.0" })
  await client.connect(transport)
  const sessionId = transport.sessionId
  const traffic = loop(`mcp ${persona}`, intervalMs, async () => {
    const result = await client.callTool({ name: tool, arguments: {} })
    if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content).slice(0, 200)}`)
    // A new session would mean the old one was lost: the SDK does not re-initialize by itself, so this guards the test.
    if (transport.sessionId !== sessionId) throw new Error("the MCP session changed")
  })
  return { ...traffic, stop: () => traffic.stop().then(() => client.close().catch(() => undefined)) }
}

/** An A2A conversation through the gateway's url: every message continues the first one's context. */
export const a2aClient = async (gatewayUrl: string, persona: string, token: string, intervalMs: number) => {
  const authed: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    for (const [k, v] of Object.entries(fresh(token))) headers.set(k, v)
    return fetch(input, { ...init, headers })
  }
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: authed })
  }))
  const client: A2aClient = await factory.createFromUrl(gatewayUrl)
  let contextId = ""
  const contexts = new Set<string>()
  const traffic = loop(`a2a ${persona}`, intervalMs, async () => {
    const task = (await client.sendMessage(request("what is failing in demo-shop?", { contextId }))) as Task
    if (task.status?.state !== 3) throw new Error(`task ${task.id} ended in state ${task.status?.state}`)
    contextId = task.contextId
    contexts.add(task.contextId)
  })
  return { ...traffic, contexts }
}

/** A GET every `intervalMs` that must answer one of `statuses` (a service the drill has no SDK client for). */
export const probe = (name: string, url: string, token: string | undefined, statuses: ReadonlyArray<number>, intervalMs: number) =>
  loop(name, intervalMs, async () => {
    const res = await fetch(url, { redirect: "manual", headers: token === undefined ? { connection: "close" } : fresh(token) })
    await res.arrayBuffer()
    if (!statuses.includes(res.status)) throw new Error(`${name} answered ${res.status}`)
  })

/** POST with a connection of its own; resolves with the status and the JSON body. */
const post = async (url: string, token: string, body: unknown) => {
  const res = await fetch(url, { method: "POST", headers: { ...fresh(token), "content-type": "application/json" }, body: JSON.stringify(body) })
  return { status: res.status, body: await res.json().catch(() => undefined) }
}

/**
 * Audit batches to storage's url, alternating two chains. A batch that was not acknowledged (an error, a cut
 * connection) is sent again, same ids, until it is: storage skips ids it has, so nothing is stored twice. `acknowledged`
 * holds every id storage answered 201 or 202 (written later from its dead-letter queue) for.
 */
export const auditWriter = (storageUrl: string, token: string, chains: readonly [string, string], perBatch: number, intervalMs: number) => {
  const acknowledged: Array<string> = []
  const batchOf = (size: number) => Array.from({ length: size }, (_, i) => ({ ...auditEvent({ correlation_id: chains[i % 2] }), event_id: randomUUID() }))
  const send = (url: string, batch: ReadonlyArray<{ readonly event_id: string }>) =>
    post(`${url}/api/v1/audit/events/batch`, token, batch).then(({ status }) => status === 201 || status === 202, () => false)
  let pending: ReadonlyArray<{ readonly event_id: string }> | undefined
  let resends = 0
  const traffic = loop("audit", intervalMs, async () => {
    if (pending === undefined) pending = batchOf(perBatch)
    else resends++
    if (!(await send(storageUrl, pending))) throw new Error("storage did not acknowledge the batch")
    acknowledged.push(...pending.map((e) => e.event_id))
    pending = undefined
  })
  /**
   * A batch of `size` sent to one replica, which the drill kills while it is in flight; not acknowledged there, it
   * goes again through the service's url as a client retries a cut request. Resolves with whether it was cut.
   */
  const sendThrough = async (replicaUrl: string, size: number) => {
    const batch = batchOf(size)
    const cut = !(await send(replicaUrl, batch))
    if (cut) {
      do resends++
      while (!(await send(storageUrl, batch)))
    }
    acknowledged.push(...batch.map((e) => e.event_id))
    return cut
  }
  return { ...traffic, acknowledged, sendThrough, resends: () => resends }
}

/**
 * Alerts, each a new one, to signal ingestion's url as Alertmanager posts them, on a workload of a namespace the
 * platform does not manage (its request is blocked at once, so the drill adds no analyses). An alert that was not
 * acknowledged is sent again. `requests` maps each acknowledged alert to the RemediationRequest it was given.
 */
export const alertSender = (signalsUrl: string, token: string, namespace: string, intervalMs: number) => {
  const requests = new Map<string, string>()
  let next = 0
  let pending: string | undefined
  const traffic = loop("signals", intervalMs, async () => {
    pending ??= `FaultDrill${++next}x${randomUUID().slice(0, 8)}`
    const { status, body } = await post(`${signalsUrl}/api/v1/signals/prometheus`, token, {
      version: "4",
      groupKey: `{}:{alertname="${pending}"}`,
      status: "firing",
      receiver: "kubemend",
      groupLabels: { alertname: pending },
      commonLabels: {},
      commonAnnotations: {},
      externalURL: "http://alertmanager.local:9093",
      alerts: [{
        status: "firing",
        labels: { alertname: pending, severity: "warning", namespace, cronjob: "report-generator" },
        annotations: { summary: "fault drill" },
        startsAt: new Date().toISOString(),
        endsAt: "0001-01-01T00:00:00Z",
        generatorURL: "http://prometheus.local:9090/graph",
        fingerprint: pending
      }]
    })
    if (status !== 201 && status !== 202) throw new Error(`signal ingestion answered ${status}`)
    requests.set(pending, (body as { remediationRequestRef: { name: string } }).remediationRequestRef.name)
    pending = undefined
  })
  return { ...traffic, requests }
}

/**
 * Who leads the controllers, every `intervalMs`, from each live replica's `svc_leader` gauge: an error while none
 * does (the drill's failover), and `twoLeaders` counts the reads where two did (which must never happen).
 */
export const leaderProbe = (replicas: ReadonlyArray<{ readonly metricsUrl: string }>, intervalMs: number) => {
  let twoLeaders = 0
  const leaders: Array<string> = []
  const traffic = loop("controllers lease", intervalMs, async () => {
    const leading = (await Promise.all(replicas.map((r) =>
      fetch(`${r.metricsUrl}/metrics`, { headers: { connection: "close" } }).then((res) =>
        res.text()
      ).then(
        (text) => /^svc_leader\{[^}]*identity="([^"]+)"[^}]*\} 1$/m.exec(text)?.[1],
        () => undefined
      )
    ))).filter((identity) => identity !== undefined)
    if (leading.length > 1) twoLeaders++
    if (leading.length === 0) throw new Error("no controller replica leads")
    if (leaders.at(-1) !== leading[0]) leaders.push(leading[0]!)
  })
  return { ...traffic, leaders, twoLeaders: () => twoLeaders }
}
