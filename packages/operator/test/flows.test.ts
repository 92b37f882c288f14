/**
 * Document 1's four typical flows end to end on the local platform (`npm start`'s program on free ports, started
 * once), through the gateway with the MCP SDK client and the personas' tokens: approval (a low-confidence analysis
 * waits for `svc_approve`), autonomous (a confident analysis runs to Completed with no human step), interactive
 * (investigate a target, talk, discover, select, complete, watch) and audit (the trail of the approved RR holds the
 * controllers' lifecycle events and the gateway's tool events, and storage rebuilds the RR from them).
 * RRs of (a) and (b) are written to the cluster API as a signal source would; the scripted model's confidence per
 * signal comes from the local platform's transcripts.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Yaml from "yaml"
import { demoNamespace, workflowIdOf } from "../src/local/Demo.ts"
import { approvalConfidence, approvalSignal, autonomousSignal } from "../src/local/Investigations.ts"
import type { StackJson } from "../src/local/Summary.ts"

const root = Path.resolve(__dirname, "..", "..", "..")
const suffix = randomBytes(3).toString("hex")
const tool = { timeout: 120_000 }

let child: ChildProcess
let exited: Promise<number | null>
/** The platform's last output, for the error when it does not come up. */
let lastOutput = ""
let state: string
let stack: StackJson
const clients: Array<Client> = []

const waitForStack = async (file: string, deadlineMs: number): Promise<StackJson> => {
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`local platform exited with ${child.exitCode}; its last output:\n${lastOutput}`)
    if (Fs.existsSync(file)) return JSON.parse(Fs.readFileSync(file, "utf8"))
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`local platform did not become ready; its last output:\n${lastOutput}`)
}

/** An MCP client of the gateway holding `persona`'s token. */
const connect = async (persona: string) => {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.gateway.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${stack.tokens[persona]}` } }
  })
  const client = new Client({ name: `flows-${persona}`, version: "1.0.0" })
  await client.connect(transport)
  clients.push(client)
  return client
}

const raw = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = await client.callTool({ name, arguments: args }, undefined, tool)
  const text = (result.content as Array<{ text: string }>)[0]?.text ?? ""
  return { isError: result.isError === true, text }
}

/** A tool call that must succeed; its JSON result. */
const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<any> => {
  const r = await raw(client, name, args)
  if (r.isError) throw new Error(`${name} failed: ${r.text}`)
  return JSON.parse(r.text)
}

/** Reads until `done` holds (the platform's processes move on their own clock), with a deadline. */
const eventually = async <A>(read: () => Promise<A>, done: (a: A) => boolean, what: string, deadlineMs = 60_000): Promise<A> => {
  const until = Date.now() + deadlineMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > until) throw new Error(`${what}: still ${JSON.stringify(value).slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 300))
  }
}

/** An RR as a signal source writes it into the controller namespace. */
const signalRr = async (name: string, signalName: string, target: string) => {
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
  expect(r.status).toBe(201)
}

/**
 * A Deployment in the demo namespace with one Ready pod, written to the dev API server: the world the effectiveness
 * monitor reads after the workflow (the local platform's simulated execution changes nothing in the cluster).
 */
const healthyTarget = async (name: string) => {
  const base = `${stack.kube.url}/api/v1/namespaces/${demoNamespace}/pods`
  const send = (url: string, method: string, body: unknown, type = "application/json") =>
    fetch(url, { method, headers: { "content-type": type }, body: JSON.stringify(body) })
  const labels = { app: name }
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: demoNamespace, labels },
    spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name, image: `shop/${name}:1` }] } } }
  }
  const created = await send(`${stack.kube.url}/apis/apps/v1/namespaces/${demoNamespace}/deployments`, "POST", deployment)
  expect([201, 409]).toContain(created.status)
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: `${name}-0`, namespace: demoNamespace, labels }, spec: { containers: [{ name, image: `shop/${name}:1` }] } }
  expect([201, 409]).toContain((await send(base, "POST", pod)).status)
  const status = { status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }], containerStatuses: [{ name, ready: true, restartCount: 0, state: { running: {} } }] } }
  expect((await send(`${base}/${name}-0/status`, "PATCH", status, "application/merge-patch+json")).status).toBe(200)
}

beforeAll(async () => {
  state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-flows-"))
  Fs.chmodSync(state, 0o755)
  child = spawn(process.execPath, ["--import", "tsx", Path.join(root, "packages/operator/src/local.ts")], {
    cwd: root,
    env: {
      ...process.env,
      LOCAL_PORTS: "auto",
      LOCAL_QUIET: "true",
      LOCAL_STATE_DIR: state,
      // The pace of the simulated workflow and the assessment, so a remediation completes within seconds.
      LOCAL_EXECUTION_TIME: "2s",
      LOCAL_STABILIZATION_WINDOW: "2s"
    },
    stdio: ["ignore", "ignore", "pipe"]
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    lastOutput = (lastOutput + chunk.toString()).slice(-8000)
  })
  exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)))
  stack = await waitForStack(Path.join(state, ".local", "stack.json"), 230_000)
}, 240_000)

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()))
  if (child !== undefined && child.exitCode === null) {
    child.kill("SIGINT")
    const stopped = await Promise.race([exited, new Promise((r) => setTimeout(() => r("timeout"), 30_000))])
    if (stopped === "timeout") child.kill("SIGKILL")
  }
  if (state !== undefined) Fs.rmSync(state, { recursive: true, force: true })
}, 60_000)

