/**
 * Decisions written on what was read (resourceVersion preconditions) against the dev API server: two approvers
 * racing on one approval request, exactly one wins and the other is told who decided; a cancel racing the
 * lifecycle's completion never rewrites the terminal request. The API server holds every status write back a
 * moment, so both racers have read before either writes.
 */
import { assert, layer } from "@effect/vitest"
import { personaGroup } from "@kubemend/core/Personas"
import { Effect, Fiber } from "effect"
import { call, connect } from "./support/Client.ts"
import { Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { apiGroup, namespace } from "./support/Seed.ts"

const crv = `${apiGroup}/v1alpha1`

/** A copy of a seeded object under a new name (its status kept). */
const copy = (kind: string, from: string, name: string, status?: Record<string, unknown>) =>
  Effect.map(Infra, ({ kube }) => {
    const base = kube.get(crv, kind, from, namespace)!
    return kube.put({ ...base, metadata: { name, namespace }, ...(status === undefined ? {} : { status: { ...base["status"] as object, ...status } }) })
  })

const statusOf = (kind: string, name: string) =>
  Effect.map(Infra, ({ kube }) => (kube.get(crv, kind, name, namespace)?.["status"] ?? {}) as Record<string, unknown>)

layer(InfraLive, { excludeTestServices: true, timeout: "60 seconds" })("decisions race", (it) => {
  it.scoped("two approvers racing: exactly one decides, the other is told who did", () =>
    Effect.gen(function* () {
      const { issuer, kube } = yield* Infra
      yield* copy("RemediationApprovalRequest", "rar-rr-cart-oom", "rar-race")
      const gw = yield* startGateway()
      const ana = yield* connect(gw.url, yield* token("remediation-approver"))
      const bea = yield* connect(gw.url, yield* issuer.token({ sub: "bea", preferred_username: "bea", groups: [personaGroup("remediation-approver")] }))
      const release = kube.faults.addLatency(300, { verb: "patch", resource: "remediationapprovalrequests" })
      const [a, b] = yield* Effect.all([
        call(ana, "svc_approve", { rar_name: "rar-race", decision: "Approved" }),
        call(bea, "svc_approve", { rar_name: "rar-race", decision: "Rejected", reason: "not now" })
      ], { concurrency: 2 })
      release()
      assert.deepStrictEqual([a.isError, b.isError].sort(), [false, true], `${a.text} | ${b.text}`)
      const status = yield* statusOf("RemediationApprovalRequest", "rar-race")
      const [winner, loser] = a.isError ? [b, a] : [a, b]
      const decidedBy = a.isError ? "bea" : "remediation-approver-user"
      assert.strictEqual(status["decidedBy"], decidedBy)
      assert.strictEqual(status["decision"], a.isError ? "Rejected" : "Approved")
      assert.match(winner.text, new RegExp(`by ${decidedBy}`))
      assert.match(loser.text, new RegExp(`already ${String(status["decision"])} by ${decidedBy}`))
    }))

  it.scoped("a cancel racing completion leaves the Completed request as it is and says so", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      yield* copy("RemediationRequest", "rr-search-running", "rr-race", { overallPhase: "Executing" })
      const gw = yield* startGateway()
      const sre = yield* connect(gw.url, yield* token("sre"))
      kube.clearRequests()
      const release = kube.faults.addLatency(500, { verb: "patch", resource: "remediationrequests" })
      const cancelling = yield* Effect.fork(call(sre, "svc_cancel_remediation", { rr_id: "rr-race" }))
      // The lifecycle completes the request after the cancel read it and before its write lands.
      yield* Effect.promise(async () => {
        while (!kube.requests().some((r) => r.verb === "patch" && r.name === "rr-race")) await new Promise((r) => setTimeout(r, 10))
      })
      const current = kube.get(crv, "RemediationRequest", "rr-race", namespace)!
      kube.put({ ...current, status: { ...(current["status"] as object), overallPhase: "Completed", outcome: "Remediated" } })
      const answer = yield* Fiber.join(cancelling)
      release()
      assert.isTrue(answer.isError, answer.text)
      assert.match(answer.text, /already Completed/)
      const status = yield* statusOf("RemediationRequest", "rr-race")
      assert.strictEqual(status["overallPhase"], "Completed")
      assert.strictEqual(status["outcome"], "Remediated")
    }))
})
