/**
 * Every tool through the running gateway with the official MCP SDK client: its happy path and at least one bad
 * input, against the dev API server, the fake agent, in-memory storage and the fake metrics backend.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { call, connect, type Connected } from "./support/Client.ts"
import { GatewayUnderTest, gatewayLayer, Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { apiGroup, namespace } from "./support/Seed.ts"

const crv = `${apiGroup}/v1alpha1`

const as = (persona: Parameters<typeof token>[0]) =>
  Effect.gen(function* () {
    const gw = yield* GatewayUnderTest
    return yield* connect(gw.url, yield* token(persona))
  })

const ok = (c: Connected, name: string, args: Record<string, unknown> = {}) =>
  Effect.map(call(c, name, args), (r) => {
    assert.isFalse(r.isError, `${name} failed: ${r.text}`)
    return r.json
  })

const fails = (c: Connected, name: string, args: Record<string, unknown>, pattern: RegExp) =>
  Effect.map(call(c, name, args), (r) => {
    assert.isTrue(r.isError, `${name} should fail: ${r.text}`)
    assert.match(r.text, pattern)
  })

layer(InfraLive, { excludeTestServices: true })("tools", (it) => {
  it.layer(gatewayLayer())("cluster tools", (it) => {
    it.scoped("list, get and cancel remediations", () =>
      Effect.gen(function* () {
        const c = yield* as("sre")
        const blocked = yield* ok(c, "svc_list_remediations", { phase: "Blocked" })
        const { created_at, ...row } = blocked.remediations[0]
        assert.match(created_at, /^\d{4}-\d\d-\d\dT/)
        assert.deepStrictEqual({ ...blocked, remediations: [row] }, {
          remediations: [{
            id: "rr-db-blocked",
            name: "db-0",
            phase: "Blocked",
            kind: "Pod",
            target: "demo/Pod/db-0",
            severity: "critical",
            block_reason: "ResourceBusy"
          }],
          count: 1
        })
        assert.strictEqual((yield* ok(c, "svc_list_remediations", { kind: "Deployment", name: "cart" })).count, 1)
        yield* fails(c, "svc_list_remediations", { kind: "bad/kind" }, /invalid arguments: kind/)
        yield* fails(c, "svc_list_remediations", { unexpected: 1 }, /invalid arguments/)

        const got = yield* ok(c, "svc_get_remediation", { rr_id: "rr-db-blocked" })
        assert.strictEqual(got.block_reason, "ResourceBusy")
        assert.strictEqual((yield* ok(c, "svc_get_remediation", { name: "rr-checkout-crash" })).phase, "Analyzing")
        // The story of a finished one: its analysis, run and effectiveness, read from the children its status names.
        const done = yield* ok(c, "svc_get_remediation", { rr_id: "rr-api-done" })
        assert.deepStrictEqual(done.root_cause, {
          summary: "api pods run out of file descriptors",
          severity: "high",
          contributing_factors: ["ulimit 1024"],
          analysis: "ai-rr-api-done",
          analysis_phase: "Completed"
        })
        assert.deepStrictEqual([done.selected_workflow.name, done.selected_workflow.confidence], ["restart-deployment", 0.91])
        assert.deepStrictEqual([done.execution.workflow, done.execution.phase, done.execution.result, done.execution.completed_at], [
          "restart-deployment",
          "Completed",
          "Succeeded",
          "2025-01-01T00:04:30Z"
        ])
        assert.deepStrictEqual(done.effectiveness.components, {
          health: { assessed: true, score: 1 },
          alert: { assessed: true, score: 1 },
          metrics: { assessed: false },
          spec_hash: { assessed: true }
        })
        assert.isUndefined(got.root_cause)
        yield* fails(c, "svc_get_remediation", {}, /rr_id or its alias name is required/)
        yield* fails(c, "svc_get_remediation", { rr_id: "../etc/passwd" }, /invalid arguments: rr_id/)
        yield* fails(c, "svc_get_remediation", { rr_id: "rr-nope" }, /not found/)

        const cancelled = yield* ok(c, "svc_cancel_remediation", { rr_id: "rr-search-running" })
        assert.strictEqual(cancelled.status, "Cancelled")
        const { kube } = yield* Infra
        assert.strictEqual((kube.get(crv, "RemediationRequest", "rr-search-running", namespace)?.status as any).overallPhase, "Cancelled")
        yield* fails(c, "svc_cancel_remediation", { rr_id: "rr-api-done" }, /already Completed and cannot be cancelled/)
      }))

    it.scoped("watch follows phases until a stop phase", () =>
      Effect.gen(function* () {
        const c = yield* as("sre")
        const stopped = yield* ok(c, "svc_watch", { rr_id: "rr-cart-oom" })
        assert.strictEqual(stopped.status, "AwaitingApproval")
        assert.strictEqual(stopped.events.length, 1)
        const { kube } = yield* Infra
        const fiber = yield* Effect.fork(ok(c, "svc_watch", { name: "rr-cache-pending" }))
        yield* Effect.sleep("150 millis")
        const rr = kube.get(crv, "RemediationRequest", "rr-cache-pending", namespace)!
        kube.put({ ...rr, status: { overallPhase: "Analyzing" } })
        yield* Effect.sleep("50 millis")
        kube.put({ ...rr, status: { overallPhase: "Completed", message: "done" } })
        const watched = yield* Fiber.join(fiber)
        assert.deepStrictEqual(watched.events.map((e: any) => e.phase), ["Processing", "Analyzing", "Completed"])
        assert.strictEqual(watched.status, "Completed")
        assert.strictEqual(watched.events[2].message, "done")
        yield* fails(c, "svc_watch", {}, /rr_id or its alias name is required/)
      }))

    it.scoped("approval requests: list, get, approve", () =>
      Effect.gen(function* () {
        const c = yield* as("remediation-approver")
        const pending = yield* ok(c, "svc_list_approval_requests", { decision: "pending" })
        assert.deepStrictEqual(pending.approval_requests.map((r: any) => r.name).sort(), ["rar-rr-cart-oom", "rar-rr-db-blocked"])
        assert.strictEqual(pending.approval_requests[0].decision, "Pending")
        assert.strictEqual((yield* ok(c, "svc_list_approval_requests", { decision: "expired" })).count, 1)
        assert.strictEqual((yield* ok(c, "svc_list_approval_requests", {})).count, 4)
        yield* fails(c, "svc_list_approval_requests", { decision: "maybe" }, /decision must be one of pending, approved, rejected, expired/)

        const rar = yield* ok(c, "svc_get_approval_request", { rar_id: "rar-rr-cart-oom" })
        assert.strictEqual(rar.remediation_request, "rr-cart-oom")
        assert.strictEqual(rar.confidence, 0.72)
        assert.deepStrictEqual(rar.recommended_workflow, { name: "restart-deployment", version: "1.0.0" })
        assert.isFalse(rar.expired)
        assert.match(rar.time_remaining, /^1[45]m/)
        // The approver may not list the catalog, so the request carries the workflows an override may pick.
        assert.deepStrictEqual(rar.workflow_catalog.map((w: any) => [w.id, w.name]).sort(), [
          ["wf-evict", "evict-pod"],
          ["wf-restart", "restart-deployment"],
          ["wf-scale", "scale-deployment"]
        ])
        yield* fails(c, "svc_get_approval_request", { rar_id: "rar-nope" }, /not found/)

        const approved = yield* ok(c, "svc_approve", {
          rar_name: "rar-rr-db-blocked",
          decision: "Approved",
          reason: "looks right",
          workflow_override: "scale-deployment"
        })
        assert.strictEqual(approved.status, "Approved")
        const { kube } = yield* Infra
        const status = kube.get(crv, "RemediationApprovalRequest", "rar-rr-db-blocked", namespace)?.status as any
        assert.strictEqual(status.decision, "Approved")
        assert.strictEqual(status.decidedBy, "remediation-approver-user")
        assert.strictEqual(status.decisionMessage, "looks right")
        assert.strictEqual(status.workflowOverride.workflowName, "scale-deployment")
        assert.isString(status.decidedAt)
        const audit = yield* (yield* GatewayUnderTest).audit.entries
        const decision = audit.find((e) => e.type === "user.decision")
        assert.strictEqual(decision?.data["decision"], "Approved")
        assert.strictEqual(decision?.data["workflow_id"], "wf-scale")
        assert.strictEqual(decision?.correlationId, "rr-db-blocked")
        yield* fails(c, "svc_approve", { rar_name: "rar-rr-cart-oom", decision: "approved" }, /decision must be Approved or Rejected/)
        yield* fails(c, "svc_approve", { rar_name: "rar-rr-api-done", decision: "Rejected" }, /already Approved/)
        yield* fails(c, "svc_approve", { rar_name: "rar-rr-cart-oom" }, /invalid arguments: decision/)
      }))

    it.scoped("await_session answers the analysis' session", () =>
      Effect.gen(function* () {
        const c = yield* as("cicd")
        const ready = yield* ok(c, "svc_await_session", { rr_name: "rr-checkout-crash" })
        assert.deepStrictEqual([ready.session_id, ready.status], ["ka-session-1", "ready"])
        yield* fails(c, "svc_await_session", { rr_name: "rr-nope" }, /not found/)
        yield* fails(c, "svc_await_session", {}, /invalid arguments: rr_name/)
      }))
  })

  it.layer(gatewayLayer())("agent-backed tools", (it) => {
    it.scoped("investigate on an RR and on a target, as the acting user", () =>
      Effect.gen(function* () {
        const { agent, kube } = yield* Infra
        agent.clear()
        const c = yield* as("sre")
        const started = yield* ok(c, "svc_investigate", { rr_id: "rr-checkout-crash" })
        assert.deepStrictEqual([started.status, started.rr_id], ["active", "rr-checkout-crash"])
        assert.isString(started.session_id)
        const sent = agent.calls()[0]!
        assert.strictEqual(sent.tool, "svc_investigate")
        assert.deepStrictEqual(sent.args, { rr_id: "rr-checkout-crash", action: "start", acting_user: "sre-user", acting_user_groups: ["kubemend-sre"] })
        assert.strictEqual(sent.headers["x-kubemend-user"], "sre-user")
        assert.strictEqual(sent.headers["x-kubemend-groups"], "kubemend-sre")
        assert.match(sent.headers["authorization"] ?? "", /^Bearer ey/)
        // The agent's live event of the start (sent while the call was open) reaches this MCP session.
        yield* Effect.sleep("300 millis")
        assert.isTrue(c.notifications.some((n: any) => n.data?.event === "progress"))

        const onTarget = yield* ok(c, "svc_investigate", { api_version: "apps/v1", namespace: "demo", kind: "Deployment", name: "web" })
        const rr = kube.get(crv, "RemediationRequest", onTarget.rr_id, namespace)
        assert.deepStrictEqual((rr?.spec as any).targetResource, { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "demo" })
        const sessions = kube.list(crv, "InvestigationSession", namespace).filter((s: any) => s.spec.remediationRequestRef.name === onTarget.rr_id)
        assert.strictEqual(sessions.length, 1)
        assert.strictEqual((sessions[0]!.spec as any).userIdentity.username, "sre-user")
        const again = yield* ok(c, "svc_investigate", { api_version: "apps/v1", namespace: "demo", kind: "Deployment", name: "web" })
        assert.strictEqual(again.rr_id, onTarget.rr_id)
        const audit = yield* (yield* GatewayUnderTest).audit.entries
        assert.isTrue(audit.some((e) => e.type === "rr.created" && e.data["rr_name"] === onTarget.rr_id))
        assert.isTrue(audit.some((e) => e.type === "rr.deduplicated" && e.data["existing_rr_name"] === onTarget.rr_id))
        assert.isTrue(audit.some((e) => e.type === "jwt.delegation"))

        yield* fails(c, "svc_investigate", { namespace: "demo", kind: "Deployment", name: "web" }, /api_version is required/)
        yield* fails(c, "svc_investigate", {}, /give rr_id, or api_version/)
      }))

    it.scoped("another user's active session answers session_active; service accounts may not start on a target", () =>
      Effect.gen(function* () {
        const { kube } = yield* Infra
        const first = yield* as("sre")
        assert.strictEqual((yield* ok(first, "svc_investigate", { rr_id: "rr-db-blocked" })).status, "active")
        const c = yield* as("ai-orchestrator")
        const busy = yield* ok(c, "svc_investigate", { rr_id: "rr-db-blocked" })
        assert.strictEqual(busy.status, "session_active")
        assert.strictEqual(busy.active_user, "sre-user")

        kube.seed([
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "sa-sre" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "tool-sre" },
            subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "system:serviceaccounts" }]
          },
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "sa-console" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "console-access" },
            subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "system:serviceaccounts" }]
          }
        ])
        const gw = yield* GatewayUnderTest
        const sa = yield* connect(gw.url, kube.registerServiceAccountToken(namespace, "robot"))
        yield* fails(sa, "svc_investigate", { api_version: "v1", namespace: "demo", kind: "Pod", name: "p" }, /service accounts cannot start/)
      }))

    it.scoped("message, complete, cancel, status, reconnect, no-action, discover, select", () =>
      Effect.gen(function* () {
        const { agent } = yield* Infra
        const c = yield* as("ai-orchestrator")
        const rr_id = "rr-cart-oom"
        const start = ok(c, "svc_investigate", { rr_id })
        assert.strictEqual((yield* start).status, "active")
        assert.strictEqual((yield* ok(c, "svc_message", { rr_id, message: "check the logs" })).message, "ack: check the logs")
        yield* fails(c, "svc_message", { rr_id, message: "x".repeat(10_241) }, /at most 10240 characters/)
        yield* fails(c, "svc_message", { rr_id }, /invalid arguments: message/)
        for (const tool of ["svc_status", "svc_reconnect"]) {
          assert.strictEqual((yield* ok(c, tool, { rr_id })).status, "active")
          yield* fails(c, tool, {}, /invalid arguments: rr_id/)
        }
        const pods = yield* ok(c, "svc_discover_workflows", { rr_id, kind: "Pod" })
        assert.deepStrictEqual([pods.count, pods.workflows[0].workflow_id], [1, "wf-evict"])
        assert.strictEqual((yield* ok(c, "svc_discover_workflows", { rr_id })).count, 3)
        yield* fails(c, "svc_discover_workflows", { rr_id: "Bad Name" }, /invalid arguments: rr_id/)
        yield* fails(c, "svc_complete", { rr_id }, /no workflow selected/)
        const selected = yield* ok(c, "svc_select_workflow", { rr_id, workflow_id: "wf-scale", parameters: { replicas: 3 } })
        assert.strictEqual(selected.status, "selected")
        yield* fails(c, "svc_select_workflow", { rr_id }, /invalid arguments: workflow_id/)
        const last = agent.calls().at(-1)!
        assert.deepStrictEqual([last.tool, last.args["workflow_id"], last.args["acting_user"]], ["svc_select_workflow", "wf-scale", "ai-orchestrator-user"])
        assert.strictEqual((yield* ok(c, "svc_complete", { rr_id })).status, "completed")
        yield* fails(c, "svc_complete", {}, /invalid arguments: rr_id/)
        // Each ending needs a session of the caller's: started again for each.
        yield* start
        assert.strictEqual((yield* ok(c, "svc_cancel", { rr_id })).status, "cancelled")
        yield* fails(c, "svc_cancel", { rr_id }, /no interactive session/)
        yield* start
        assert.strictEqual((yield* ok(c, "svc_complete_no_action", { rr_id, escalation_reason: "needs a DBA" })).status, "escalated")
        yield* start
        assert.strictEqual((yield* ok(c, "svc_complete_no_action", { rr_id })).status, "completed_no_action")
        yield* fails(c, "svc_complete_no_action", { escalation_reason: "x" }, /invalid arguments: rr_id/)
      }))
  })

  it.layer(gatewayLayer())("storage, local and alert tools", (it) => {
    it.scoped("workflows, history, effectiveness, audit trail", () =>
      Effect.gen(function* () {
        const c = yield* as("sre")
        const wfs = yield* ok(c, "svc_list_workflows", { kind: "Deployment" })
        assert.deepStrictEqual(wfs.workflows.map((w: any) => w.id), ["wf-restart", "wf-scale"])
        assert.strictEqual((yield* ok(c, "svc_list_workflows")).count, 3)
        yield* fails(c, "svc_list_workflows", { kind: "x/y" }, /invalid arguments: kind/)

        const history = yield* ok(c, "svc_get_remediation_history", { namespace: "demo", kind: "Deployment", name: "api", since: "48h" })
        assert.deepStrictEqual(history.remediations, [{
          id: "uid-1",
          namespace: "demo",
          phase: "Remediated",
          created_at: "2025-01-01T00:00:00Z",
          workflow: "RestartDeployment"
        }])
        yield* fails(c, "svc_get_remediation_history", { namespace: "demo", kind: "Deployment", name: "api", since: "2 days" }, /since must be a Go duration/)
        yield* fails(c, "svc_get_remediation_history", { kind: "Deployment" }, /namespace, kind and name of the target are required/)

        const eff = yield* ok(c, "svc_get_effectiveness", { workflow_id: "wf-restart" })
        assert.deepStrictEqual(eff, { workflow_id: "wf-restart", success_rate: 0.9, avg_duration: "1m30s", sample_size: 20 })
        yield* fails(c, "svc_get_effectiveness", {}, /workflow_id is required/)
        yield* fails(c, "svc_get_effectiveness", { workflow_id: "wf-unknown" }, /no executions/)

        const trail = yield* ok(c, "svc_get_audit_trail", { rr_id: "rr-api-done" })
        assert.strictEqual(trail.count, 3)
        assert.deepStrictEqual(trail.events[1], {
          timestamp: "2025-01-01T00:02:00Z",
          event_type: "apifrontend.user.decision",
          actor: "remediation-approver-user",
          detail: { detail: "step 2" }
        })
        assert.strictEqual((yield* ok(c, "svc_get_audit_trail", { rr_id: "rr-api-done", event_type: "apifrontend.rr.created" })).count, 1)
        assert.isUndefined(trail.chain)
        const verified = yield* ok(c, "svc_get_audit_trail", { rr_id: "rr-api-done", verify_chain: true })
        assert.deepStrictEqual([verified.chain.valid, verified.chain.verified_events, verified.chain.total_events], [true, 3, 3])
        yield* fails(c, "svc_get_audit_trail", {}, /invalid arguments: rr_id/)
      }))

    it.scoped("present_decision notifies the session", () =>
      Effect.gen(function* () {
        const c = yield* as("sre")
        const presented = yield* ok(c, "svc_present_decision", {
          session_id: "ka-1",
          summary: "two ways out",
          options: [{ workflow_id: "wf-restart", name: "restart", description: "restart it", risk: "low" }, {
            workflow_id: "wf-scale",
            name: "scale",
            description: "scale it"
          }]
        })
        assert.deepStrictEqual(presented, { presented: true, message: "presented 2 options for session ka-1" })
        assert.isTrue(c.notifications.some((n: any) => n.logger === "kubemend" && n.data?.type === "decision"))
        yield* fails(c, "svc_present_decision", { session_id: "ka-1", summary: "s" }, /invalid arguments: options/)
      }))

    it.scoped("list_alerts: filters, sorting, prioritized, redaction", () =>
      Effect.gen(function* () {
        const c = yield* as("sre")
        const all = yield* ok(c, "svc_list_alerts")
        assert.deepStrictEqual(all.alerts.map((a: any) => a.labels.alertname), [
          "KubePodCrashLooping",
          "KubeDeploymentReplicasMismatch",
          "HighMemoryUsage",
          "CertificateExpiringSoon"
        ])
        assert.deepStrictEqual(all.prioritized, { selected_index: 0, tied_indices: [], also_active_start: 1 })
        assert.deepStrictEqual([all.count, all.total_count, all.truncated], [4, 4, false])
        assert.strictEqual(all.alerts[2].labels.instance, "[REDACTED_IP]")
        assert.strictEqual(all.alerts[0].annotations.runbook_url, "[REDACTED_URL]")
        const warnings = yield* ok(c, "svc_list_alerts", { severity: "medium", namespace: "demo" })
        assert.deepStrictEqual(warnings.prioritized, { selected_index: 0, tied_indices: [1], also_active_start: -1 })
        assert.strictEqual((yield* ok(c, "svc_list_alerts", { state: "pending" })).count, 1)
        yield* fails(c, "svc_list_alerts", { severity: "severe" }, /severity must be one of critical, high, warning, info/)
      }))
  })

  describe("tool counts", () => {
    const names = (options: Parameters<typeof gatewayLayer>[0]) =>
      Effect.gen(function* () {
        const gw = yield* startGateway(options)
        const c = yield* connect(gw.url, yield* token("sre"))
        return (yield* Effect.promise(() => c.client.listTools())).tools.map((t) => t.name)
      })
    // Document 1's table has 23 tools, 11 of them session-dependent, so 12 remain with svc_list_alerts and 11
    // without it (its prose says "12 (13 with svc_list_alerts)", which the table does not add up to).
    const nonInteractive = [
      "svc_list_remediations",
      "svc_get_remediation",
      "svc_cancel_remediation",
      "svc_watch",
      "svc_list_approval_requests",
      "svc_get_approval_request",
      "svc_approve",
      "svc_list_workflows",
      "svc_get_remediation_history",
      "svc_get_effectiveness",
      "svc_get_audit_trail"
    ]
    const sessionDependent = [
      "svc_investigate",
      "svc_await_session",
      "svc_message",
      "svc_complete",
      "svc_cancel",
      "svc_status",
      "svc_reconnect",
      "svc_complete_no_action",
      "svc_discover_workflows",
      "svc_select_workflow",
      "svc_present_decision"
    ]
    it.scoped("23 with everything, 12 non-interactive with alerts, 11 without, by name; alerts need triage and a backend", () =>
      Effect.gen(function* () {
        const all = yield* names({})
        // The table's order.
        assert.deepStrictEqual(all, [
          "svc_list_remediations",
          "svc_get_remediation",
          "svc_cancel_remediation",
          "svc_watch",
          "svc_list_approval_requests",
          "svc_get_approval_request",
          "svc_approve",
          "svc_investigate",
          "svc_await_session",
          "svc_message",
          "svc_complete",
          "svc_cancel",
          "svc_status",
          "svc_reconnect",
          "svc_complete_no_action",
          "svc_discover_workflows",
          "svc_select_workflow",
          "svc_list_workflows",
          "svc_get_remediation_history",
          "svc_get_effectiveness",
          "svc_get_audit_trail",
          "svc_present_decision",
          "svc_list_alerts"
        ])
        assert.sameMembers(all, [...nonInteractive, ...sessionDependent, "svc_list_alerts"])
        const withAlerts = yield* names({ interactiveEnabled: false })
        assert.deepStrictEqual(withAlerts, [...nonInteractive, "svc_list_alerts"])
        assert.strictEqual(withAlerts.length, 12)
        const plain = yield* names({ interactiveEnabled: false, severityTriageEnabled: false })
        assert.deepStrictEqual(plain, nonInteractive)
        assert.strictEqual(plain.length, 11)
        // svc_list_alerts needs both severity triage and a metrics backend.
        assert.deepStrictEqual(yield* names({ severityTriageEnabled: false }), all.filter((n) => n !== "svc_list_alerts"))
        assert.notInclude(yield* names({ metricsBackendUrl: Option.none() }), "svc_list_alerts")
        const renamed = yield* names({ toolPrefix: "kubernaut" })
        assert.deepStrictEqual(renamed, all.map((n) => n.replace(/^svc_/, "kubernaut_")))
      }))
  })
})
