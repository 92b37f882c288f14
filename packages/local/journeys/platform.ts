/**
 * The local platform for the journey suite: `npm start`'s program on free ports, started once per suite file, and
 * what a user holds in front of it: an MCP client of the official SDK per persona (default client options), tool
 * calls, RRs written into the cluster API as a signal source writes them, and a reader that waits for the platform's
 * own processes to move on.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { trustAuthority } from "@kubemend/core/Tls/Trust"
import { demoNamespace } from "../src/Demo.ts"
import type { StackJson } from "../src/Summary.ts"

const root = Path.resolve(import.meta.dirname, "..", "..", "..")

/** Deadline of one tool call in the suite (a blocking one waits for the platform's processes). */
const toolOptions = { timeout: 120_000 }

export interface LocalPlatform {
  readonly stack: StackJson
  /** An MCP client of the gateway holding `persona`'s token. */
  readonly connect: (persona: string) => Promise<Client>
  readonly stop: () => Promise<void>
}

export const startPlatform = async (env: Record<string, string> = {}): Promise<LocalPlatform> => {
  const state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-journeys-"))
  Fs.chmodSync(state, 0o755)
  let lastOutput = ""
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", Path.join(root, "packages/local/src/main.ts")], {
    cwd: root,
    env: {
      ...process.env,
      LOCAL_PORTS: "auto",
      LOCAL_QUIET: "true",
      LOCAL_STATE_DIR: state,
      // The pace of the workflow Jobs (how long the local kubelet lets them run) and the assessment.
      LOCAL_EXECUTION_TIME: "2s",
      LOCAL_STABILIZATION_WINDOW: "2s",
      ...env
    },
    stdio: ["ignore", "ignore", "pipe"]
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    lastOutput = (lastOutput + chunk.toString()).slice(-8000)
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const clients: Array<Client> = []

  const stop = async () => {
    await Promise.allSettled(clients.map((c) => c.close()))
    if (child.exitCode === null) {
      child.kill("SIGINT")
      const stopped = await Promise.race([exited, new Promise((r) => setTimeout(() => r("timeout"), 30_000))])
      if (stopped === "timeout") child.kill("SIGKILL")
    }
    Fs.rmSync(state, { recursive: true, force: true })
  }

  const file = Path.join(state, ".local", "stack.json")
  const until = Date.now() + 230_000
  let stack: StackJson | undefined
  while (stack === undefined) {
    if (child.exitCode !== null || Date.now() > until) {
      await stop()
      throw new Error(`local platform did not come up (exit ${child.exitCode}); its last output:\n${lastOutput}`)
    }
    if (Fs.existsSync(file)) stack = JSON.parse(Fs.readFileSync(file, "utf8")) as StackJson
    else await new Promise((r) => setTimeout(r, 250))
  }
  const ready = stack
  // The APIs serve HTTPS with the devkit CA's certificates: trust it, as a user's client would.
  trustAuthority("local", Fs.readFileSync(ready.tls.caFile, "utf8"))

  const connect = async (persona: string) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${ready.gateway.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${ready.tokens[persona]}` } }
    })
    const client = new Client({ name: `journeys-${persona}`, version: "1.0.0" })
    await client.connect(transport)
    clients.push(client)
    return client
  }

  return { stack: ready, connect, stop }
}

export interface ToolAnswer {
  readonly isError: boolean
  readonly text: string
}

export const raw = async (client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> => {
  const result = await client.callTool({ name, arguments: args }, undefined, toolOptions)
  const text = (result.content as Array<{ text: string }>)[0]?.text ?? ""
  return { isError: result.isError === true, text }
}

/** A tool call that must succeed; its JSON result. */
export const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<any> => {
  const r = await raw(client, name, args)
  if (r.isError) throw new Error(`${name} failed: ${r.text}`)
  return JSON.parse(r.text)
}

/** Reads until `done` holds (the platform's processes move on their own clock), with a deadline. */
export const eventually = async <A>(read: () => Promise<A>, done: (a: A) => boolean, what: string, deadlineMs = 60_000): Promise<A> => {
  const until = Date.now() + deadlineMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > until) throw new Error(`${what}: still ${JSON.stringify(value).slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 300))
  }
}

/** An RR as a signal source writes it into the controller namespace; `suffix` keeps fingerprints unique per run. */
export const signalRr = async (stack: StackJson, name: string, signalName: string, target: string, suffix: string) => {
  const body = {
    apiVersion: `${stack.apiGroup}/v1alpha1`,
    kind: "RemediationRequest",
    metadata: { name, namespace: stack.namespace },
    spec: {
      signalName,
      signalFingerprint: createHash("sha256").update(`${signalName}/${target}/${suffix}`).digest("hex"),
      severity: "critical",
      signalType: "alert",
      signalSource: "prometheus",
      targetType: "kubernetes",
      targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: target, namespace: demoNamespace },
      signalLabels: { alertname: signalName, namespace: demoNamespace, environment: "production" },
      signalAnnotations: { description: `${signalName} on ${target}` },
      originalPayload: JSON.stringify({ labels: { alertname: signalName }, startsAt: new Date().toISOString() })
    }
  }
  const r = await fetch(`${stack.kube.url}/apis/${stack.apiGroup}/v1alpha1/namespaces/${stack.namespace}/remediationrequests`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${stack.serviceTokens.gateway}` },
    body: JSON.stringify(body)
  })
  if (r.status !== 201) throw new Error(`creating ${name}: ${r.status} ${await r.text()}`)
}

/**
 * A Deployment in the demo namespace with a rollout history (revision 1 ran `shop/<name>:0`, revision 2 runs
 * `shop/<name>:1`), written to the dev API server as an admin would. The local kubelet gives it Ready pods, and the
 * workflow Jobs act on it for real (a rollback goes back to revision 1). The history is written first: the kubelet
 * gives a Deployment it sees without one a ReplicaSet of its own.
 */
export const healthyTarget = async (stack: StackJson, name: string) => {
  const send = (path: string, body: unknown) =>
    fetch(`${stack.kube.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer devkube-admin" },
      body: JSON.stringify(body)
    })
  const labels = { app: name }
  const template = (image: string) => ({ metadata: { labels }, spec: { containers: [{ name, image, resources: { limits: { memory: "128Mi" } } }] } })
  const replicaSet = (suffix: string, revision: number, image: string, replicas: number) => ({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: `${name}-${suffix}`,
      namespace: demoNamespace,
      labels,
      annotations: { "deployment.kubernetes.io/revision": String(revision) },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name, controller: true }]
    },
    spec: { replicas, selector: { matchLabels: labels }, template: template(image) }
  })
  const objects: ReadonlyArray<readonly [string, unknown]> = [
    [`/apis/apps/v1/namespaces/${demoNamespace}/replicasets`, replicaSet("a1", 1, `shop/${name}:0`, 0)],
    [`/apis/apps/v1/namespaces/${demoNamespace}/replicasets`, replicaSet("b2", 2, `shop/${name}:1`, 1)],
    [`/apis/apps/v1/namespaces/${demoNamespace}/deployments`, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace: demoNamespace, labels },
      spec: { replicas: 1, selector: { matchLabels: labels }, template: template(`shop/${name}:1`) }
    }]
  ]
  for (const [path, body] of objects) {
    const created = await send(path, body)
    if (![201, 409].includes(created.status)) throw new Error(`creating ${path} ${name}: ${created.status}`)
  }
}
