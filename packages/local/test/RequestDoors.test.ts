/**
 * One request in progress per target, whichever door it came through. A signal's request (posted to the real signals
 * service as Alertmanager does) is recognised by the gateway's `svc_investigate` and `svc_remediate` doors and by the
 * agent's workflow selection, all against the dev API server through the live Kubernetes client. Before core's one
 * constructor, `svc_investigate` (a fingerprint of the target alone) and the agent's selection (no look at all) each
 * made a second request for the resource.
 */
import { describe, expect, it } from "@effect/vitest"
import { requestForSession } from "@kubemend/agent/Interactive/SessionRequest"
import { K8s } from "@kubemend/core/K8s"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { createRemediation } from "@kubemend/gateway/A2a/InternalTools"
import { RecordedAudit } from "@kubemend/gateway/GatewayAudit"
import type { ToolContext } from "@kubemend/gateway/Mcp/Tool"
import { requestOnTarget } from "@kubemend/gateway/Tools/Target"
import { Effect, Layer, Redacted } from "effect"
import { alert, post, startKube, startSignals, webhook } from "../../signals/test/Harness.ts"

const checkout = { apiVersion: "apps/v1", kind: "Deployment", name: "checkout", namespace: "shop" }

/** What the gateway's doors read of a call: who made it, from where, in which session. */
const callBy = (user: string): ToolContext =>
  ({
    caller: { principal: { user, groups: [] }, clientIp: "127.0.0.1", token: Redacted.make("t") },
    tool: "svc_investigate",
    sessionId: "mcp-1"
  }) as unknown as ToolContext

describe("a request on a target is recognised whichever door made it", () => {
  it.scoped("a signal's request is met by svc_investigate, svc_remediate and the agent's selection; none makes a second", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const signals = yield* startSignals(kube)
      const accepted = yield* post(`${signals.url}/api/v1/signals/prometheus`, webhook([alert({ namespace: "shop", pod: "checkout-7d9f-abcde" })]), sender)
      expect(accepted.status).toBe(201)
      const signalRequest: string = accepted.body.remediationRequestRef.name

      const k8s = K8sLive.layer({ namespace: "kubemend-system", apiGroup: "kubemend.io", kubeconfig: kube.kubeConfig() })
      yield* Effect.gen(function* () {
        const investigate = yield* requestOnTarget
        const viaInvestigate = yield* investigate({
          door: "interactive",
          target: checkout,
          signalName: "InteractiveInvestigation",
          signalType: "interactive",
          description: "interactive investigation started by sre"
        }, callBy("sre"))
        expect(viaInvestigate.name).toBe(signalRequest)

        const remediate = yield* createRemediation
        const viaA2a = yield* remediate({ ...checkout, signalName: "HighMemory", severity: "high", signalType: "alert" }, callBy("cicd"))
        expect(viaA2a).toMatchObject({ status: "exists", rr_id: signalRequest })

        const cluster = yield* K8s
        const session = { rr: "rr-interactive-session-1", sessionId: "s-1", signalName: "OOMKilled", severity: "critical", user: "sre" }
        const refused = yield* Effect.flip(requestForSession(cluster, session, checkout))
        expect(refused).toMatchObject({ _tag: "RequestInProgress", name: signalRequest })
        expect(refused.message).toContain("from signals")

        const requests = (yield* cluster.listCr("remediationrequests")).items.map((rr) => rr.metadata.name)
        expect(requests).toEqual([signalRequest])
        const audited = (yield* (yield* RecordedAudit).entries).map((e) => [e.type, e.data?.["existing_rr_name"]])
        expect(audited).toEqual([["rr.deduplicated", signalRequest], ["rr.deduplicated", signalRequest]])
      }).pipe(Effect.provide(Layer.merge(k8s, RecordedAudit.layer)))
    }))

  it.scoped("every door makes the same fingerprint and labels; on a free target each creates one request", () =>
    Effect.gen(function* () {
      const { kube } = yield* startKube
      const k8s = K8sLive.layer({ namespace: "kubemend-system", apiGroup: "kubemend.io", kubeconfig: kube.kubeConfig() })
      yield* Effect.gen(function* () {
        const cluster = yield* K8s
        const payments = { apiVersion: "apps/v1", kind: "StatefulSet", name: "payments-db", namespace: "shop" }
        const session = { rr: "rr-interactive-session-2", sessionId: "s-2", signalName: "DiskFilling", severity: "high", user: "sre" }
        yield* requestForSession(cluster, session, payments)
        const made = yield* cluster.getCr("remediationrequests", session.rr)
        expect(made.metadata.labels).toMatchObject({ "kubemend.io/source": "agent-interactive", "kubemend.io/interactive-session": "s-2" })
        // A second selection in the same session finds its own request and makes nothing new.
        yield* requestForSession(cluster, session, payments)
        const investigate = yield* requestOnTarget
        expect(
          (yield* investigate({ door: "interactive", target: payments, signalName: "DiskFilling", signalType: "interactive", description: "x" }, callBy("sre")))
            .name
        )
          .toBe(session.rr)
        const created = yield* investigate(
          { door: "interactive", target: checkout, signalName: "DiskFilling", signalType: "interactive", description: "x" },
          callBy("sre")
        )
        const other = yield* cluster.getCr("remediationrequests", created.name)
        // Same signal name, other target: another fingerprint; the fingerprint label holds the spec's.
        const spec = (o: typeof made) => o.spec as { signalFingerprint: string }
        expect(spec(other).signalFingerprint).not.toBe(spec(made).signalFingerprint)
        expect(other.metadata.labels?.["kubemend.io/signal-fingerprint"]).toBe(spec(other).signalFingerprint.slice(0, 63))
        expect((yield* cluster.listCr("remediationrequests")).items).toHaveLength(2)
      }).pipe(Effect.provide(Layer.merge(k8s, RecordedAudit.layer)))
    }))
})
