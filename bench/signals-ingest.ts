/**
 * Signal ingestion: Alertmanager webhooks POSTed to the signal service over HTTP, 1 alert and 100 alerts per
 * request, 10% of the alerts with a fingerprint never seen before (a new RemediationRequest: target resolution, a
 * create in the API, the genesis audit event) and 90% repeats of live requests (deduplication: the count written back
 * to the request's status). Signals/s and per-request p50/p99, next to a bare `node:http` handler that parses the
 * same JSON bodies and answers 201, measured in the same run; also the CPU time the measured process used per signal
 * (from /proc: on a machine shared with other work it moves far less than signals/s) and the API calls per signal,
 * by verb and resource. Each sender request is authenticated (TokenReview + SubjectAccessReview, cached as the
 * service does).
 *
 * The service (and the baseline) run in a process of their own (`support/signals-service.ts`), the dev API server
 * in this process and the load generator on a thread of its own; all three share this machine's cores.
 *
 *   node --import tsx bench/signals-ingest.ts
 *   REQUESTS=2000 BATCH_REQUESTS=100 CONCURRENCY=8 node --import tsx bench/signals-ingest.ts
 *   PROFILE_DIR=/tmp/prof node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/signals-ingest.ts   # where the time goes
 */
import { NodeRuntime } from "@effect/platform-node"
import { DevKube } from "@kubemend/devkit/kube/index"
import { Config, Effect, Logger, LogLevel } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Worker } from "node:worker_threads"
import { alertmanagerSenderGrant } from "../packages/signals/test/Harness.ts"

const crdDir = Path.resolve(import.meta.dirname, "..", "deploy", "crds")
const namespace = "kubemend-system"
const targets = 50

const world = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "monitoring" } },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } },
  ...Array.from(
    { length: targets },
    (_, i) => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: `web-${i}`, namespace: "shop" }, spec: { replicas: 2 } })
  ),
  ...alertmanagerSenderGrant
]

/**
 * The alerts of a run: alert `n` is new (a fresh alertname on one of the targets) every tenth time, else a repeat of
 * one of the first `known` signals, which the warm-up created.
 */
const alertSource = (known: number) => {
  let fresh = 0
  let n = 0
  return () => {
    const isNew = n++ % 10 === 9
    const id = isNew ? known + fresh++ : Math.floor(Math.random() * known)
    return {
      status: "firing",
      labels: { alertname: `BenchAlert${id}`, severity: "warning", namespace: "shop", deployment: `web-${id % targets}` },
      annotations: { summary: `bench alert ${id}` },
      startsAt: "2026-11-26T01:00:00Z",
      endsAt: "0001-01-01T00:00:00Z",
      generatorURL: "http://prometheus.monitoring:9090/graph",
      fingerprint: `bench-${id}`
    }
  }
}

const webhook = (alerts: ReadonlyArray<unknown>) =>
  JSON.stringify({
    version: "4",
    groupKey: "{}:{job=\"bench\"}",
    truncatedAlerts: 0,
    status: "firing",
    receiver: "kubemend",
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: "http://alertmanager.monitoring:9093",
    alerts
  })

/** The load generator, on a thread of its own: POSTs `bodies`, `concurrency` at a time; each request's latency. */
const clientSource = `
const { parentPort } = require("node:worker_threads")
parentPort.on("message", async ({ url, token, bodies, concurrency }) => {
  try {
    const latencies = []
    const post = async (body) => {
      const start = performance.now()
      const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + token }, body })
      const text = await r.text()
      if (r.status !== 201 && r.status !== 202) throw new Error("answered " + r.status + ": " + text.slice(0, 300))
      latencies.push(performance.now() - start)
    }
    let next = 0
    const start = performance.now()
    await Promise.all(Array.from({ length: concurrency }, async () => { while (next < bodies.length) await post(bodies[next++]) }))
    parentPort.postMessage({ seconds: (performance.now() - start) / 1000, latencies })
  } catch (e) {
    parentPort.postMessage({ error: String(e) })
  }
})`

const httpClient = Effect.map(
  Effect.acquireRelease(Effect.sync(() => new Worker(clientSource, { eval: true })), (w) => Effect.promise(() => w.terminate())),
  (worker) => (url: string, token: string, bodies: ReadonlyArray<string>, concurrency: number) =>
    Effect.async<{ readonly seconds: number; readonly latencies: ReadonlyArray<number> }, Error>((resume) => {
      worker.once(
        "message",
        (m: { seconds: number; latencies: ReadonlyArray<number>; error?: string }) =>
          resume(m.error === undefined ? Effect.succeed(m) : Effect.fail(new Error(m.error)))
      )
      worker.postMessage({ url, token, bodies, concurrency })
    })
)

