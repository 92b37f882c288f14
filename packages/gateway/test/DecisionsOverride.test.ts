/**
 * `svc_approve` with a workflow override against the real storage catalog: the override names a RemediationWorkflow
 * and is written as that name (a catalog id from an older client too); one the catalog cannot run is refused before
 * anything is written, in words that name it.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, connect, type Connected } from "./support/Client.ts"
import { Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { apiGroup, namespace } from "./support/Seed.ts"
import { grantStorageClient, startStorage } from "./support/StorageProcess.ts"
import { scalingWorkflowYaml as doc } from "./support/StorageSeed.ts"

const crv = `${apiGroup}/v1alpha1`

/** A pending copy of the seeded `rar-rr-cart-oom`. */
const pendingRar = (name: string) =>
  Effect.map(Infra, ({ kube }) => {
    const base = kube.get(crv, "RemediationApprovalRequest", "rar-rr-cart-oom", namespace)!
    kube.put({ ...base, metadata: { name, namespace } })
  })

const statusOf = (name: string) =>
  Effect.map(Infra, ({ kube }) => (kube.get(crv, "RemediationApprovalRequest", name, namespace)?.["status"] ?? {}) as Record<string, any>)

const refused = (c: Connected, args: Record<string, unknown>, pattern: RegExp) =>
  Effect.gen(function* () {
    const r = yield* call(c, "svc_approve", { decision: "Approved", ...args })
    assert.isTrue(r.isError, r.text)
    assert.match(r.text, pattern)
    // Nothing was written: the request is still pending.
    assert.isUndefined((yield* statusOf(String(args["rar_name"])))["decision"])
  })

layer(InfraLive, { excludeTestServices: true, timeout: "120 seconds" })("decisions with a workflow override", (it) => {
  it.scoped("an override names a RemediationWorkflow; an unknown or disabled one is refused at decision time", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      const storage = yield* startStorage(kube, namespace)
      const saToken = kube.registerServiceAccountToken(namespace, "gateway")
      grantStorageClient(kube, namespace, "gateway")
      const post = (path: string, body: unknown, method = "POST") =>
        Effect.promise(() =>
          fetch(`${storage.url}/api/v1/${path}`, {
            method,
            headers: { "content-type": "application/json", authorization: `Bearer ${saToken}` },
            body: JSON.stringify(body)
          }).then(async (r) => ({ status: r.status, body: await r.json() as Record<string, any> }))
        )
      const register = (content: string) => Effect.map(post("workflows", { content, registeredBy: "test" }), (r) => r.body)
      yield* post("action-types", { name: "ScaleReplicas", description: { what: "Scale", whenToUse: "load" }, registeredBy: "test" })
      yield* register(doc("scale-out"))
      const scaleOut = yield* register(doc("scale-out", "1.1.0"))
      const scaleIn = yield* register(doc("scale-in"))
      const retired = yield* register(doc("scale-retired"))
      assert.strictEqual((yield* post(`workflows/${retired.workflowId}/disable`, { reason: "retired", updatedBy: "test" }, "PATCH")).status, 200)

      const gw = yield* startGateway({ storage: { url: storage.url, token: saToken } })
      const c = yield* connect(gw.url, yield* token("remediation-approver"))
      for (const name of ["rar-by-name", "rar-by-id", "rar-unknown"]) yield* pendingRar(name)

      // The picker's catalog: one entry per RemediationWorkflow, its latest version.
      const details = yield* call(c, "svc_get_approval_request", { rar_id: "rar-by-name" })
      assert.deepStrictEqual(details.json.workflow_catalog.map((w: any) => [w.name, w.version]).sort(), [["scale-in", "1.0.0"], ["scale-out", "1.1.0"]])

      yield* refused(
        c,
        { rar_name: "rar-unknown", workflow_override: "scale-sideways" },
        /workflow override "scale-sideways" names no RemediationWorkflow in the catalog/
      )
      yield* refused(c, { rar_name: "rar-unknown", workflow_override: "scale-retired" }, /RemediationWorkflow scale-retired 1\.0\.0 is Disabled in the catalog/)
      yield* refused(
        c,
        { rar_name: "rar-unknown", decision: "Rejected", workflow_override: "scale-out" },
        /a workflow override goes with decision Approved only/
      )

      const byName = yield* call(c, "svc_approve", { rar_name: "rar-by-name", decision: "Approved", workflow_override: "scale-out" })
      assert.isFalse(byName.isError, byName.text)
      assert.deepStrictEqual((yield* statusOf("rar-by-name"))["workflowOverride"], { workflowName: "scale-out", rationale: "User override via svc_approve" })
      const decision = (yield* gw.audit.entries).find((e) => e.type === "user.decision")
      assert.deepStrictEqual([decision?.data["workflow_id"], decision?.data["workflow_name"]], [scaleOut.workflowId, "scale-out"])

      // An older client's catalog id is accepted and written as the name the CRD expects.
      const byId = yield* call(c, "svc_approve", { rar_name: "rar-by-id", decision: "Approved", workflow_override: scaleIn.workflowId })
      assert.isFalse(byId.isError, byId.text)
      assert.strictEqual((yield* statusOf("rar-by-id"))["workflowOverride"].workflowName, "scale-in")

      // No catalog to check against: the override is refused rather than written unchecked.
      const down = yield* startGateway({ storage: "down" })
      const d = yield* connect(down.url, yield* token("remediation-approver"))
      yield* refused(
        d,
        { rar_name: "rar-unknown", workflow_override: "scale-out" },
        /the workflow catalog cannot be read to check override "scale-out", please retry/
      )
    }))
})
