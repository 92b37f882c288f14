/**
 * `LOCAL_REPLICAS=2 npm start`: two processes of every service behind a balancer on the service's ports.
 * `.local/stack.json` lists each replica; both answer health; connections to storage's and signal ingestion's `url`
 * reach both in turn (each API replica presents a certificate of its own, so the client sees which one it reached),
 * the second storage replica on the first one's database; gateway and agent keep a client on one replica, as their
 * Services' ClientIP affinity does, until it dies; a killed replica is skipped; Ctrl-C still stops every process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Os from "node:os"
import * as Path from "node:path"
import type { StackJson } from "../src/local/Summary.ts"
import { trustAuthority } from "@kubemend/core/Tls/Trust"
import { incident } from "../../agent/test/support.ts"
import { waitForStack } from "./localPlatform.ts"

const root = Path.resolve(__dirname, "..", "..", "..")
const services = ["gateway", "agent", "storage", "signals", "console"] as const
const apis = ["gateway", "agent", "storage", "signals"] as const

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
      env: { ...process.env, LOCAL_PORTS: "auto", LOCAL_QUIET: "true", LOCAL_STATE_DIR: state, LOCAL_REPLICAS: "2" },
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
    expect(output).toContain("Gateway sessions are per replica")
    expect(output).toContain("The controllers run once, in this process, under the operator's Lease.")
  })

  it("connections to storage's and signals' url reach both replicas in turn, gateway's and agent's stay on one", async () => {
    for (const svc of apis) {
      // Storage answers an authenticated audit query from either replica: both reach the one database.
      const path = svc === "storage" ? "/api/v1/audit/events?limit=1" : "/"
      const token = svc === "storage" ? stack.serviceTokens.gateway : undefined
      const answers = []
      for (let i = 0; i < 4; i++) answers.push(await freshHttps(`${stack[svc].url}${path}`, token))
      const reached = svc === "gateway" || svc === "agent" ? [`kubemend-${svc}-0`] : [`kubemend-${svc}-0`, `kubemend-${svc}-1`]
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

  it("skips a killed replica: the service's url keeps answering from the other one", async () => {
    // The agent replica every client was kept on dies: its clients move to the other one, which does not know the
    // sessions the dead one ran (404: the analysis controller's cue to regenerate, lifecyclePipeline.test.ts).
    const agent = (path: string, init: RequestInit = {}) =>
      fetch(`${stack.agent.url}/api/v1${path}`, {
        ...init,
        headers: { "content-type": "application/json", authorization: `Bearer ${stack.serviceTokens.operator}`, connection: "close" }
      })
    const submitted = await agent("/incident/analyze", { method: "POST", body: JSON.stringify(incident("ReplicaDies")) })
    expect(submitted.status).toBe(202)
    const { session_id } = await submitted.json()
    expect((await agent(`/incident/session/${session_id}`)).status).toBe(200)
    await kill(stack.agent.replicas[0]!)
    for (let i = 0; i < 3; i++) expect((await freshHttps(`${stack.agent.url}/`)).cn).toBe("kubemend-agent-1")
    expect((await agent(`/incident/session/${session_id}`)).status).toBe(404)
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

  it("Ctrl-C stops every replica, the database process and the balancers", { timeout: 90_000 }, async () => {
    child.kill("SIGINT")
    expect(await exited).toBe(0)
    expect(processesOfPlatform()).toEqual([])
    for (const svc of services) {
      for (const target of [stack[svc].healthUrl, ...stack[svc].replicas.map((r) => r.healthUrl)]) {
        await expect(fetch(`${target}/healthz`), target).rejects.toThrow()
      }
    }
  })
})
