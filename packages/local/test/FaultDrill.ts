/**
 * Issue 20's fault drill on the local platform with two replicas of everything: steady traffic (faultTraffic.ts),
 * `kill -9` of one replica of each service in turn and of the leading controller process, then what clients saw and
 * what the platform kept, as figures. The assertions live in the test; this module measures.
 */
import { randomUUID } from "node:crypto"
import type { StackJson } from "../src/Summary.ts"
import { a2aClient, alertSender, auditWriter, leaderProbe, mcpClient, probe, type Traffic } from "./FaultTraffic.ts"

export interface Kill {
  readonly target: string
  readonly at: number
  /** Until the service answered again: its clients' first success after their last error (0: none saw one). */
  readonly failoverSeconds: number
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** SIGKILL, then until its health port is closed (a connection accepted in between would be cut, as in a cluster). */
export const killReplica = async (replica: { readonly pid: number; readonly healthUrl: string }) => {
  process.kill(replica.pid, "SIGKILL")
  while (await fetch(`${replica.healthUrl}/healthz`).then(() => true, () => false)) await sleep(50)
}

/**
 * Seconds from a kill at `at` until every traffic it touched was served again: for each, the start of its first
 * success after its last error before `until` (the next kill); 0 when it saw none; Infinity when it never recovered.
 * The start, not the end: an A2A message takes seconds to answer, which is not time the service was away.
 */
const failoverOf = (at: number, until: number, affected: ReadonlyArray<Traffic>) =>
  Math.max(
    0,
    ...affected.map(({ outcomes }) => {
      const lastError = outcomes.filter((o) => o.at >= at && o.at < until && o.error !== undefined).at(-1)
      if (lastError === undefined) return 0
      const success = outcomes.find((o) => o.at > lastError.at && o.error === undefined)
      return success === undefined ? Infinity : Math.max(0, success.startedAt - at) / 1000
    })
  )

export const startTraffic = async (stack: StackJson, controllers: ReadonlyArray<{ readonly metricsUrl: string }>) => {
  const gateway = stack.gateway.url
  const tool = `${stack.toolPrefix}_list_remediations`
  const run = randomUUID().slice(0, 8)
  const chains = [`fault-${run}-a`, `fault-${run}-b`] as const
  // One persona per client: the gateway's per-user rate limit (60 tool calls a minute) is not what is drilled.
  const mcp = await Promise.all(["sre", "observability", "l3-audit"].map((p) => mcpClient(gateway, p, stack.tokens[p]!, tool, 1500)))
  const a2a = await Promise.all(["cicd", "remediation-approver"].map((p) => a2aClient(gateway, p, stack.tokens[p]!, 1000)))
  const audit = auditWriter(stack.storage.url, stack.serviceTokens.gateway, chains, 20, 300)
  const signals = alertSender(stack.signals.url, stack.serviceTokens.alertmanager, "legacy-batch", 500)
  const agent = probe("agent", `${stack.agent.url}/api/v1/incident/session/none`, stack.serviceTokens.operator, [404], 500)
  const console = probe("console", `${stack.console.url}/oauth2/sign_in`, undefined, [200, 302], 500)
  const lease = leaderProbe(controllers, 250)
  return { mcp, a2a, audit, signals, agent, console, lease, chains, all: [...mcp, ...a2a, audit, signals, agent, console, lease] }
}

export type RunningTraffic = Awaited<ReturnType<typeof startTraffic>>

/** One step of the drill: what to kill, and which traffic must recover from it. */
export interface Victim {
  readonly target: string
  readonly kill: () => Promise<void>
  readonly affected: (traffic: RunningTraffic) => ReadonlyArray<Traffic>
  /** Until the next kill (traffic goes on): a few seconds, or until the service has recovered. */
  readonly settle: () => Promise<void>
}

/** Traffic for `warmupMs`, each victim killed in turn, traffic stopped; the kills with their failover seconds. */
export const runDrill = async (traffic: RunningTraffic, victims: ReadonlyArray<Victim>, warmupMs: number) => {
  await sleep(warmupMs)
  const killed: Array<{ readonly victim: Victim; readonly at: number }> = []
  for (const victim of victims) {
    const at = Date.now()
    await victim.kill()
    killed.push({ victim, at })
    await victim.settle()
  }
  await Promise.all(traffic.all.map((t) => t.stop()))
  const end = Date.now()
  return killed.map(({ at, victim }, i): Kill => ({
    target: victim.target,
    at,
    failoverSeconds: failoverOf(at, killed[i + 1]?.at ?? end, victim.affected(traffic))
  }))
}

/** The RemediationRequests in `namespace` by their signal's name (the dev API server, with the operator's token). */
export const requestsBySignal = async (stack: StackJson) => {
  const res = await fetch(`${stack.kube.url}/apis/${stack.apiGroup}/v1alpha1/namespaces/${stack.namespace}/remediationrequests`, {
    headers: { authorization: `Bearer ${stack.serviceTokens.operator}` }
  })
  const list = (await res.json()) as { items: Array<{ metadata: { name: string }; spec: { signalName: string } }> }
  const bySignal = new Map<string, Array<string>>()
  for (const rr of list.items) bySignal.set(rr.spec.signalName, [...(bySignal.get(rr.spec.signalName) ?? []), rr.metadata.name])
  return bySignal
}

/** Every audit event of `chain` as storage returns them, page by page. */
export const storedEvents = async (storageUrl: string, token: string, chain: string) => {
  const ids: Array<string> = []
  for (let offset = 0;; offset += 1000) {
    const res = await fetch(`${storageUrl}/api/v1/audit/events?correlation_id=${chain}&limit=1000&offset=${offset}`, {
      headers: { authorization: `Bearer ${token}` }
    })
    const page = (await res.json()) as { data: Array<{ event_id: string }>; pagination: { has_more: boolean } }
    ids.push(...page.data.map((e) => e.event_id))
    if (!page.pagination.has_more) return ids
  }
}

export const verifyChain = async (storageUrl: string, token: string, chain: string) =>
  (await (await fetch(`${storageUrl}/api/v1/audit/verify-chain`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ correlation_id: chain })
  })).json()) as { is_valid: boolean; total_events: number; verified_events: number }

