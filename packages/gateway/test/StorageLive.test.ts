/**
 * The storage tools against the real storage service (child process on embedded PostgreSQL, TokenReview by the
 * dev API server), through the gateway's HTTP adapter of the shared StorageApi contract.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, connect } from "./support/Client.ts"
import { Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { namespace } from "./support/Seed.ts"
import { grantStorageClient, startStorage } from "./support/StorageProcess.ts"

const event = (n: number, type: string) => ({
  version: "1.0",
  event_type: type,
  event_timestamp: new Date(Date.UTC(2025, 0, 1, 0, n)).toISOString(),
  event_category: "apifrontend",
  event_action: "executed",
  event_outcome: "success",
  correlation_id: "rr-live-1",
  actor_type: "user",
  actor_id: "sre-user",
  event_data: { event_type: type, step: n }
})

layer(InfraLive, { excludeTestServices: true, timeout: "120 seconds" })("storage service", (it) => {
  it.scoped("audit trail, workflows, history and effectiveness from the real service", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      const storage = yield* startStorage(kube, namespace)
      const saToken = kube.registerServiceAccountToken(namespace, "gateway")
      grantStorageClient(kube, namespace, "gateway")
      const written = yield* Effect.promise(() =>
        fetch(`${storage.url}/api/v1/audit/events/batch`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${saToken}` },
          body: JSON.stringify([event(1, "apifrontend.rr.created"), event(2, "apifrontend.user.decision")])
        }).then((r) => r.status)
      )
      assert.strictEqual(written, 201)

      const gw = yield* startGateway({ storage: { url: storage.url, token: saToken }, auditToStorage: true })
      const c = yield* connect(gw.url, yield* token("sre"))
      const trail = yield* call(c, "svc_get_audit_trail", { rr_id: "rr-live-1" })
      assert.isFalse(trail.isError, trail.text)
      assert.deepStrictEqual(trail.json.events.map((e: any) => [e.event_type, e.actor, e.detail.step]), [
        ["apifrontend.rr.created", "sre-user", 1],
        ["apifrontend.user.decision", "sre-user", 2]
      ])
      const filtered = yield* call(c, "svc_get_audit_trail", { rr_id: "rr-live-1", event_type: "apifrontend.user.decision" })
      assert.strictEqual(filtered.json.count, 1)
      // Storage's own hash-chain check, through the gateway (the console's detail view shows it).
      const verified = yield* call(c, "svc_get_audit_trail", { rr_id: "rr-live-1", verify_chain: true })
      assert.isFalse(verified.isError, verified.text)
      // The gateway's own tool-call events for rr-live-1 join the same chain, so there are more than the two written.
      assert.isTrue(verified.json.chain.valid)
      assert.isAtLeast(verified.json.chain.verified_events, 2)
      assert.strictEqual(verified.json.chain.verified_events, verified.json.chain.total_events)
      const workflows = yield* call(c, "svc_list_workflows")
      assert.isFalse(workflows.isError, workflows.text)
      const history = yield* call(c, "svc_get_remediation_history", { namespace: "demo", kind: "Deployment", name: "api", since: "24h" })
      assert.isFalse(history.isError, history.text)
      assert.strictEqual(history.json.count, 0)
      const eff = yield* call(c, "svc_get_effectiveness", { workflow_id: "wf-unknown" })
      assert.isTrue(eff.isError || eff.json.sample_size === 0, eff.text)

      // The gateway's own audit events reach storage (buffered and batched by core's Audit layer).
      let audited = 0
      for (let i = 0; i < 50 && audited < 3; i++) {
        yield* Effect.sleep("100 millis")
        const found = yield* Effect.promise(() =>
          fetch(`${storage.url}/api/v1/audit/events?correlation_id=rr-live-1&event_type=apifrontend.tool.executed`, {
            headers: { authorization: `Bearer ${saToken}` }
          }).then((r) => r.json() as Promise<{ data: ReadonlyArray<{ actor_id?: string; event_data: Record<string, unknown> }> }>)
        )
        audited = found.data.length
        if (audited >= 3) {
          assert.strictEqual(found.data[0]!.actor_id, "sre-user")
          assert.strictEqual(found.data[0]!.event_data["tool_name"], "svc_get_audit_trail")
        }
      }
      // One per svc_get_audit_trail call above.
      assert.strictEqual(audited, 3)
    }))
})