const approvalRr = `flow-approval-${suffix}`
const autonomousRr = `flow-autonomous-${suffix}`

describe("document 1's typical flows on the local platform", () => {
  it("approval: a low-confidence analysis waits in AwaitingApproval until the approver approves, then completes", { timeout: 150_000 }, async () => {
    await healthyTarget("inventory")
    await signalRr(approvalRr, approvalSignal, "inventory")
    const approver = await connect("remediation-approver")
    const waited = await call(approver, "svc_watch", { rr_id: approvalRr })
    expect(waited.status).toBe("AwaitingApproval")

    const pending = await call(approver, "svc_list_approval_requests", { decision: "pending" })
    const rar = pending.approval_requests.find((r: { remediation_request: string }) => r.remediation_request === approvalRr)
    expect(rar).toMatchObject({ name: `rar-${approvalRr}`, decision: "Pending", confidence: approvalConfidence, confidence_level: "medium" })
    const detail = await call(approver, "svc_get_approval_request", { rar_id: rar.name })
    expect(detail).toMatchObject({ remediation_request: approvalRr, recommended_workflow: { name: "rollback-deployment" }, expired: false })
    expect(detail.why_approval_required).toContain("below the auto-approval threshold")
    // The approver is told: the notification controller delivered it to the local webhook receiver.
    const notices = await eventually(
      () => fetch(stack.notifications.deliveriesUrl).then((r) => r.json() as Promise<Array<{ body: { type?: string; remediationRequest?: string } }>>),
      (list) => list.some((d) => d.body.type === "approval" && d.body.remediationRequest === approvalRr),
      "the approval notification"
    )
    expect(notices.find((d) => d.body.remediationRequest === approvalRr)?.body).toMatchObject({ kind: "NotificationRequest", type: "approval" })

    const approved = await call(approver, "svc_approve", { rar_name: rar.name, decision: "Approved", reason: "rollback is reversible" })
    expect(approved.status).toBe("Approved")
    // A decision is final: a second one is refused.
    const again = await raw(approver, "svc_approve", { rar_name: rar.name, decision: "Rejected" })
    expect(again.isError).toBe(true)
    expect(again.text).toContain("already Approved")

    await eventually(() => call(approver, "svc_get_remediation", { rr_id: approvalRr }), (r) => r.phase !== "AwaitingApproval", "leaving AwaitingApproval")
    const done = await call(approver, "svc_watch", { rr_id: approvalRr })
    expect(done.status).toBe("Completed")
    expect(await call(approver, "svc_get_remediation", { rr_id: approvalRr })).toMatchObject({ phase: "Completed", outcome: "Remediated" })
  })

  it("autonomous: a confident analysis runs Pending to Completed with no human step", { timeout: 150_000 }, async () => {
    await healthyTarget("frontend")
    await signalRr(autonomousRr, autonomousSignal, "frontend")
    const orchestrator = await connect("ai-orchestrator")
    const watched = await call(orchestrator, "svc_watch", { rr_id: autonomousRr })
    expect(watched.status).toBe("Completed")
    const phases = watched.events.map((e: { phase: string }) => e.phase)
    expect(phases).not.toContain("AwaitingApproval")
    expect(await call(orchestrator, "svc_get_remediation", { rr_id: autonomousRr })).toMatchObject({ phase: "Completed", outcome: "Remediated" })
    const rar = await fetch(`${stack.kube.url}/apis/${stack.apiGroup}/v1alpha1/namespaces/${stack.namespace}/remediationapprovalrequests/rar-${autonomousRr}`)
    expect(rar.status).toBe(404)
  })

  it("interactive: investigate a target, talk, discover, select, complete, and the remediation runs", { timeout: 150_000 }, async () => {
    const sre = await connect("sre")
    await healthyTarget("catalog")
    const started = await call(sre, "svc_investigate", { api_version: "apps/v1", namespace: demoNamespace, kind: "Deployment", name: "catalog" })
    expect(started).toMatchObject({ status: "active" })
    const rr = started.rr_id as string
    expect(started.session_id).toBeTruthy()

    const reply = await call(sre, "svc_message", { rr_id: rr, message: "Why does catalog keep restarting?" })
    expect(reply.status).toBe("active")
    expect(reply.message).toContain("OOMKilled")

    const discovered = await call(sre, "svc_discover_workflows", { rr_id: rr })
    const ids = discovered.workflows.map((w: { workflow_id: string }) => w.workflow_id)
    expect(ids).toContain(workflowIdOf("increase-memory-limit"))
    // Only a workflow discovery returned can be selected.
    const invented = await raw(sre, "svc_select_workflow", { rr_id: rr, workflow_id: "00000000-0000-4000-8000-000000000000" })
    expect(invented.isError).toBe(true)

    const selected = await call(sre, "svc_select_workflow", { rr_id: rr, workflow_id: workflowIdOf("increase-memory-limit") })
    expect(selected.status).toBe("selected")
    expect(await call(sre, "svc_complete", { rr_id: rr, message: "raise the limit" })).toMatchObject({ status: "completed" })
    const watched = await call(sre, "svc_watch", { rr_id: rr })
    expect(watched.status).toBe("Completed")
    expect(await call(sre, "svc_get_remediation", { rr_id: rr })).toMatchObject({ phase: "Completed", outcome: "Remediated" })
    // A finished remediation cannot be cancelled.
    expect((await raw(sre, "svc_cancel_remediation", { rr_id: rr })).isError).toBe(true)
  })

  it("audit: the approved RR's trail has the lifecycle and the gateway's events, and storage rebuilds it", { timeout: 150_000 }, async () => {
    const auditor = await connect("l3-audit")
    const listed = await call(auditor, "svc_list_remediations", { phase: "Completed" })
    expect(listed.remediations.map((r: { id: string }) => r.id)).toContain(approvalRr)
    expect(await call(auditor, "svc_get_remediation", { rr_id: approvalRr })).toMatchObject({ phase: "Completed" })

    // Events reach storage in batches (about every second): read until the terminal one is there.
    const trail = await eventually(
      () => call(auditor, "svc_get_audit_trail", { rr_id: approvalRr }),
      (t) => t.events.some((e: { event_type: string }) => e.event_type === "orchestrator.lifecycle.completed"),
      "the trail's completion event"
    )
    const types = new Set(trail.events.map((e: { event_type: string }) => e.event_type))
    for (const type of [
      "orchestrator.lifecycle.created",
      "orchestrator.lifecycle.transitioned",
      "aianalysis.analysis.completed",
      "orchestrator.approval.requested",
      "orchestrator.approval.approved",
      "workflowexecution.selection.completed",
      "workflowexecution.execution.started",
      "orchestrator.lifecycle.completed",
      "apifrontend.user.decision",
      "apifrontend.tool.executed"
    ]) expect(types, type).toContain(type)
    const approval = trail.events.find((e: { event_type: string }) => e.event_type === "orchestrator.approval.approved")
    expect(approval.actor).toBe("remediation-approver-user")
    const toPhases = trail.events
      .filter((e: { event_type: string }) => e.event_type === "orchestrator.lifecycle.transitioned")
      .map((e: { detail: { to_phase: string } }) => e.detail.to_phase)
    expect(toPhases).toEqual(["Processing", "Analyzing", "AwaitingApproval", "Approved", "Running", "Verifying"])

    const effectiveness = await raw(auditor, "svc_get_effectiveness", { workflow_id: workflowIdOf("rollback-deployment") })
    expect(effectiveness.isError).toBe(false)
    // The monitor's component events, scored by storage: the target's pod was Ready and the alert not active.
    const score = await eventually(
      async () => {
        const r = await fetch(`${stack.storage.url}/api/v1/effectiveness/${approvalRr}`, { headers: { authorization: `Bearer ${stack.serviceTokens.operator}` } })
        return r.status === 200 ? await r.json() : { status: r.status }
      },
      (b) => b.assessment_status !== undefined && b.assessment_status !== "in_progress",
      "the effectiveness score"
    )
    expect(score).toMatchObject({ score: 1, components: { health_assessed: true, health_score: 1, alert_assessed: true, alert_score: 1 } })

    const rebuilt = await fetch(`${stack.storage.url}/api/v1/audit/remediation-requests/${approvalRr}/reconstruct`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.serviceTokens.operator}` }
    })
    expect(rebuilt.status).toBe(200)
    const body = await rebuilt.json()
    expect(body.validation).toMatchObject({ is_valid: true, errors: [] })
    expect(body.validation.completeness).toBeGreaterThanOrEqual(90)
    const rr = Yaml.parse(body.remediation_request_yaml)
    expect(rr).toMatchObject({
      kind: "RemediationRequest",
      metadata: { name: approvalRr, namespace: stack.namespace },
      spec: {
        signalName: approvalSignal,
        targetResource: { kind: "Deployment", name: "inventory", namespace: demoNamespace },
        signalLabels: { alertname: approvalSignal }
      },
      status: {
        overallPhase: "Completed",
        outcome: "Remediated",
        selectedWorkflowRef: { workflowId: workflowIdOf("rollback-deployment"), workflowName: "rollback-deployment" },
        workflowExecutionRef: { name: `we-${approvalRr}` }
      }
    })
  })
})