/** `remediation X: A -> B` lines the controllers printed more than once: one transition processed twice. */
export const repeatedTransitions = (output: string) => {
  const seen = new Map<string, number>()
  for (const m of output.matchAll(/"msg":"(remediation \S+: \S+ -> \S+|started job \S+)"/g)) seen.set(m[1]!, (seen.get(m[1]!) ?? 0) + 1)
  return [...seen].filter(([, n]) => n > 1).map(([line]) => line)
}

const pad = (s: string | number, n: number) => String(s).padEnd(n)

/** The figures the issue asks for, as a table a person reads in the test's output. */
export const figures = (
  kills: ReadonlyArray<Kill>,
  traffic: RunningTraffic,
  stored: { sent: number; acknowledged: number; stored: number; duplicates: number }
) =>
  [
    "fault drill: kill -9 of one replica of each service in turn, under steady traffic",
    ...kills.map((k) => `  ${pad(k.target, 24)} failover ${k.failoverSeconds.toFixed(2)} s`),
    ...traffic.all.map((t) => {
      const errors = t.outcomes.filter((o) => o.error !== undefined)
      const counts = new Map<string, number>()
      for (const e of errors) counts.set(e.error!, (counts.get(e.error!) ?? 0) + 1)
      const seen = [...counts].map(([message, n]) => (n === 1 ? message : `${message} ×${n}`)).join("; ")
      return `  ${pad(t.name, 24)} ${pad(t.outcomes.length - errors.length, 4)} ok ${pad(errors.length, 3)} errors ${seen}`
    }),
    `  audit events sent ${stored.sent}, acknowledged ${stored.acknowledged}, stored ${stored.stored} (${stored.duplicates} twice), batches resent ${traffic.audit.resends()}`,
    `  alerts acknowledged ${traffic.signals.requests.size}, requests ${new Set(traffic.signals.requests.values()).size}`
  ].join("\n")

/** NotificationRequests the local inbox received more than once (a notification sent twice). */
export const repeatedNotifications = async (deliveriesUrl: string) => {
  const deliveries = (await (await fetch(deliveriesUrl)).json()) as Array<{ body: { name?: string } }>
  const names = deliveries.map((d) => d.body.name ?? "")
  return names.filter((name, i) => names.indexOf(name) !== i)
}
