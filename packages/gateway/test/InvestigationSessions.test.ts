/**
 * InvestigationSession resources against the real agent: a user's resource is created once the agent accepted the
 * start and follows the agent's real session (completed, taken over); a second user is refused while the first
 * investigates and admitted once the first completed; a takeover through `svc_investigate` (`join_mode:
 * "takeover"`) moves the session; an `Active` resource the agent no longer backs (left by a crashed gateway) does
 * not lock anyone out.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { KubeObject } from "@kubemend/core/K8s"
import type { Script } from "@kubemend/devkit/ScriptedLlm"
import { call, connect } from "./support/Client.ts"
import { Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { startRealAgent } from "./support/RealAgent.ts"
import { namespace } from "./support/Seed.ts"

const rca = "The checkout pods are OOMKilled."
const scripts: ReadonlyArray<Script> = [{ name: "opening", turns: [{ text: rca }] }]
const crv = "kubemend.io/v1alpha1"

const recordsOf = (rr: string) =>
  Effect.map(Infra, ({ kube }) =>
    kube.list(crv, "InvestigationSession", namespace)
      .filter((s: KubeObject) => (s.spec as any).remediationRequestRef.name === rr)
      .map((s: KubeObject) => ({
        user: (s.spec as any).userIdentity.username as string,
        phase: (s.status as any)?.phase as string,
        joinMode: (s.spec as any).joinMode as string
      })))

const ok = (c: Parameters<typeof call>[0], name: string, args: Record<string, unknown>) =>
  Effect.flatMap(call(c, name, args), (r) => (r.isError ? Effect.dieMessage(`${name}: ${r.text}`) : Effect.succeed(r.json)))

layer(InfraLive, { excludeTestServices: true })("InvestigationSession resources with the real agent", (it) => {
  it.scoped("a second user is refused while the first investigates and admitted once the first completed; takeover", () =>
    Effect.gen(function* () {
      const agent = yield* startRealAgent({ scripts })
      const gw = yield* startGateway({ agentUrl: Option.some(agent.url) })
      const sre = yield* connect(gw.url, yield* token("sre"))
      const aio = yield* connect(gw.url, yield* token("ai-orchestrator"))
      const rr_id = "rr-checkout-crash"

      const first = yield* ok(sre, "svc_investigate", { rr_id })
      assert.deepInclude(first, { status: "active", summary: rca })
      const sreUser = first.holder as string
      assert.deepStrictEqual(yield* recordsOf(rr_id), [{ user: sreUser, phase: "Active", joinMode: "start" }])

      const refused = yield* ok(aio, "svc_investigate", { rr_id })
      assert.deepInclude(refused, { status: "session_active", active_user: sreUser })
      assert.match(refused.message, /join_mode "takeover"/)

      const done = yield* ok(sre, "svc_complete_no_action", { rr_id, reason: "transient" })
      assert.strictEqual(done.status, "completed_no_action")
      assert.deepStrictEqual(yield* recordsOf(rr_id), [{ user: sreUser, phase: "Completed", joinMode: "start" }])

      const admitted = yield* ok(aio, "svc_investigate", { rr_id })
      assert.strictEqual(admitted.status, "active")
      const aioUser = admitted.holder as string
      assert.notStrictEqual(aioUser, sreUser)

      const taken = yield* ok(sre, "svc_investigate", { rr_id, join_mode: "takeover" })
      assert.deepInclude(taken, { status: "active", holder: sreUser })
      const after = yield* recordsOf(rr_id)
      assert.includeDeepMembers(after, [
        { user: aioUser, phase: "Disconnected", joinMode: "start" },
        { user: sreUser, phase: "Active", joinMode: "takeover" }
      ])
      // The first user's investigation was abandoned: their next message is refused by the agent.
      const lost = yield* call(aio, "svc_message", { rr_id, message: "still there?" })
      assert.isTrue(lost.isError)
      assert.match(lost.text, /holds this session/)
      yield* ok(sre, "svc_cancel", { rr_id })
      assert.isFalse((yield* recordsOf(rr_id)).some((r) => r.phase === "Active"))

      // The MCP journey is audited as A2A's is: delegated at each accepted start, result and completion at each end.
      const audited = (yield* gw.audit.entries).filter((e) => ["ka.delegated", "ka.result_received", "session.completed"].includes(e.type))
      assert.deepStrictEqual(audited.map((e) => [e.type, e.userId, e.data["join_mode"] ?? e.data["status"]]), [
        ["ka.delegated", sreUser, "start"],
        ["ka.result_received", sreUser, "completed_no_action"],
        ["session.completed", sreUser, "start"],
        ["ka.delegated", aioUser, "start"],
        ["ka.delegated", sreUser, "takeover"],
        ["ka.result_received", sreUser, "cancelled"],
        ["session.completed", sreUser, "takeover"]
      ])
      const completed = audited.find((e) => e.type === "session.completed")!
      assert.deepInclude(completed.data, { rr_id, terminal_phase: "completed_no_action", user_identity: sreUser })
      assert.isAtLeast(completed.data["duration_ms"] as number, 0)
      assert.strictEqual(completed.outcome, "success")
      assert.isString(completed.data["mcp_session_id"])
    }), { timeout: 60_000 })

  it.scoped("an Active resource the agent does not back locks nobody out and is settled", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.seed([{
        apiVersion: crv,
        kind: "InvestigationSession",
        metadata: { name: "rr-db-blocked-ghost", namespace },
        spec: { remediationRequestRef: { name: "rr-db-blocked" }, userIdentity: { username: "ghost" } },
        status: { phase: "Active" }
      }])
      const agent = yield* startRealAgent({ scripts })
      const gw = yield* startGateway({ agentUrl: Option.some(agent.url) })
      const sre = yield* connect(gw.url, yield* token("sre"))
      const started = yield* ok(sre, "svc_investigate", { rr_id: "rr-db-blocked" })
      assert.strictEqual(started.status, "active")
      const records = yield* recordsOf("rr-db-blocked")
      assert.includeDeepMembers(records, [{ user: "ghost", phase: "Disconnected", joinMode: undefined as unknown as string }])
      yield* ok(sre, "svc_cancel", { rr_id: "rr-db-blocked" })
    }), { timeout: 60_000 })
})
