/**
 * Journeys across the real services on the local platform (`npm start`'s program, started once for this file),
 * with the official MCP and A2A SDK clients and their default options:
 * - document 1's four flows: approval, autonomous, interactive, audit;
 * - an A2A chat that has the gateway's model investigate a workload with the real agent and finish with its RCA;
 * - a second user refused while the first investigates a target (`session_active`), then admitted on the same
 *   target once the first completed; meanwhile a `svc_watch` carrying a progressToken follows that remediation for
 *   more than the client's 60 s request timeout (kept alive by progress) across its real phase changes;
 * - a takeover (`svc_investigate` with `join_mode: "takeover"`): the previous holder is told on their MCP session
 *   after their own `svc_investigate` returned (an investigation event the gateway follows between calls), and
 *   their next message is refused.
 * The long watch starts first and is settled last, so it overlaps the other journeys instead of adding its minute.
 */
import { type Client as A2aClient, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { Role, type StreamResponse } from "@a2a-js/sdk"
import { LoggingMessageNotificationSchema, type Progress } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomBytes, randomUUID } from "node:crypto"
import * as Yaml from "yaml"
import { demoNamespace, workflowIdOf } from "../src/Demo.ts"
import { a2aInvestigationAsk, approvalConfidence, approvalSignal, autonomousSignal } from "../src/Investigations.ts"
import { call, eventually, healthyTarget, type LocalPlatform, raw, signalRr, startPlatform } from "./platform.ts"

const suffix = randomBytes(3).toString("hex")
let platform: LocalPlatform

beforeAll(async () => {
  platform = await startPlatform()
}, 240_000)

afterAll(async () => {
  await platform?.stop()
}, 60_000)

const approvalRr = `flow-approval-${suffix}`
const autonomousRr = `flow-autonomous-${suffix}`

/** The long watch of the refused-then-admitted journey, started in its first test and settled in its last. */
const watching: {
  started?: number
  progress: Array<Progress>
  result?: Promise<{ readonly content: unknown; readonly isError?: boolean }>
  rr?: string
} = { progress: [] }

const target = { api_version: "apps/v1", namespace: demoNamespace, kind: "Deployment", name: "orders" }

