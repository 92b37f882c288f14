/**
 * How the gateway answers the original's clients (README "Compatibility with the original's clients"): an RR an
 * original controller left in `Executing` shows as the spec's `Running`, and `phase: "Executing"` filters for it;
 * `Skipped` is a terminal phase shown and filtered as it is (not cancellable, a watch ends at once); `rar_id` and
 * `rar_name` may be `namespace/name` in the controller namespace, and another namespace is refused naming it.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, connect, type Connected } from "./support/Client.ts"
import { Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { apiGroup, namespace } from "./support/Seed.ts"

const crv = `${apiGroup}/v1alpha1`

const ok = (c: Connected, name: string, args: Record<string, unknown>) =>
  Effect.map(call(c, name, args), (r) => {
    assert.isFalse(r.isError, `${name}: ${r.text}`)
    return r.json
  })

const fails = (c: Connected, name: string, args: Record<string, unknown>, pattern: RegExp) =>
  Effect.map(call(c, name, args), (r) => {
    assert.isTrue(r.isError, `${name} should fail: ${r.text}`)
    assert.match(r.text, pattern)
  })

const copyOf = (name: string, as: string, overallPhase: string) =>
  Effect.map(Infra, ({ kube }) => {
    const rr = kube.get(crv, "RemediationRequest", name, namespace)!
    kube.put({ ...rr, metadata: { name: as, namespace }, status: { overallPhase } })
  })

layer(InfraLive, { excludeTestServices: true })("compatibility with the original's clients", (it) => {
  it.scoped("Executing reads and filters as Running; Skipped is terminal and shown as it is", () =>
    Effect.gen(function* () {
      yield* copyOf("rr-cache-pending", "rr-legacy-executing", "Executing")
      yield* copyOf("rr-cache-pending", "rr-legacy-skipped", "Skipped")
      const gw = yield* startGateway()
      const c = yield* connect(gw.url, yield* token("sre"))
      const executing = yield* ok(c, "svc_list_remediations", { phase: "Executing" })
      const running = yield* ok(c, "svc_list_remediations", { phase: "Running" })
      assert.deepStrictEqual(executing, running)
      assert.include(executing.remediations.map((r: { id: string }) => r.id), "rr-legacy-executing")
      assert.deepStrictEqual([...new Set(executing.remediations.map((r: { phase: string }) => r.phase))], ["Running"])
      assert.strictEqual((yield* ok(c, "svc_get_remediation", { rr_id: "rr-legacy-executing" })).phase, "Running")

      const skipped = yield* ok(c, "svc_list_remediations", { phase: "Skipped" })
      assert.deepStrictEqual(skipped.remediations.map((r: { id: string; phase: string }) => [r.id, r.phase]), [["rr-legacy-skipped", "Skipped"]])
      yield* fails(c, "svc_cancel_remediation", { rr_id: "rr-legacy-skipped" }, /already Skipped and cannot be cancelled/)
      const watched = yield* ok(c, "svc_watch", { rr_id: "rr-legacy-skipped" })
      assert.deepStrictEqual([watched.status, watched.events.length], ["Skipped", 1])
    }))

  it.scoped("rar_id and rar_name as namespace/name in the controller namespace; another namespace is refused", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway()
      const c = yield* connect(gw.url, yield* token("remediation-approver"))
      // time_remaining is read off the wall clock at each call, so two reads may straddle a second.
      const timeless = ({ time_remaining: _, ...rest }: Record<string, unknown>) => rest
      const plain = timeless(yield* ok(c, "svc_get_approval_request", { rar_id: "rar-rr-cart-oom" }))
      assert.deepStrictEqual(timeless(yield* ok(c, "svc_get_approval_request", { rar_id: `${namespace}/rar-rr-cart-oom` })), plain)
      assert.strictEqual((yield* ok(c, "svc_get_approval_request", { name: `${namespace}/rar-rr-cart-oom` })).name, "rar-rr-cart-oom")
      yield* fails(c, "svc_get_approval_request", { rar_id: "demo/rar-rr-cart-oom" }, new RegExp(`not in the controller namespace ${namespace}`))
      yield* fails(c, "svc_get_approval_request", { rar_id: "a/b/c" }, /invalid arguments: rar_id: must be a Kubernetes resource name, or namespace\/name/)
      yield* fails(c, "svc_approve", { rar_name: "demo/rar-rr-cart-oom", decision: "Approved" }, /not in the controller namespace/)

      const approved = yield* ok(c, "svc_approve", { rar_name: `${namespace}/rar-rr-cart-oom`, decision: "Approved", reason: "ok" })
      assert.strictEqual(approved.status, "Approved")
      const { kube } = yield* Infra
      assert.strictEqual((kube.get(crv, "RemediationApprovalRequest", "rar-rr-cart-oom", namespace)?.status as { decision: string }).decision, "Approved")
    }))
})
