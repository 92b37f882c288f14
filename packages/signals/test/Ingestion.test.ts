/** The signal API over HTTP against the dev API server: what Alertmanager and event exporters see. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { alert, post, startKube, startSignals, webhook } from "./Harness.ts"

const prom = "/api/v1/signals/prometheus"

describe("signal ingestion", () => {
  it.scopedLive("a firing alert on a pod makes one request for its Deployment, with every spec field and the genesis audit event", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const svc = yield* startSignals(kube)
      const res = yield* post(svc.url + prom, webhook([alert({ namespace: "shop", pod: "checkout-7d9f-abcde" })]), sender)
      expect(res.status).toBe(201)
      expect(res.body).toMatchObject({
        status: "accepted",
        fingerprint: expect.stringMatching(/^[a-f0-9]{64}$/),
        remediationRequestRef: { namespace: "kubemend-system" }
      })
      const rr = kube.get("kubemend.io/v1alpha1", "RemediationRequest", res.body.remediationRequestRef.name, "kubemend-system")!
      expect(rr.spec).toMatchObject({
        signalName: "KubePodCrashLooping",
        signalFingerprint: res.body.fingerprint,
        severity: "critical",
        signalType: "alert",
        signalSource: "prometheus",
        targetType: "kubernetes",
        targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: "checkout", namespace: "shop" },
        firingTime: "2026-11-26T01:00:00.000Z",
        signalLabels: { namespace: "shop", pod: "checkout-7d9f-abcde", severity: "critical" },
        signalAnnotations: { summary: "Pod is crash looping" }
      })
      expect(typeof (rr.spec as any).receivedTime).toBe("string")
      expect(JSON.parse((rr.spec as any).providerData)).toMatchObject({ alertmanagerFingerprint: "c0ffee0123456789", receiver: "kubemend" })
      expect(JSON.parse((rr.spec as any).originalPayload)).toMatchObject({ labels: { pod: "checkout-7d9f-abcde" } })
      const events = yield* svc.recorder.events
      const genesis = events.find((e) => e.event_type === "gateway.signal.received")!
      expect(genesis.correlation_id).toBe(rr.metadata.name)
      expect(genesis.event_data).toMatchObject({
        fingerprint: res.body.fingerprint,
        resource_kind: "Deployment",
        resource_name: "checkout",
        target_namespace: "shop"
      })

      // Another pod of the same Deployment is the same remediation.
      const again = yield* post(svc.url + prom, webhook([alert({ namespace: "shop", pod: "checkout-7d9f-fghij" })]), sender)
      expect(again.status).toBe(202)
      expect(again.body).toMatchObject({
        status: "deduplicated",
        fingerprint: res.body.fingerprint,
        count: 2,
        remediationRequestRef: res.body.remediationRequestRef
      })
    }))

  it.scopedLive("1,000 identical alerts in one burst make exactly one request, counted in status.deduplication", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const svc = yield* startSignals(kube)
      const body = webhook([alert({ namespace: "shop", pod: "checkout-7d9f-abcde" })])
      const answers = yield* Effect.forEach(Array.from({ length: 1000 }), () => post(svc.url + prom, body, sender), { concurrency: 50 })
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1)
      expect(answers.filter((a) => a.status === 202)).toHaveLength(999)
      expect(Math.max(...answers.map((a) => a.body.count ?? 1))).toBe(1000)
      const rrs = kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system")
      expect(rrs).toHaveLength(1)
      // The count is written back by one writer; it settles at 1,000.
      yield* Effect.promise(async () => {
        for (let i = 0; i < 100; i++) {
          const s = kube.get("kubemend.io/v1alpha1", "RemediationRequest", rrs[0]!.metadata.name, "kubemend-system")!.status as any
          if (s?.deduplication?.occurrenceCount === 1000) return
          await new Promise((r) => setTimeout(r, 50))
        }
        throw new Error("deduplication count never reached 1000")
      })
      const metrics = yield* Effect.promise(() => fetch(svc.metricsUrl + "/metrics").then((r) => r.text()))
      expect(metrics).toMatch(/gateway_signals_deduplicated_total\{signal_name="KubePodCrashLooping"\} 999/)
      expect(metrics).toMatch(/gateway_crds_created_total\{source_type="prometheus",status="success"\} 1/)
    }), { timeout: 60_000 })

  it.scopedLive("the request watch: duplicates read nothing from the API; a request ended past the cooldown or deleted gets a new one at the next alert", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      // Re-reading a known request's phase is off: what changes in the cluster must arrive through the watch.
      const svc = yield* startSignals(kube, { phaseRefresh: Duration.hours(1) })
      const body = webhook([alert({ namespace: "shop", deployment: "checkout" })])
      const firstOf = (status: number) =>
        Effect.promise(async () => {
          for (let i = 0; i < 60; i++) {
            const res = await Effect.runPromise(post(svc.url + prom, body, sender))
            if (res.status === status) return res.body
            await new Promise((r) => setTimeout(r, 50))
          }
          throw new Error(`never answered ${status}`)
        })
      const first = yield* firstOf(201)
      kube.clearRequests()
      yield* Effect.forEach(Array.from({ length: 20 }), () => post(svc.url + prom, body, sender), { discard: true })
      expect(kube.requests().filter((r) => r.resource === "remediationrequests" && (r.verb === "get" || r.verb === "list"))).toEqual([])

      const rr = kube.get("kubemend.io/v1alpha1", "RemediationRequest", first.remediationRequestRef.name, "kubemend-system")!
      kube.put({ ...rr, status: { ...(rr.status as object), overallPhase: "Completed", completedAt: new Date(Date.now() - 10 * 60_000).toISOString() } })
      const second = yield* firstOf(201)
      expect(second.remediationRequestRef.name).not.toBe(first.remediationRequestRef.name)
      kube.delete("kubemend.io/v1alpha1", "RemediationRequest", second.remediationRequestRef.name, "kubemend-system")
      const third = yield* firstOf(201)
      // Not the deleted request's name again: audit events are keyed by it.
      expect(third.remediationRequestRef.name).not.toBe(second.remediationRequestRef.name)
      expect(kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system").map((r) => r.metadata.name).sort())
        .toEqual([first.remediationRequestRef.name, third.remediationRequestRef.name].sort())
    }))

  it.scopedLive("resolved alerts are recorded and never make a request; a grouped payload answers per alert", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const svc = yield* startSignals(kube)
      const resolved = yield* post(svc.url + prom, webhook([alert({ namespace: "shop", pod: "checkout-7d9f-abcde" }, "resolved")], "resolved"), sender)
      expect(resolved.status).toBe(200)
      expect(resolved.body).toMatchObject({ status: "recorded" })
      expect(kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system")).toHaveLength(0)
      expect((yield* svc.recorder.events).map((e) => e.event_type)).toEqual(["gateway.signal.resolved"])

      const grouped = yield* post(
        svc.url + prom,
        webhook([
          alert({ namespace: "shop", pod: "checkout-7d9f-abcde" }),
          alert({ namespace: "shop", statefulset: "payments-db", alertname: "PersistentVolumeFillingUp", severity: "medium" }),
          alert({ namespace: "shop", pod: "gone-pod" }),
          alert({ namespace: "shop", deployment: "checkout" }, "resolved")
        ]),
        sender
      )
      expect(grouped.status).toBe(201)
      expect(grouped.body.results.map((r: any) => r.status)).toEqual(["accepted", "accepted", "rejected", "resolved"])
      expect(grouped.body.results[2]).toMatchObject({ reason: "target_not_found" })
      const rrs = kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system")
      expect(rrs.map((r) => (r.spec as any).severity).sort()).toEqual(["critical", "warning"])
    }))

  it.scopedLive("who may send: no token 401, a token without the role 403, a revoked token 401; all as problems", () =>
    Effect.gen(function* () {
      const { kube, stranger } = yield* startKube
      const svc = yield* startSignals(kube)
      const body = webhook([alert({ namespace: "shop", pod: "checkout-7d9f-abcde" })])
      const none = yield* post(svc.url + prom, body)
      expect(none).toMatchObject({ status: 401, contentType: "application/problem+json" })
      const forbidden = yield* post(svc.url + prom, body, stranger)
      expect(forbidden).toMatchObject({ status: 403, contentType: "application/problem+json" })
      const bogus = yield* post(svc.url + prom, body, "not-a-token")
      expect(bogus.status).toBe(401)
      expect(kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system")).toHaveLength(0)
    }))

  it.scopedLive("bad input: 400 naming the field, unknown version 400, malformed JSON 400, oversized 413, nothing created", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const svc = yield* startSignals(kube, { maxBodyBytes: 4096 })
      const url = svc.url + prom
      const noName = yield* post(url, webhook([{ ...alert({ namespace: "shop", pod: "x" }), labels: { namespace: "shop" } }]), sender)
      expect(noName).toMatchObject({ status: 400, contentType: "application/problem+json" })
      expect(noName.body.detail).toContain("alerts.0.labels.alertname")
      const version = yield* post(url, { ...webhook([alert({ namespace: "shop", pod: "x" })]), version: "5" }, sender)
      expect(version.status).toBe(400)
      expect(version.body.detail).toContain("version")
      const status = yield* post(url, { ...webhook([alert({})]), alerts: [{ ...alert({}), status: "pending" }] }, sender)
      expect(status.body.detail).toContain("alerts.0.status")
      expect((yield* post(url, "{not json", sender)).status).toBe(400)
      expect((yield* post(url, { version: "4", status: "firing", alerts: [] }, sender)).body.detail).toContain("alerts")
      const big = yield* post(url, webhook([{ ...alert({ namespace: "shop", pod: "x" }), annotations: { description: "x".repeat(10_000) } }]), sender)
      expect(big).toMatchObject({ status: 413, contentType: "application/problem+json" })
      const untargeted = yield* post(url, webhook([alert({ service: "checkout" })]), sender)
      expect(untargeted.status).toBe(400)
      expect(untargeted.body.detail).toContain("no_namespace")
      expect(kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system")).toHaveLength(0)
    }))

  it.scopedLive("the Kubernetes API down: 503 (Alertmanager retries), then the retry is accepted", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const svc = yield* startSignals(kube)
      const body = webhook([alert({ namespace: "shop", deployment: "checkout" })])
      kube.faults.failNext(100, { verb: "create", resource: "remediationrequests", status: 503 })
      const down = yield* post(svc.url + prom, body, sender)
      expect(down).toMatchObject({ status: 503, contentType: "application/problem+json" })
      kube.faults.reset()
      const retried = yield* post(svc.url + prom, body, sender)
      expect(retried.status).toBe(201)
      expect(kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system")).toHaveLength(1)
    }))

  it.scopedLive("a posted Kubernetes Warning event makes a request; a reason off the allow-list is ignored", () =>
    Effect.gen(function* () {
      const { kube, sender } = yield* startKube
      const svc = yield* startSignals(kube)
      const event = {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: "checkout-7d9f-abcde.1", namespace: "shop" },
        involvedObject: { kind: "Pod", name: "checkout-7d9f-abcde", namespace: "shop", apiVersion: "v1" },
        reason: "BackOff",
        message: "Back-off restarting failed container",
        type: "Warning",
        count: 5,
        firstTimestamp: "2026-11-26T01:00:00Z",
        lastTimestamp: "2026-11-26T01:05:00Z"
      }
      const res = yield* post(svc.url + "/api/v1/signals/kubernetes-event", event, sender)
      expect(res.status).toBe(201)
      const rr = kube.get("kubemend.io/v1alpha1", "RemediationRequest", res.body.remediationRequestRef.name, "kubemend-system")!
      expect(rr.spec).toMatchObject({
        signalName: "BackOff",
        signalType: "kubernetes-event",
        signalSource: "kubernetes",
        targetResource: { kind: "Deployment", name: "checkout" }
      })
      const ignored = yield* post(svc.url + "/api/v1/signals/kubernetes-event", { ...event, reason: "Pulled" }, sender)
      expect(ignored).toMatchObject({ status: 200, body: { status: "ignored", reason: "reason_not_allowed" } })
    }))
})
