/**
 * `LOCAL_REPLICAS=2 npm start`: two processes of every service behind a balancer on the service's ports.
 * `.local/stack.json` lists each replica; both answer health; connections to storage's and signal ingestion's `url`
 * reach both in turn (each API replica presents a certificate of its own, so the client sees which one it reached),
 * both storage replicas on one database process; the agent keeps a client on one replica, as its Service's ClientIP
 * affinity does, until it dies. With Valkey (Redis on this machine and CI), the gateway replicas share their state:
 * an official MCP client whose every request takes a new connection is served by both, also once the replica that
 * opened its session is gone; without, each client stays on one gateway. A killed replica is skipped. The controllers
 * run as two operator processes under the Lease: `kill -9` of the leader and the other one leads within the lease
 * duration and moves remediations on. Ctrl-C stops every process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import type { StackJson } from "../src/local/Summary.ts"
import { trustAuthority } from "@kubemend/core/Tls/Trust"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { incident } from "../../agent/test/support.ts"
import { unreachable } from "../../gateway/test/support/Redis.ts"
import { waitForOutput, waitForStack } from "./localPlatform.ts"

const root = Path.resolve(__dirname, "..", "..", "..")
const services = ["gateway", "agent", "storage", "signals", "console"] as const
const apis = ["gateway", "agent", "storage", "signals"] as const
// The gateway shares its state when Redis answers (it must under CI); the platform is told where it is.
const shared = unreachable === undefined
const valkeyUrl = process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379"

let child: ChildProcess
let exited: Promise<number | null>
let output = ""
let stack: StackJson
let ca = ""
let state = ""

/** Processes started with this platform's state directory in their environment (Linux /proc). */
const processesOfPlatform = () =>
  Fs.readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).flatMap((pid) => {
    try {
      return Fs.readFileSync(`/proc/${pid}/environ`, "utf8").includes(`LOCAL_STATE_DIR=${state}\0`) ? [pid] : []
    } catch {
      return []
    }
  })

/** One request on a connection of its own: the status and the CN of the certificate the server presented. */
const freshHttps = (url: string, token?: string) =>
  new Promise<{ readonly status: number; readonly cn: string }>((resolve, reject) => {
    const request = Https.get(url, { ca, agent: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }, (res) => {
      const cn = String((res.socket as import("node:tls").TLSSocket).getPeerCertificate().subject.CN)
      res.resume()
      res.once("end", () => resolve({ status: res.statusCode ?? 0, cn }))
    })
    request.once("error", reject)
  })

/** A fresh connection's `/metrics` (fetch here would reuse one connection, and so one replica). */
const startTimeVia = (metricsUrl: string) =>
  fetch(`${metricsUrl}/metrics`, { headers: { connection: "close" } }).then((r) => r.text()).then((text) =>
    text.split("\n").find((l) => /^\w*process_start_time_seconds /.test(l))
  )

/** SIGKILL, then until its ports are closed (a connection accepted in between would be cut, as in a cluster). */
const kill = async (replica: { readonly pid: number; readonly healthUrl: string }) => {
  process.kill(replica.pid, "SIGKILL")
  while (await fetch(`${replica.healthUrl}/healthz`).then(() => true, () => false)) await new Promise((r) => setTimeout(r, 50))
}

