/** Workflow catalog, discovery and action-type taxonomy over HTTP. */
import { uuidV5 } from "@kubemend/core/StorageApi"
import { expect, layer } from "@effect/vitest"
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { client, Harness, harnessLayer, json } from "./support/Harness.ts"

const workflowYaml = (name: string, version: string, options: { replicas?: number; environment?: string; actionType?: string } = {}) => `
# a RemediationWorkflow as the admission webhook forwards it
apiVersion: kubemend.io/v1alpha1
kind: RemediationWorkflow
metadata:
  name: ${name}
  labels: { team: sre }
spec:
  version: "${version}"
  actionType: ${options.actionType ?? "ScaleReplicas"}
  description:
    what: Scales the deployment up by ${options.replicas ?? 1}
    whenToUse: CPU saturation with healthy pods
  labels:
    severity: [critical, high]
    component: [apps/v1/Deployment]
    environment: [${options.environment ?? "production"}]
    priority: P1
  execution:
    engine: job
    bundle: ghcr.io/example/scale@sha256:abc
  parameters:
    - { name: REPLICAS, type: integer, required: true, description: target replicas }
`

const description = { what: "Scale a workload", whenToUse: "When saturated" }

const call = (path: string, init?: RequestInit) => Effect.flatMap(Harness, (h) => Effect.promise(() => h.fetch(path, init)))
const body = <A>(r: Response) => Effect.promise(() => r.json() as Promise<A>)
type Wf = { workflowId: string; status: string; isLatestVersion: boolean; previousVersion?: string; contentHash: string; parameters?: unknown }

