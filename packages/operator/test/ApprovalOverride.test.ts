/**
 * An approver's workflow override names a RemediationWorkflow: the orchestrator runs the catalog's latest version
 * of that name (a catalog id from older clients too), and takes back a decision whose override the catalog cannot
 * run, leaving the RAR Pending with a condition that says why. The catalog is core's in-memory storage.
 */
import { describe, expect, it } from "@effect/vitest"
import { Storage } from "@kubemend/core/Storage"
import { makeMemory } from "@kubemend/core/Storage/Memory"
import { Duration, Effect, Layer, Option } from "effect"
import { scalingWorkflowYaml as doc } from "../../gateway/test/support/StorageSeed.ts"
import { harness, rr } from "./LifecycleHarness.ts"

const config = { stabilizationWindow: Duration.minutes(1) }

/** A catalog holding `scale-out` (two versions) and `scale-in`, and a harness whose RR `rr-a` awaits approval. */
const awaitingApproval = Effect.gen(function* () {
  const catalog = yield* makeMemory({ actionTypes: [{ name: "ScaleReplicas", description: { what: "Scale", whenToUse: "load" } }] })
  const register = (content: string) => Effect.map(catalog.registerWorkflow({ content, registeredBy: "test" }), (r) => r.workflow)
  const v1 = yield* register(doc("scale-out"))
  const v2 = yield* register(doc("scale-out", "1.1.0"))
  const other = yield* register(doc("scale-in"))
  const h = yield* harness({ config, seed: [rr("rr-a")], storage: Layer.succeed(Storage, catalog) })
  h.agent.script = () => ({ result: { confidence: 0.5 } })
  yield* h.settle
  expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
  const approve = (workflowName: string) =>
    h.k8s.patchCrStatus("remediationapprovalrequests", "rar-rr-a", {
      decision: "Approved",
      decidedBy: "alice",
      workflowOverride: { workflowName, rationale: "User override via svc_approve" }
    })
  return { h, catalog, approve, v1, v2, other }
})

describe("lifecycle: workflow overrides", () => {
  it.scoped("an override by RemediationWorkflow name runs the latest version of the named workflow", () =>
    Effect.gen(function* () {
      const { approve, catalog, h, v2 } = yield* awaitingApproval
      yield* approve("scale-out")
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status.overallPhase).toBe("Running")
      expect(r.status.selectedWorkflowRef).toEqual({
        workflowId: v2.workflowId,
        version: "1.1.0",
        workflowName: "scale-out",
        executionBundle: "ghcr.io/kubemend/scale-out:1.1.0"
      })
      const we = Option.getOrThrow(yield* h.get("workflowexecutions", "we-rr-a"))
      expect(we.spec.workflowRef.workflowId).toBe(v2.workflowId)
      expect(we.spec.rationale).toBe("User override via svc_approve")
      // What the execution controller reads for it is the named workflow.
      expect((yield* catalog.getWorkflow(we.spec.workflowRef.workflowId)).workflowName).toBe("scale-out")
      const approved = (yield* h.audit).find((e) => e.event_type === "orchestrator.approval.approved")
      expect(approved?.event_data).toMatchObject({ workflow_id: v2.workflowId, workflow_override: "scale-out" })
    }))

  it.scoped("a catalog id from an older client still selects its entry", () =>
    Effect.gen(function* () {
      const { approve, h, other } = yield* awaitingApproval
      yield* approve(other.workflowId)
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.selectedWorkflowRef).toMatchObject({ workflowId: other.workflowId, workflowName: "scale-in" })
    }))

  it.scoped("an override naming an unknown workflow is refused: the RAR is Pending again, says why, and can be decided anew", () =>
    Effect.gen(function* () {
      const { approve, h } = yield* awaitingApproval
      yield* approve("scale-sideways")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
      expect(Option.isNone(yield* h.get("workflowexecutions", "we-rr-a"))).toBe(true)
      const rar = Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-a"))
      expect(rar.status.decision).toBe("")
      expect(rar.status.decidedBy).toBeUndefined()
      expect(rar.status.workflowOverride).toBeUndefined()
      expect(rar.status.reason).toBe("WorkflowOverrideRefused")
      expect(rar.status.message).toBe(
        `workflow override "scale-sideways" names no RemediationWorkflow in the catalog; the approval by alice was refused, decide again`
      )
      expect(rar.status.conditions).toContainEqual(expect.objectContaining({ type: "WorkflowOverrideValid", status: "False", reason: "UnknownWorkflow" }))
      const refused = (yield* h.audit).find((e) => e.event_type === "orchestrator.approval.override_refused")
      expect(refused?.event_data).toMatchObject({ decided_by: "alice", workflow_override: "scale-sideways" })

      yield* approve("scale-in")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "Running", selectedWorkflowRef: { workflowName: "scale-in" } })
    }))

  it.scoped("an override naming a disabled workflow is refused with its catalog status", () =>
    Effect.gen(function* () {
      const { approve, catalog, h, other } = yield* awaitingApproval
      yield* catalog.disableWorkflow(other.workflowId, "retired", "test")
      yield* approve("scale-in")
      yield* h.settle
      const rar = Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-a"))
      expect(rar.status.decision).toBe("")
      expect(rar.status.message).toMatch(/^workflow override "scale-in": RemediationWorkflow scale-in 1\.0\.0 is Disabled in the catalog/)
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
    }))
})
