/**
 * CPU per Kubernetes API call on the client side: GET, status merge-patch and create of a RemediationRequest, made
 * (a) with a bare keep-alive `node:http(s)` request, (b) with `@kubernetes/client-node` used as its docs show and
 * (c) through core's live K8s layer (K8s/Live.ts), all three in the same run against the same dev API server.
 * The dev API server runs in a child process, so this process's CPU time (process.cpuUsage) is the client's alone.
 * Calls are sequential; µs CPU per call is the figure, calls/s is shown beside it (the server is on the same cores).
 *
 *   node --import tsx bench/k8s-client.ts
 *   CALLS=3000 TLS=1 node --import tsx bench/k8s-client.ts
 *   ONLY=core node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/k8s-client.ts   # where (c)'s time goes
 */
import { start } from "@kubemend/devkit/kube/index"
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { Effect } from "effect"
import { fork } from "node:child_process"
import * as http from "node:http"
import * as https from "node:https"
import * as Os from "node:os"
import * as K8sLive from "../packages/core/src/K8s/Live.ts"

const calls = Number(process.env["CALLS"] ?? 2000)
const tls = process.env["TLS"] === "1"
const namespace = "kubemend-system"
const apiGroup = "kubemend.io"
const plural = "remediationrequests"
const base = `/apis/${apiGroup}/v1alpha1/namespaces/${namespace}/${plural}`

const rr = (name: string) => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "RemediationRequest",
  metadata: { name, namespace },
  spec: { signalName: name }
})

/** Child mode: the dev API server, its kubeconfig sent to the parent; it lives until the parent disconnects. */
const serve = async () => {
  const kube = await start({ apiGroup, tls })
  kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, rr("target")])
  process.send!({ kubeconfig: kube.kubeConfig(), url: kube.url, caPem: kube.caPem })
  process.on("disconnect", () => void kube.close().then(() => process.exit(0)))
}

interface Client {
  readonly get: () => Promise<unknown>
  readonly patchStatus: (n: number) => Promise<unknown>
  readonly create: (name: string) => Promise<unknown>
}

/** (a): one keep-alive agent, JSON in and out, bearer token fixed. */
const rawClient = (url: string, caPem: string | undefined): Client => {
  const target = new URL(url)
  const mod = target.protocol === "https:" ? https : http
  const agent = new mod.Agent({ keepAlive: true, ...(caPem === undefined ? {} : { ca: caPem }) })
  const send = (method: string, path: string, body?: unknown, contentType = "application/json") =>
    new Promise<unknown>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const req = mod.request({
        host: target.hostname,
        port: target.port,
        method,
        path,
        agent,
        headers: {
          authorization: "Bearer devkube-admin",
          accept: "application/json",
          ...(payload === undefined ? {} : { "content-type": contentType, "content-length": Buffer.byteLength(payload) })
        }
      }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown
          if ((res.statusCode ?? 500) >= 300) reject(new Error(`HTTP ${res.statusCode}`))
          else resolve(parsed)
        })
      })
      req.on("error", reject)
      req.end(payload)
    })
  return {
    get: () => send("GET", `${base}/target`),
    patchStatus: (n) => send("PATCH", `${base}/target/status`, { status: { phase: `p${n}` } }, "application/merge-patch+json"),
    create: (name) => send("POST", base, rr(name))
  }
}

/** (b): client-node as documented: `makeApiClient(CustomObjectsApi)`, nothing of ours. */
const clientNode = (kubeconfig: string): Client => {
  const kc = new KubeConfig()
  kc.loadFromString(kubeconfig)
  const api = kc.makeApiClient(CustomObjectsApi)
  const cr = { group: apiGroup, version: "v1alpha1", namespace, plural }
  const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
  return {
    get: () => api.getNamespacedCustomObject({ ...cr, name: "target" }),
    patchStatus: (n) => api.patchNamespacedCustomObjectStatus({ ...cr, name: "target", body: { status: { phase: `p${n}` } } }, merge),
    create: (name) => api.createNamespacedCustomObject({ ...cr, body: rr(name) })
  }
}

/** (c): core's live layer, each call run as its own Effect. */
const coreClient = async (kubeconfig: string): Promise<Client> => {
  const k8s = await Effect.runPromise(K8sLive.make({ namespace, apiGroup, kubeconfig }))
  return {
    get: () => Effect.runPromise(k8s.getCr(plural, "target")),
    patchStatus: (n) => Effect.runPromise(k8s.patchCrStatus(plural, "target", { phase: `p${n}` })),
    create: (name) => Effect.runPromise(k8s.createCr(plural, rr(name)))
  }
}

/** µs of this process's CPU per call and calls/s over `n` sequential calls, after a short warm-up. */
const measure = async (n: number, one: (i: number) => Promise<unknown>) => {
  for (let i = 0; i < Math.min(200, n); i++) await one(-1 - i)
  const cpu = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await one(i)
  const used = process.cpuUsage(cpu)
  const seconds = (performance.now() - t0) / 1000
  return { cpuUs: (used.user + used.system) / n, perSecond: n / seconds }
}

const main = async () => {
  const child = fork(new URL(import.meta.url).pathname, ["serve"], { execArgv: ["--import", "tsx"], env: { ...process.env, NODE_OPTIONS: "" } })
  const { kubeconfig, url, caPem } = await new Promise<{ kubeconfig: string; url: string; caPem?: string }>((resolve) =>
    child.once("message", (m) => resolve(m as never))
  )
  const clients: Array<[string, Client]> = [
    ["raw node:http keep-alive", rawClient(url, caPem)],
    ["client-node direct", clientNode(kubeconfig)],
    ["core K8s live layer", await coreClient(kubeconfig)]
  ]
  const only = process.env["ONLY"]
  if (only !== undefined) clients.splice(0, clients.length, ...clients.filter(([label]) => label.includes(only)))
  console.log(`${calls} sequential calls each, ${url}, load ${Os.loadavg().map((l) => l.toFixed(2)).join(" ")}`)
  console.log(`${"client".padEnd(26)} ${"GET µs".padStart(8)} ${"patch µs".padStart(9)} ${"create µs".padStart(10)}   calls/s GET/patch/create`)
  let run = 0
  for (const [label, client] of clients) {
    run++
    const get = await measure(calls, () => client.get())
    const patch = await measure(calls, (i) => client.patchStatus(i))
    const create = await measure(calls, (i) => client.create(`c${run}-${i < 0 ? `w${-i}` : i}`))
    console.log(
      `${label.padEnd(26)} ${get.cpuUs.toFixed(0).padStart(8)} ${patch.cpuUs.toFixed(0).padStart(9)} ${create.cpuUs.toFixed(0).padStart(10)}   ` +
        [get, patch, create].map((m) => m.perSecond.toFixed(0)).join("/")
    )
  }
  console.log(`load after ${Os.loadavg().map((l) => l.toFixed(2)).join(" ")}`)
  child.disconnect()
}

if (process.argv[2] === "serve") void serve()
else {void main().then(() => process.exit(0), (e: unknown) => {
    console.error(e)
    process.exit(1)
  })}