layer(harnessLayer(), { excludeTestServices: true, timeout: "120 seconds" })("workflow catalog and action types", (it) => {
  it.effect("registers action types idempotently, updates descriptions and counts active workflows", () =>
    Effect.gen(function* () {
      const created = yield* call("/api/v1/action-types", json({ name: "ScaleReplicas", description, registeredBy: "webhook" }))
      expect(created.status).toBe(201)
      expect(yield* body(created)).toEqual({ actionType: "ScaleReplicas", status: "created", wasReenabled: false })
      const again = yield* call("/api/v1/action-types", json({ name: "ScaleReplicas", description, registeredBy: "webhook" }))
      expect(again.status).toBe(200)
      expect(yield* body(again)).toMatchObject({ status: "exists" })
      const api = yield* client
      const updated = yield* api.actionTypes.updateActionType({
        path: { name: "ScaleReplicas" },
        payload: { description: { ...description, whenNotToUse: "During deploys" } }
      })
      expect(updated.updatedFields).toEqual(["whenNotToUse"])
      expect(yield* Effect.flip(api.actionTypes.updateActionType({ path: { name: "Nope" }, payload: { description } }))).toMatchObject({ status: 404 })
      expect(yield* api.actionTypes.getActionTypeWorkflowCount({ path: { name: "ScaleReplicas" } })).toEqual({ count: 0 })
      expect(yield* Effect.flip(api.actionTypes.getActionTypeWorkflowCount({ path: { name: "Nope" } }))).toMatchObject({ status: 404 })
    }))

  it.effect("registers a workflow once per (name, version) + content; changed content without a version bump is 409", () =>
    Effect.gen(function* () {
      yield* call("/api/v1/action-types", json({ name: "ScaleReplicas", description, registeredBy: "webhook" }))
      const unknownType = yield* call("/api/v1/workflows", json({ content: workflowYaml("w", "1.0.0", { actionType: "Teleport" }) }))
      expect(unknownType.status).toBe(400)

      const first = yield* call("/api/v1/workflows", json({ content: workflowYaml("scale-up", "1.0.0"), registeredBy: "alice" }))
      expect(first.status).toBe(201)
      const wf = yield* body<Wf>(first)
      expect(wf.workflowId).toBe(uuidV5(wf.contentHash))
      expect(wf.workflowId[14]).toBe("5")
      expect(wf).toMatchObject({ status: "Active", isLatestVersion: true })
      expect(wf.parameters).toEqual({ parameters: [expect.objectContaining({ name: "REPLICAS", type: "integer", required: true })] })

      // Same spec, different comments and key order: same content hash, same id, no duplicate.
      const reordered = workflowYaml("scale-up", "1.0.0").replace("# a RemediationWorkflow", "# reformatted").replace("  labels: { team: sre }\n", "")
      const same = yield* call("/api/v1/workflows", json({ content: reordered }))
      expect(same.status).toBe(200)
      expect((yield* body<Wf>(same)).workflowId).toBe(wf.workflowId)

      const changed = yield* call("/api/v1/workflows", json({ content: workflowYaml("scale-up", "1.0.0", { replicas: 3 }) }))
      expect(changed.status).toBe(409)
      expect(changed.headers.get("content-type")).toContain("application/problem+json")
      expect(yield* body(changed)).toMatchObject({
        type: "https://kubemend.io/problems/content-integrity-violation",
        title: "Content Changed Without Version Bump",
        status: 409
      })

      const bumped = yield* call("/api/v1/workflows", json({ content: workflowYaml("scale-up", "1.1.0", { replicas: 3 }) }))
      expect(bumped.status).toBe(201)
      expect(yield* body<Wf>(bumped)).toMatchObject({ isLatestVersion: true, previousVersion: "1.0.0" })
      const api = yield* client
      const versions = yield* api.workflows.listWorkflows({ urlParams: { workflow_name: "scale-up" } })
      expect(versions.total).toBe(2)
      expect(versions.workflows.find((w) => w.version === "1.0.0")!.isLatestVersion).toBe(false)
      const content = workflowYaml("scale-up", "1.0.0")
      expect(createHash("sha256").update(content).digest("hex")).not.toBe(wf.contentHash)
    }))

  it.effect("customLabels as the RemediationWorkflow CRD declares them (string values) register; lists still do", () =>
    Effect.gen(function* () {
      yield* call("/api/v1/action-types", json({ name: "ScaleReplicas", description, registeredBy: "webhook" }))
      const withLabels = (name: string, labels: string) => workflowYaml(name, "1.0.0").replace("  execution:", `  customLabels:\n${labels}\n  execution:`)
      const strings = yield* call("/api/v1/workflows", json({ content: withLabels("labelled", "    team: payments\n    tier: gold") }))
      expect(strings.status).toBe(201)
      expect((yield* body<Wf & { customLabels: unknown }>(strings)).customLabels).toEqual({ team: ["payments"], tier: ["gold"] })
      const lists = yield* call("/api/v1/workflows", json({ content: withLabels("labelled-list", "    team: [payments, checkout]") }))
      expect(lists.status).toBe(201)
      expect((yield* body<Wf & { customLabels: unknown }>(lists)).customLabels).toEqual({ team: ["payments", "checkout"] })
      const bad = yield* call("/api/v1/workflows", json({ content: withLabels("labelled-bad", "    team: { nested: true }") }))
      expect(bad.status).toBe(400)
    }))

  it.effect("lone UTF-16 surrogates in workflow content and action-type descriptions are stored as U+FFFD, not a 500", () =>
    Effect.gen(function* () {
      const created = yield* call(
        "/api/v1/action-types",
        json({ name: "RestartOdd", description: { what: "Restart \ud800", whenToUse: "x" }, registeredBy: "a" })
      )
      expect(created.status).toBe(201)
      const updated = yield* call("/api/v1/action-types/RestartOdd", {
        ...json({ description: { what: "Restart \udc00 again", whenToUse: "y" } }),
        method: "PATCH"
      })
      expect(updated.status).toBe(200)
      const content = workflowYaml("odd-text", "1.0.0", { actionType: "RestartOdd" }).replace("CPU saturation", "CPU \ud800 saturation")
      const first = yield* call("/api/v1/workflows", json({ content }))
      expect(first.status).toBe(201)
      const wf = yield* body<Wf & { description: { whenToUse: string } }>(first)
      expect(wf.description.whenToUse).toBe("CPU \ufffd saturation with healthy pods")
      // The same content again is the same workflow.
      expect((yield* call("/api/v1/workflows", json({ content }))).status).toBe(200)
    }))

  it.effect("lists with filters, gets by id (with the context gate), patches and runs the lifecycle", () =>
    Effect.gen(function* () {
      const api = yield* client
      yield* call("/api/v1/action-types", json({ name: "ScaleReplicas", description, registeredBy: "webhook" }))
      const staging = yield* body<Wf>(yield* call("/api/v1/workflows", json({ content: workflowYaml("scale-staging", "1.0.0", { environment: "staging" }) })))
      const anyEnv = yield* body<Wf>(yield* call("/api/v1/workflows", json({ content: workflowYaml("scale-any", "1.0.0", { environment: "'*'" }) })))
      const names = (q: Record<string, string>) =>
        Effect.map(api.workflows.listWorkflows({ urlParams: q as never }), (r) =>
          r.workflows.map((w) => w.workflowName).filter((n) => n.startsWith("scale-s") || n === "scale-any").sort())
      expect(yield* names({ environment: "staging" })).toEqual(["scale-any", "scale-staging"])
      expect(yield* names({ environment: "production" })).toEqual(["scale-any"])
      expect(yield* names({ priority: "P1", component: "apps/v1/Deployment" })).toEqual(["scale-any", "scale-staging"])
      expect(yield* names({ priority: "P3" })).toEqual([])
      expect((yield* api.workflows.listWorkflows({ urlParams: { limit: 1, offset: 0 } })).workflows).toHaveLength(1)

      expect((yield* api.workflows.getWorkflowByID({ path: { workflow_id: staging.workflowId }, urlParams: {} })).workflowName).toBe("scale-staging")
      const gated = yield* Effect.flip(api.workflows.getWorkflowByID({ path: { workflow_id: staging.workflowId }, urlParams: { environment: "production" } }))
      expect(gated).toMatchObject({ status: 404 })
      expect(yield* Effect.flip(api.workflows.getWorkflowByID({ path: { workflow_id: "00000000-0000-5000-8000-000000000000" }, urlParams: {} }))).toMatchObject(
        { status: 404 }
      )
      expect((yield* call("/api/v1/workflows/not-a-uuid")).status).toBe(400)

      const disabled = yield* api.workflows.disableWorkflow({ path: { workflow_id: staging.workflowId }, payload: { reason: "flaky", updatedBy: "bob" } })
      expect(disabled).toMatchObject({ status: "Disabled", disabledBy: "bob", disabledReason: "flaky" })
      expect(yield* names({ status: "Disabled" })).toEqual(["scale-staging"])
      expect((yield* api.workflows.enableWorkflow({ path: { workflow_id: staging.workflowId }, payload: { reason: "fixed" } })).status).toBe("Active")
      const deprecated = yield* api.workflows.deprecateWorkflow({ path: { workflow_id: anyEnv.workflowId }, payload: { reason: "use scale-up" } })
      expect(deprecated).toMatchObject({ status: "Deprecated", deprecationNotice: "use scale-up" })
      const patched = yield* api.workflows.updateWorkflow({ path: { workflow_id: anyEnv.workflowId }, payload: { status: "Active" } })
      expect(patched.status).toBe("Active")
      const noReason = yield* call(`/api/v1/workflows/${anyEnv.workflowId}/disable`, { ...json({}), method: "PATCH" })
      expect(noReason.status).toBe(400)
      expect(yield* Effect.flip(api.workflows.disableWorkflow({ path: { workflow_id: "00000000-0000-5000-8000-000000000000" }, payload: { reason: "x" } })))
        .toMatchObject({ status: 404 })
    }))

  it.effect("discovers action types (step 1) and their workflows (step 2); /workflows/actions is not a workflow id", () =>
    Effect.gen(function* () {
      const api = yield* client
      yield* call("/api/v1/action-types", json({ name: "RestartPod", description: { what: "Restart", whenToUse: "Crash loops" }, registeredBy: "w" }))
      yield* call("/api/v1/action-types", json({ name: "ScaleReplicas", description, registeredBy: "webhook" }))
      yield* call("/api/v1/workflows", json({ content: workflowYaml("restart-pod", "1.0.0", { actionType: "RestartPod" }) }))
      const step1 = yield* api.workflows.listAvailableActions({
        urlParams: { severity: "critical", environment: "production", priority: "P1", component: "apps/v1/Deployment" }
      })
      const types = step1.actionTypes.map((a) => a.actionType)
      expect(types).toEqual(expect.arrayContaining(["RestartPod", "ScaleReplicas"]))
      expect(step1.actionTypes.find((a) => a.actionType === "RestartPod")).toMatchObject({ workflowCount: 1, description: { what: "Restart" } })
      expect(step1.pagination).toMatchObject({ offset: 0, limit: 10, hasMore: false })
      const none = yield* api.workflows.listAvailableActions({ urlParams: { severity: "info" } })
      expect(none.actionTypes).toEqual([])
      const step2 = yield* api.workflows.listWorkflowsByActionType({ path: { action_type: "RestartPod" }, urlParams: { severity: "high" } })
      expect(step2).toMatchObject({
        actionType: "RestartPod",
        workflows: [{ workflowName: "restart-pod", version: "1.0.0", executionEngine: "job" }],
        pagination: { totalCount: 1 }
      })
    }))

  it.effect("refuses to disable an action type active workflows use (409 with the dependents), then disables and re-enables it", () =>
    Effect.gen(function* () {
      const api = yield* client
      yield* call("/api/v1/action-types", json({ name: "DrainNode", description, registeredBy: "w" }))
      const wf = yield* body<Wf>(yield* call("/api/v1/workflows", json({ content: workflowYaml("drain", "1.0.0", { actionType: "DrainNode" }) })))
      expect(yield* api.actionTypes.getActionTypeWorkflowCount({ path: { name: "DrainNode" } })).toEqual({ count: 1 })
      const denied = yield* call("/api/v1/action-types/DrainNode/disable", { ...json({ disabledBy: "ops" }), method: "PATCH" })
      expect(denied.status).toBe(409)
      expect(denied.headers.get("content-type")).toContain("application/problem+json")
      expect(yield* body(denied)).toMatchObject({ actionType: "DrainNode", dependentWorkflowCount: 1, dependentWorkflows: ["drain"] })
      yield* api.workflows.disableWorkflow({ path: { workflow_id: wf.workflowId }, payload: { reason: "retire" } })
      expect(yield* api.actionTypes.disableActionType({ path: { name: "DrainNode" }, payload: { disabledBy: "ops" } })).toEqual({
        actionType: "DrainNode",
        status: "Disabled"
      })
      expect((yield* call("/api/v1/action-types/DrainNode/disable", { ...json({ disabledBy: "ops" }), method: "PATCH" })).status).toBe(409)
      const back = yield* call("/api/v1/action-types", json({ name: "DrainNode", description, registeredBy: "w" }))
      expect(yield* body(back)).toEqual({ actionType: "DrainNode", status: "reenabled", wasReenabled: true })
    }))
})