describe("local platform with LOCAL_REPLICAS=2", () => {
  beforeAll(async () => {
    state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-replicas-"))
    Fs.chmodSync(state, 0o755)
    child = spawn(process.execPath, ["--import", "tsx", Path.join(root, "packages/operator/src/local.ts")], {
      cwd: root,
      env: {
        ...process.env,
        LOCAL_PORTS: "auto",
        LOCAL_QUIET: "true",
        LOCAL_STATE_DIR: state,
        LOCAL_REPLICAS: "2",
        LOCAL_VALKEY_URL: valkeyUrl,
        // Investigations take seconds and new signals keep coming, so one is running when its agent replica dies.
        LOCAL_LLM_LATENCY: "3s",
        LOCAL_SIGNAL_INTERVAL: "3s"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    child.stdout!.on("data", (d) => (output += d))
    child.stderr!.on("data", (d) => (output += d))
    exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)))
    stack = await waitForStack(Path.join(state, ".local", "stack.json"), child, () => output, 300_000)
    ca = Fs.readFileSync(stack.tls.caFile, "utf8")
    trustAuthority("local", ca)
  }, 320_000)

  afterAll(async () => {
    if (child.exitCode !== null) return
    child.kill("SIGTERM")
    const stopped = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 60_000))])
    if (!stopped) child.kill("SIGKILL")
  }, 90_000)

  it("lists two replicas of every service, each with its own url, health and pid, and both answer health", async () => {
    for (const svc of services) {
      const { replicas, url } = stack[svc]
      expect(replicas, svc).toHaveLength(2)
      expect(new Set(replicas.map((r) => r.url)).size, svc).toBe(2)
      expect(replicas.map((r) => r.url), svc).not.toContain(url)
      for (const replica of replicas) {
        expect(replica.pid, svc).toBeGreaterThan(0)
        expect(Fs.readFileSync(`/proc/${replica.pid}/cmdline`, "utf8"), svc).toContain(`packages/${svc}/src/main.ts`)
        expect((await fetch(`${replica.healthUrl}/healthz`)).status, `${svc} ${replica.healthUrl}`).toBe(200)
      }
      expect((await fetch(`${stack[svc].healthUrl}/healthz`)).status, svc).toBe(200)
    }
    if (process.env["CI"] !== undefined) expect(unreachable).toBeUndefined()
    expect(output).toContain(
      shared ? `Gateway replicas share MCP sessions, A2A tasks, session caps and rate limits in Valkey at ${valkeyUrl}` : "Gateway sessions are per replica"
    )
    expect(output).toContain("The controllers run as 2 operator processes under the Lease kubemend-operator")
  })

  it("connections to the APIs' urls reach both replicas in turn, but the agent's (and a gateway's without Valkey) stay on one", async () => {
    for (const svc of apis) {
      // Storage answers an authenticated audit query from either replica: both reach the one database.
      const path = svc === "storage" ? "/api/v1/audit/events?limit=1" : "/"
      const token = svc === "storage" ? stack.serviceTokens.gateway : undefined
      const answers = []
      for (let i = 0; i < 4; i++) answers.push(await freshHttps(`${stack[svc].url}${path}`, token))
      const sticky = svc === "agent" || (svc === "gateway" && !shared)
      const reached = sticky ? [`kubemend-${svc}-0`] : [`kubemend-${svc}-0`, `kubemend-${svc}-1`]
      expect(new Set(answers.map((a) => a.cn)), svc).toEqual(new Set(reached))
      if (svc === "storage") expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200])
    }
  })

  it("every service's metrics url reaches both replica processes in turn", async () => {
    for (const svc of services) {
      const own = await Promise.all(stack[svc].replicas.map((r) => startTimeVia(r.metricsUrl)))
      const seen = new Set<string | undefined>()
      for (let i = 0; i < 4; i++) seen.add(await startTimeVia(stack[svc].metricsUrl))
      // Replica 1 starts once replica 0 is healthy, seconds later, so their start times differ.
      expect(new Set(own).size, svc).toBe(2)
      expect(seen, svc).toEqual(new Set(own))
    }
  })

  it.skipIf(!shared)("an MCP session through the gateway's url is served by both replicas, also once the one that opened it is gone", async () => {
    // Every request on a new connection, so the balancer sends them to the replicas in turn.
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.gateway.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${stack.tokens.sre}`, connection: "close" } }
    })
    const client = new Client({ name: "replicas", version: "1.0.0" })
    await client.connect(transport)
    try {
      for (let i = 0; i < 4; i++) expect((await client.listTools()).tools.length).toBeGreaterThan(0)
      await kill(stack.gateway.replicas[0]!)
      for (let i = 0; i < 2; i++) {
        const result = await client.callTool({ name: "svc_list_remediations", arguments: {} })
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
      }
    } finally {
      await client.close().catch(() => undefined)
    }
  })

  it("skips a killed replica: the service's url keeps answering from the other one", { timeout: 240_000 }, async () => {
    // The agent replica every client was kept on dies: its clients move to the other one, which does not know the
    // sessions the dead one ran (404: the analysis controller's cue to regenerate, lifecyclePipeline.test.ts).
    const agent = (path: string, init: RequestInit = {}) =>
      fetch(`${stack.agent.url}/api/v1${path}`, {
        ...init,
        headers: { "content-type": "application/json", authorization: `Bearer ${stack.serviceTokens.operator}`, connection: "close" }
      })
    await waitForOutput(() => output, /remediation \S+: \S+ -> Analyzing/, child, 60_000)
    const before = output.length
    const submitted = await agent("/incident/analyze", { method: "POST", body: JSON.stringify(incident("ReplicaDies")) })
    expect(submitted.status).toBe(202)
    const { session_id } = await submitted.json()
    expect((await agent(`/incident/session/${session_id}`)).status).toBe(200)
    await kill(stack.agent.replicas[0]!)
    for (let i = 0; i < 3; i++) expect((await freshHttps(`${stack.agent.url}/`)).cn).toBe("kubemend-agent-1")
    expect((await agent(`/incident/session/${session_id}`)).status).toBe(404)
    // The analysis controller's polls find its running sessions gone too; it submits them again (to agent-1) and
    // the remediation moves on from Analyzing.
    const since = () => output.slice(before)
    const regenerating = /agent session of ai-(\S+?)(?:-r\d+)? is gone \(agent restarted\?\); regenerating/
    await waitForOutput(since, regenerating, child, 60_000)
    const rr = regenerating.exec(since())![1]!
    await waitForOutput(since, new RegExp(`remediation ${rr}: Analyzing -> `), child, 120_000)
    const [victim, survivor] = stack.console.replicas
    await kill(victim!)
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${stack.console.url}/oauth2/sign_in`, { redirect: "manual", headers: { connection: "close" } })
      expect(res.status).toBeLessThan(500)
    }
    expect((await fetch(`${survivor!.healthUrl}/healthz`)).status).toBe(200)
    // The embedded database runs in a process of its own: the storage replica that started first may die too.
    await kill(stack.storage.replicas[0]!)
    for (let i = 0; i < 4; i++) {
      const answer = await freshHttps(`${stack.storage.url}/api/v1/audit/events?limit=1`, stack.serviceTokens.gateway)
      expect(answer).toEqual({ status: 200, cn: "kubemend-storage-1" })
    }
  })

  it("the controllers run as two operator processes under the Lease; a killed leader's lease passes to the other", { timeout: 120_000 }, async () => {
    const { leaseName, replicas } = stack.controllers!
    expect(replicas).toHaveLength(2)
    for (const replica of replicas) {
      expect(Fs.readFileSync(`/proc/${replica.pid}/cmdline`, "utf8")).toContain("packages/operator/src/main.ts")
      // The standby is ready too: it is idle, not broken.
      expect((await fetch(`${replica.healthUrl}/readyz`)).status, replica.identity).toBe(200)
    }
    const leaderGauge = async (replica: { readonly metricsUrl: string; readonly identity: string }) => {
      const text = await fetch(`${replica.metricsUrl}/metrics`).then((r) => r.text())
      const line = text.split("\n").find((l) => l.startsWith(`svc_leader{lease="${leaseName}",identity="${replica.identity}"}`))
      return Number(line?.split(" ").pop())
    }
    const gauges = await Promise.all(replicas.map(leaderGauge))
    expect([...gauges].sort()).toEqual([0, 1])
    const leader = replicas[gauges.indexOf(1)]!
    const standbyIndex = gauges.indexOf(0)
    const standby = replicas[standbyIndex]!
    const before = output.length
    const killedAt = Date.now()
    await kill(leader)
    while ((await leaderGauge(standby)) !== 1) {
      expect(Date.now() - killedAt, "the standby never took the lease").toBeLessThan(60_000)
      await new Promise((r) => setTimeout(r, 100))
    }
    const failover = (Date.now() - killedAt) / 1000
    console.log(`controller failover after kill -9 of the leader: ${failover.toFixed(1)} s (lease 15 s, retry period 2 s)`)
    // The lease expires at most 15 s after the leader's last renew (before the kill); the standby tries every 2 s
    // (jittered up to 2.4 s). A second and a half for the gauge polls and a loaded machine's timers.
    expect(failover).toBeLessThanOrEqual(15 + 2.4 + 1.5)
    // New signals keep coming: the new leader moves their remediations on.
    await waitForOutput(() => output.slice(before), new RegExp(`\\[operator-${standbyIndex}\\] .*remediation \\S+: \\S+ -> `), child, 60_000)
  })

  it("Ctrl-C stops every replica, the database process and the balancers", { timeout: 90_000 }, async () => {
    child.kill("SIGINT")
    expect(await exited).toBe(0)
    expect(processesOfPlatform()).toEqual([])
    for (const svc of services) {
      for (const target of [stack[svc].healthUrl, ...stack[svc].replicas.map((r) => r.healthUrl)]) {
        await expect(fetch(`${target}/healthz`), target).rejects.toThrow()
      }
    }
    for (const controller of stack.controllers!.replicas) await expect(fetch(`${controller.healthUrl}/healthz`)).rejects.toThrow()
  })
})
