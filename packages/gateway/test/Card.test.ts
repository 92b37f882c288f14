/**
 * The agent card and the access pre-flight on a running gateway: the shell card without (or with an unusable)
 * token, skills scoped to the caller's SAR for two personas, the fields both A2A generations resolve, and
 * `/a2a/access` for a caller who passes the console gate and one who does not.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client"
import { InfraLive, startTestGateway, token, withToken } from "./A2aHarness.ts"

const get = (url: string, bearer?: string) =>
  Effect.promise(async () => {
    const res = await fetch(url, bearer === undefined ? {} : { headers: { authorization: `Bearer ${bearer}` } })
    return { status: res.status, type: res.headers.get("content-type") ?? "", body: (await res.json()) as any }
  })

const skillIds = (card: any): ReadonlyArray<string> => card.skills.map((s: { id: string }) => s.id)

layer(InfraLive, { excludeTestServices: true })("agent card and access", (it) => {
  it.scoped("shell card without a token; scoped skills for sre and observability", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const cardUrl = `${gw.url}/.well-known/agent-card.json`
      const shell = yield* get(cardUrl)
      assert.strictEqual(shell.status, 200)
      assert.deepStrictEqual(shell.body.skills, [])
      assert.strictEqual(shell.body.url, `${gw.url}/a2a/invoke`)
      assert.strictEqual(shell.body.protocolVersion, "0.3.0")
      assert.strictEqual(shell.body.preferredTransport, "JSONRPC")
      assert.deepStrictEqual(shell.body.supportedInterfaces[0], { url: `${gw.url}/a2a/invoke`, protocolBinding: "JSONRPC", protocolVersion: "1.0" })
      assert.deepInclude(shell.body.capabilities, { streaming: true, pushNotifications: false })
      assert.strictEqual(shell.body.provider.organization, "kubemend.io")
      assert.deepInclude(shell.body.securitySchemes.bearer, { type: "http", scheme: "bearer" })
      assert.deepStrictEqual((yield* get(cardUrl, "not-a-token")).body.skills, [])

      const sre = skillIds((yield* get(cardUrl, yield* token("sre"))).body)
      for (
        const t of [
          "svc_list_remediations",
          "svc_cancel_remediation",
          "svc_investigate",
          "cluster_get",
          "cluster_list",
          "cluster_list_events",
          "svc_check_existing_remediation",
          "svc_remediate",
          "list_alerts",
          "get_alert_details",
          "svc_investigate_alert"
        ]
      ) {
        assert.include(sre, t)
      }
      for (const t of ["svc_approve", "svc_complete_no_action", "svc_list_workflows"]) assert.notInclude(sre, t)

      const obs = skillIds((yield* get(cardUrl, yield* token("observability"))).body)
      assert.includeMembers([...obs], ["svc_list_remediations", "svc_get_remediation", "svc_watch", "svc_get_effectiveness"])
      for (const t of ["svc_cancel_remediation", "cluster_get", "svc_investigate", "svc_list_workflows"]) assert.notInclude(obs, t)

      const approver = skillIds((yield* get(cardUrl, yield* token("remediation-approver"))).body)
      assert.include(approver, "svc_list_approval_requests")
      assert.notInclude(approver, "svc_approve")
      assert.deepStrictEqual((yield* get(cardUrl, yield* token("no-console"))).body.skills, [])
    }))

  it.scoped("with interactive investigations off, the session tools are absent from the agent", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ interactiveEnabled: false })
      const sre = skillIds((yield* get(`${gw.url}/.well-known/agent-card.json`, yield* token("sre"))).body)
      for (
        const t of [
          "svc_investigate",
          "svc_message",
          "svc_complete",
          "svc_cancel",
          "svc_status",
          "svc_reconnect",
          "svc_discover_workflows",
          "svc_select_workflow",
          "svc_present_decision",
          "svc_await_session"
        ]
      ) {
        assert.notInclude(sre, t)
      }
      assert.includeMembers([...sre], ["svc_list_remediations", "cluster_get", "svc_remediate"])
    }))

  it.scoped("the SDK resolves the card in both modes", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const bearer = yield* token("sre")
      for (const legacyCompat of [{ enabled: false }, { enabled: true }]) {
        const card = yield* Effect.promise(() => new DefaultAgentCardResolver({ fetchImpl: withToken(bearer), legacyCompat }).resolve(gw.url))
        assert.strictEqual(card.supportedInterfaces[0]?.url, `${gw.url}/a2a/invoke`)
        assert.isTrue(card.capabilities?.streaming)
        assert.isAbove(card.skills.length, 10)
      }
    }))

  it.scoped("/a2a/access reports the console gate", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const allowed = yield* get(`${gw.url}/a2a/access`, yield* token("sre"))
      assert.strictEqual(allowed.status, 200)
      assert.deepStrictEqual(allowed.body, { allowed: true, user: "sre-user", groups: ["kubemend-sre"] })
      const denied = yield* get(`${gw.url}/a2a/access`, yield* token("no-console"))
      assert.strictEqual(denied.status, 200)
      assert.strictEqual(denied.body.allowed, false)
      assert.strictEqual(denied.body.user, "no-console-user")
      assert.deepStrictEqual(denied.body.groups, ["kubemend-no-console"])
      assert.match(denied.body.reason, /console access denied/)
      const anonymous = yield* get(`${gw.url}/a2a/access`)
      assert.strictEqual(anonymous.status, 401)
      assert.strictEqual(anonymous.type, "application/problem+json")
    }))
})