/** `support/signals-service.ts` in a child process (`mode`), its API port once up; stopped with the scope. */
const service = (mode: "signals" | "baseline", kubeconfig: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.async<{ readonly child: ChildProcess; readonly port: number }>((resume) => {
        // PROFILE_DIR=<dir>: the service writes a CPU profile there when it stops.
        const profile = process.env["PROFILE_DIR"] === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env["PROFILE_DIR"]}`]
        const child = spawn(process.execPath, [...profile, "--import", "tsx", new URL("./support/signals-service.ts", import.meta.url).pathname], {
          env: { ...process.env, BENCH_MODE: mode, BENCH_KUBECONFIG: kubeconfig },
          stdio: ["ignore", "pipe", "inherit"]
        })
        let out = ""
        let settled = false
        child.stdout!.on("data", (chunk: Buffer) => {
          out += chunk.toString()
          const port = /^port (\d+)$/m.exec(out)?.[1]
          if (port !== undefined && !settled) {
            settled = true
            resume(Effect.succeed({ child, port: Number(port) }))
          }
        })
        child.once("exit", (code) => {
          if (!settled) resume(Effect.dieMessage(`the ${mode} process exited (${code}) before it was up`))
          settled = true
        })
      }),
      ({ child }) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve()
            child.once("exit", () => resolve())
            child.kill("SIGTERM")
          })
        )
    ),
    ({ child, port }) => ({ url: `http://127.0.0.1:${port}/api/v1/signals/prometheus`, pid: child.pid! })
  )

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
const cpuSeconds = (pid: number) => {
  try {
    const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const program = Effect.gen(function* () {
  const requests = yield* Config.integer("REQUESTS").pipe(Config.withDefault(2000))
  const batchRequests = yield* Config.integer("BATCH_REQUESTS").pipe(Config.withDefault(100))
  const concurrency = yield* Config.integer("CONCURRENCY").pipe(Config.withDefault(8))
  const known = 400
  const loadAtStart = Os.loadavg().map((l) => l.toFixed(1)).join(" ")

  const kube = yield* DevKube.scoped({ apiGroup: "kubemend.io" })
  for (const f of Fs.readdirSync(crdDir).filter((f) => f.endsWith(".yaml"))) kube.seedYaml(Fs.readFileSync(Path.join(crdDir, f), "utf8"))
  kube.seed(world)
  const token = kube.registerServiceAccountToken("monitoring", "alertmanager")
  const post = yield* httpClient

  // Every body built before anything is timed; the same bodies go to the baseline.
  const next = alertSource(known)
  const warm = Array.from(
    { length: known },
    (_, id) => webhook([{ ...next(), labels: { alertname: `BenchAlert${id}`, severity: "warning", namespace: "shop", deployment: `web-${id % targets}` } }])
  )
  const single = Array.from({ length: requests }, () => webhook([next()]))
  const grouped = Array.from({ length: batchRequests }, () => webhook(Array.from({ length: 100 }, next)))

  const rows: Array<[string, string, string, string, string, string, string]> = []
  const breakdown: Array<string> = []
  const measure = (name: string, { pid, url }: { pid: number; url: string }, bodies: ReadonlyArray<string>, alertsPerRequest: number) =>
    Effect.gen(function* () {
      kube.clearRequests()
      const cpuBefore = cpuSeconds(pid)
      const r = yield* post(url, token, bodies, concurrency)
      const cpu = cpuSeconds(pid) - cpuBefore
      // The dev API server keeps its last 10,000 requests: a longer run shows "≥".
      const recorded = kube.requests()
      const calls = recorded.length
      const byKind = new Map<string, number>()
      for (const r of recorded) {
        const k = `${r.verb} ${r.resource ?? r.path}${r.subresource === undefined ? "" : `/${r.subresource}`}`
        byKind.set(k, (byKind.get(k) ?? 0) + 1)
      }
      if (calls > 0) breakdown.push(`${name}: ${[...byKind].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(", ")}`)
      rows.push([
        name,
        String(bodies.length),
        Math.round((bodies.length * alertsPerRequest) / r.seconds).toLocaleString("en-US"),
        percentile(r.latencies, 50).toFixed(1),
        percentile(r.latencies, 99).toFixed(1),
        ((cpu * 1e6) / (bodies.length * alertsPerRequest)).toFixed(0),
        `${calls >= 10_000 ? "≥" : ""}${(calls / (bodies.length * alertsPerRequest)).toFixed(2)}`
      ])
    })

  yield* Effect.scoped(Effect.gen(function* () {
    const svc = yield* service("baseline", kube.kubeConfig())
    yield* post(svc.url, token, warm, concurrency)
    yield* measure("node:http JSON handler, 1 alert/request", svc, single, 1)
    yield* measure("node:http JSON handler, 100 alerts/request", svc, grouped, 100)
  }))
  yield* Effect.scoped(Effect.gen(function* () {
    const svc = yield* service("signals", kube.kubeConfig())
    process.stderr.write(`warm-up: ${known} signals become requests…\n`)
    yield* post(svc.url, token, warm, concurrency)
    yield* measure("signal service, 1 alert/request", svc, single, 1)
    yield* measure("signal service, 100 alerts/request", svc, grouped, 100)
  }))
  const created = kube.list("kubemend.io/v1alpha1", "RemediationRequest", namespace).length

  const header: [string, string, string, string, string, string, string] = [
    "mode",
    "requests",
    "signals/s",
    "p50 ms",
    "p99 ms",
    "CPU µs/signal",
    "API calls/signal"
  ]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (r: ReadonlyArray<string>) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  process.stdout.write(`${line(header)}\n${rows.map(line).join("\n")}\n`)
  process.stdout.write(`API calls: ${breakdown.join("; ")}\n`)
  process.stdout.write(`concurrency ${concurrency}; 10% new fingerprints; ${created} RemediationRequests in the dev API server at the end\n`)
  // The machine's load beside the figures: on a shared machine signals/s and p99 move with it, CPU µs/signal far less.
  process.stdout.write(`load average ${loadAtStart} at the start, ${Os.loadavg().map((l) => l.toFixed(1)).join(" ")} at the end\n`)
})

NodeRuntime.runMain(Effect.scoped(program).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))))
