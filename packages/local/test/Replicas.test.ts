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
import type { StackJson } from "../src/Summary.ts"
import { trustAuthority } from "@kubemend/core/Tls/Trust"
import { incident } from "../../agent/test/Harness.ts"
import { unreachable } from "../../gateway/test/support/Redis.ts"
import {
  figures,
  killReplica,
  repeatedNotifications,
  repeatedTransitions,
  requestsBySignal,
  runDrill,
  sleep,
  startTraffic,
  storedEvents,
  verifyChain
} from "./FaultDrill.ts"
import { waitForOutput, waitForStack } from "./LocalPlatform.ts"

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

describe("local platform with LOCAL_REPLICAS=2", () => {
  beforeAll(async () => {
    state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-replicas-"))
    Fs.chmodSync(state, 0o755)
    child = spawn(process.execPath, ["--import", "tsx", Path.join(root, "packages/local/src/main.ts")], {
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

  it.skipIf(!shared)(
    "fault drill: kill -9 of one replica of each service and of the leading controller under steady traffic",
    { timeout: 300_000 },
    async () => {
      const { leaseName, replicas: controllers } = stack.controllers!
      expect(controllers).toHaveLength(2)
      for (const replica of controllers) {
        expect(Fs.readFileSync(`/proc/${replica.pid}/cmdline`, "utf8")).toContain("packages/operator/src/main.ts")
        // The standby is ready too: it is idle, not broken.
        expect((await fetch(`${replica.healthUrl}/readyz`)).status, replica.identity).toBe(200)
      }
      await waitForOutput(() => output, /remediation \S+: \S+ -> Analyzing/, child, 60_000)
      const before = output.length
      const traffic = await startTraffic(stack, controllers)
      const leader = async () => {
        while (traffic.lease.leaders.length === 0) await sleep(100)
        return controllers.find((c) => c.identity === traffic.lease.leaders[0])!
      }
      // An investigation the agent replica every client is kept on runs when it dies.
      const agent = (path: string, init: RequestInit = {}) =>
        fetch(`${stack.agent.url}/api/v1${path}`, {
          ...init,
          headers: { "content-type": "application/json", authorization: `Bearer ${stack.serviceTokens.operator}`, connection: "close" }
        })
      let orphan = ""
      let cutBatch = false
      const pause = () => sleep(4000)
      const kills = await runDrill(traffic, [
        { target: "gateway-0", kill: () => killReplica(stack.gateway.replicas[0]!), affected: (t) => [...t.mcp, ...t.a2a], settle: pause },
        {
          target: "agent-0",
          kill: async () => {
            orphan = (await (await agent("/incident/analyze", { method: "POST", body: JSON.stringify(incident("ReplicaDies")) })).json()).session_id
            await killReplica(stack.agent.replicas[0]!)
          },
          affected: (t) => [t.agent, ...t.a2a],
          settle: pause
        },
        {
          target: "storage-0",
          // With a 1,000-event batch in flight to it: cut before or after its write, it is stored once.
          kill: async () => {
            const batch = traffic.audit.sendThrough(stack.storage.replicas[0]!.url, 1000)
            await sleep(30)
            await killReplica(stack.storage.replicas[0]!)
            cutBatch = await batch
          },
          affected: (t) => [t.audit],
          settle: pause
        },
        { target: "signals-0", kill: () => killReplica(stack.signals.replicas[0]!), affected: (t) => [t.signals], settle: pause },
        { target: "console-0", kill: () => killReplica(stack.console.replicas[0]!), affected: (t) => [t.console], settle: pause },
        {
          target: "controllers (leader)",
          kill: async () => killReplica(await leader()),
          affected: (t) => [t.lease],
          settle: async () => {
            const until = Date.now() + 60_000
            while (traffic.lease.leaders.length < 2 && Date.now() < until) await sleep(100)
            await sleep(3000)
          }
        }
      ], 3000)

      const sent = traffic.audit.acknowledged.length
      const stored = (await Promise.all(traffic.chains.map((c) => storedEvents(stack.storage.url, stack.serviceTokens.gateway, c)))).flat()
      const requests = await requestsBySignal(stack)
      console.log(
        figures(kills, traffic, {
          sent,
          acknowledged: new Set(traffic.audit.acknowledged).size,
          stored: new Set(stored).size,
          duplicates: stored.length - new Set(stored).size
        })
      )
      console.log(
        `  the 1,000-event batch in flight to storage-0 at its kill: ${cutBatch ? "cut, sent again through the service url" : "answered before the kill"}`
      )

      // Every acknowledged audit event is stored exactly once, nothing else is, and both chains verify.
      expect([...stored].sort()).toEqual([...traffic.audit.acknowledged].sort())
      for (const chain of traffic.chains) {
        expect(await verifyChain(stack.storage.url, stack.serviceTokens.gateway, chain)).toMatchObject({ is_valid: true, total_events: sent / 2 })
      }
      // Every MCP session and A2A conversation lived through it all, each client seeing at most one retryable error.
      for (const client of [...traffic.mcp, ...traffic.a2a]) {
        const errors = client.outcomes.filter((o) => o.error !== undefined)
        expect(errors.length, `${client.name}: ${errors.map((e) => e.error).join("; ")}`).toBeLessThanOrEqual(1)
        expect(client.outcomes.filter((o) => o.at > kills.at(-1)!.at && o.error === undefined).length, client.name).toBeGreaterThan(0)
      }
      for (const client of traffic.a2a) expect(client.contexts.size, client.name).toBe(1)
      // Each acknowledged alert has one RemediationRequest, the one it was told.
      for (const [alert, name] of traffic.signals.requests) expect(requests.get(alert), alert).toEqual([name])
      expect(traffic.signals.requests.size).toBeGreaterThan(20)
      // The lease moved once, never held by two, within the lease duration plus a (jittered) retry period and 1.5 s
      // for the probe and a loaded machine's timers; nothing the controllers do was done twice.
      expect(traffic.lease.leaders).toHaveLength(2)
      expect(traffic.lease.twoLeaders()).toBe(0)
      expect(kills.at(-1)!.failoverSeconds).toBeLessThanOrEqual(15 + 2.4 + 1.5)
      expect(repeatedTransitions(output)).toEqual([])
      expect(await repeatedNotifications(stack.notifications.deliveriesUrl)).toEqual([])
      // Services recovered at once: the balancer skips a dead replica.
      for (const kill of kills.slice(0, -1)) expect(kill.failoverSeconds, kill.target).toBeLessThan(5)

      // The investigation agent-0 ran is gone on agent-1 (404: the analysis controller's cue to regenerate,
      // OrchestratorPipeline.test.ts); the controller's polls find the sessions it ran there gone too, submit them
      // again, and the remediation moves on from Analyzing, under the new leader.
      expect((await agent(`/incident/session/${orphan}`)).status).toBe(404)
      const since = () => output.slice(before)
      const regenerating = /agent session of ai-(\S+?)(?:-r\d+)? is gone \(agent restarted\?\); regenerating/
      await waitForOutput(since, regenerating, child, 60_000)
      const rr = regenerating.exec(since())![1]!
      await waitForOutput(since, new RegExp(`remediation ${rr}: Analyzing -> `), child, 120_000)
      const successor = controllers.findIndex((c) => c.identity === traffic.lease.leaders[1])
      await waitForOutput(since, new RegExp(`\\[operator-${successor}\\] .*remediation \\S+: \\S+ -> `), child, 60_000)
      expect(leaseName).toBe("kubemend-operator")
    }
  )

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