describe("journeys on the local platform", () => {
  it("a second user is refused while the first investigates a target; a watch with a progressToken follows it", { timeout: 60_000 }, async () => {
    const sre = await platform.connect("sre")
    const aio = await platform.connect("ai-orchestrator")
    await healthyTarget(platform.stack, target.name)
    const started = await call(sre, "svc_investigate", target)
    expect(started).toMatchObject({ status: "active" })
    watching.rr = started.rr_id as string
    // Watched as a user does, with a progress token; the call outlives the client's 60 s timeout only through progress.
    watching.started = Date.now()
    watching.result = aio.callTool({ name: "svc_watch", arguments: { rr_id: watching.rr } }, undefined, {
      onprogress: (p) => void watching.progress.push(p),
      resetTimeoutOnProgress: true
    }) as Promise<{ readonly content: unknown; readonly isError?: boolean }>
    const refused = await call(aio, "svc_investigate", target)
    expect(refused).toMatchObject({ status: "session_active", rr_id: watching.rr, active_user: "sre-user" })
    expect(refused.message).toContain("join_mode \"takeover\"")
  })

  it("flow approval: a low-confidence analysis waits in AwaitingApproval until the approver approves, then completes", { timeout: 150_000 }, async () => {
    await healthyTarget(platform.stack, "inventory")
    await signalRr(platform.stack, approvalRr, approvalSignal, "inventory", suffix)
    const approver = await platform.connect("remediation-approver")
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
      () => fetch(platform.stack.notifications.deliveriesUrl).then((r) => r.json() as Promise<Array<{ body: { type?: string; remediationRequest?: string } }>>),
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

  it(
    "the demo heals: approving the seeded rr-checkout-oom rolls checkout back to 1.4.1, its pods become ready, its alerts resolve",
    { timeout: 150_000 },
    async () => {
      const stack = platform.stack
      const deployment = async () =>
        (await (await fetch(`${stack.kube.url}/apis/apps/v1/namespaces/${demoNamespace}/deployments/checkout`, {
          headers: { authorization: "Bearer devkube-admin" }
        })).json()) as Record<string, any>
      expect((await deployment()).status?.readyReplicas ?? 0).toBe(0)
      const approver = await platform.connect("remediation-approver")
      expect(await call(approver, "svc_approve", { rar_name: "rar-rr-checkout-oom", decision: "Approved", reason: "1.4.1 fits the limit" })).toMatchObject({
        status: "Approved"
      })
      await eventually(
        () => call(approver, "svc_get_remediation", { rr_id: "rr-checkout-oom" }),
        (r) => r.phase !== "AwaitingApproval",
        "leaving AwaitingApproval"
      )
      expect((await call(approver, "svc_watch", { rr_id: "rr-checkout-oom" })).status).toBe("Completed")
      const healed = await eventually(deployment, (d) => d.status?.readyReplicas === 2, "checkout ready")
      expect(healed.spec.template.spec.containers[0].image).toBe("shop/checkout:1.4.1")
      const alerts = (await (await fetch(`${stack.alerts.url}/api/v1/alerts`)).json()) as { data: { alerts: Array<{ labels: Record<string, string> }> } }
      expect(
        alerts.data.alerts.filter((x) =>
          x.labels["namespace"] === demoNamespace && (x.labels["deployment"] === "checkout" || x.labels["pod"]?.startsWith("checkout-"))
        )
      ).toEqual([])
    }
  )

  it("flow autonomous: a confident analysis runs Pending to Completed with no human step", { timeout: 150_000 }, async () => {
    await healthyTarget(platform.stack, "frontend")
    await signalRr(platform.stack, autonomousRr, autonomousSignal, "frontend", suffix)
    const orchestrator = await platform.connect("ai-orchestrator")
    const watched = await call(orchestrator, "svc_watch", { rr_id: autonomousRr })
    expect(watched.status).toBe("Completed")
    const phases = watched.events.map((e: { phase: string }) => e.phase)
    expect(phases).not.toContain("AwaitingApproval")
    expect(await call(orchestrator, "svc_get_remediation", { rr_id: autonomousRr })).toMatchObject({ phase: "Completed", outcome: "Remediated" })
    const rar = await fetch(
      `${platform.stack.kube.url}/apis/${platform.stack.apiGroup}/v1alpha1/namespaces/${platform.stack.namespace}/remediationapprovalrequests/rar-${autonomousRr}`
    )
    expect(rar.status).toBe(404)
  })

  it("flow interactive: investigate a target, talk, discover, select, complete, and the remediation runs", { timeout: 150_000 }, async () => {
    const sre = await platform.connect("sre")
    await healthyTarget(platform.stack, "catalog")
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

  it("flow audit: the approved RR's trail has the lifecycle and the gateway's events, and storage rebuilds it", { timeout: 150_000 }, async () => {
    const auditor = await platform.connect("l3-audit")
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
    for (
      const type of [
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
      ]
    ) expect(types, type).toContain(type)
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
        const r = await fetch(`${platform.stack.storage.url}/api/v1/effectiveness/${approvalRr}`, {
          headers: { authorization: `Bearer ${platform.stack.serviceTokens.operator}` }
        })
        return r.status === 200 ? await r.json() : { status: r.status }
      },
      (b) => b.assessment_status !== undefined && b.assessment_status !== "in_progress",
      "the effectiveness score"
    )
    expect(score).toMatchObject({ score: 1, components: { health_assessed: true, health_score: 1, alert_assessed: true, alert_score: 1 } })

    const rebuilt = await fetch(`${platform.stack.storage.url}/api/v1/audit/remediation-requests/${approvalRr}/reconstruct`, {
      method: "POST",
      headers: { authorization: `Bearer ${platform.stack.serviceTokens.operator}` }
    })
    expect(rebuilt.status).toBe(200)
    const body = await rebuilt.json()
    expect(body.validation).toMatchObject({ is_valid: true, errors: [] })
    expect(body.validation.completeness).toBeGreaterThanOrEqual(90)
    const rr = Yaml.parse(body.remediation_request_yaml)
    expect(rr).toMatchObject({
      kind: "RemediationRequest",
      metadata: { name: approvalRr, namespace: platform.stack.namespace },
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

  it("A2A: a chat asks for an investigation; the gateway's model investigates with the real agent and the RCA comes back", { timeout: 120_000 }, async () => {
    const bearer = platform.stack.tokens["sre"]!
    const authed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set("authorization", `Bearer ${bearer}`)
      return fetch(input, { ...init, headers })
    }
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: authed })
    }))
    const client: A2aClient = await factory.createFromUrl(platform.stack.gateway.url)
    const text = `${a2aInvestigationAsk}: api_version: apps/v1, namespace: ${demoNamespace}, kind: StatefulSet, name: payments-db`
    const events: Array<StreamResponse> = []
    for await (
      const e of client.sendMessageStream({
        tenant: "",
        message: {
          messageId: randomUUID(),
          contextId: "",
          taskId: "",
          role: Role.ROLE_USER,
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
          parts: [{ content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "" }]
        },
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: false },
        metadata: undefined
      })
    ) events.push(e)
    const updates = events.flatMap((e) => (e.payload?.$case === "statusUpdate" ? [e.payload.value] : []))
    const last = updates.at(-1)
    expect(last?.status?.state).toBe(3) // TASK_STATE_COMPLETED
    const said = (u: (typeof updates)[number]) => u.status?.message?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("") ?? ""
    expect(said(last!)).toContain("payments-db has finished")
    // The agent's analysis streamed into the task while the gateway waited for it.
    const investigation = updates.filter((u) => u.metadata?.["type"] === "investigation").map(said).join(" ")
    expect(investigation).toContain("OOMKilled")

    // The RCA is the agent's: the session the chat started holds it, as the same user reads it over MCP.
    const sre = await platform.connect("sre")
    const listed = await call(sre, "svc_list_remediations", { kind: "StatefulSet", name: "payments-db" })
    const rr = listed.remediations[0]?.id as string
    const status = await call(sre, "svc_status", { rr_id: rr })
    expect(status).toMatchObject({ status: "active", analysis: "answered" })
    expect(status.summary).toContain("OOMKilled")
    await call(sre, "svc_cancel", { rr_id: rr })
  })

  it(
    "takeover: a second user takes the session over; the first one is told after their call returned, and their next message is refused",
    { timeout: 90_000 },
    async () => {
      const sre = await platform.connect("sre")
      const aio = await platform.connect("ai-orchestrator")
      const events: Array<Record<string, unknown>> = []
      sre.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void events.push(n.params.data as Record<string, unknown>))
      const started = await call(sre, "svc_investigate", { api_version: "apps/v1", namespace: demoNamespace, kind: "Deployment", name: "shipping" })
      const rr = started.rr_id as string
      const taken = await call(aio, "svc_investigate", { rr_id: rr, join_mode: "takeover" })
      expect(taken).toMatchObject({ status: "active", holder: "ai-orchestrator-user" })
      // Emitted by the agent after the first user's svc_investigate returned; it reaches them through the gateway.
      const told = await eventually(async () => events.find((e) => e.holder === "ai-orchestrator-user"), (e) => e !== undefined, "the takeover event")
      expect(told).toMatchObject({ event: "interactive_state", rr_id: rr, previous_holder: "sre-user" })
      expect(told!.seq).toBeGreaterThan(started.event_seq)
      const lost = await raw(sre, "svc_message", { rr_id: rr, message: "still mine?" })
      expect(lost.isError).toBe(true)
      expect(lost.text).toContain("ai-orchestrator-user holds this session")
      const reply = await call(aio, "svc_message", { rr_id: rr, message: "what did you find?" })
      expect(reply).toMatchObject({ status: "active" })
      expect(await call(aio, "svc_cancel", { rr_id: rr })).toMatchObject({ status: "cancelled" })
    }
  )

  it("the first user completes: the watch (over 60 s, kept alive by progress) sees the phases through Completed; the second user is admitted", {
    timeout: 150_000
  }, async () => {
    const sre = await platform.connect("sre")
    const aio = await platform.connect("ai-orchestrator")
    const rr = watching.rr!
    // The watch has to outlast the official client's 60 s request timeout before anything changes.
    const wait = watching.started! + 62_000 - Date.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    expect(watching.progress.length).toBeGreaterThanOrEqual(4)
    expect(watching.progress.every((p) => typeof p.message === "string")).toBe(true)

    const discovered = await call(sre, "svc_discover_workflows", { rr_id: rr })
    const workflow = workflowIdOf("increase-memory-limit")
    expect(discovered.workflows.map((w: { workflow_id: string }) => w.workflow_id)).toContain(workflow)
    await call(sre, "svc_select_workflow", { rr_id: rr, workflow_id: workflow })
    expect(await call(sre, "svc_complete", { rr_id: rr })).toMatchObject({ status: "completed" })

    const watched = await watching.result!
    const answer = JSON.parse((watched.content as Array<{ text: string }>)[0]!.text)
    expect(answer.status).toBe("Completed")
    expect(Date.now() - watching.started!).toBeGreaterThan(60_000)
    expect(answer.events.length).toBeGreaterThan(1)
    expect(watching.progress.some((p) => p.message?.includes("is Completed"))).toBe(true)

    // The same call as before is now admitted: a new investigation of the target.
    const admitted = await call(aio, "svc_investigate", target)
    expect(admitted).toMatchObject({ status: "active" })
    expect(admitted.rr_id).not.toBe(rr)
    await call(aio, "svc_cancel", { rr_id: admitted.rr_id })
  })
})
