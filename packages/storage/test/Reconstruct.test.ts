/**
 * RemediationRequest reconstruction over HTTP on real PostgreSQL, from the trails the lifecycle controllers write:
 * the terminal phase an RR really ended in (TimedOut and Cancelled are not Failed), the phase of an unfinished RR,
 * and the spec rebuilt from the orchestrator's first-sight event when nothing else audited the signal.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Yaml from "yaml"
import { auditEvent, client, Harness, harnessLayer, json } from "./support/Harness.ts"

const base = Date.now() - 60 * 60_000

/** The `n`-th event of a trail, a second after the previous one so the stored order is the written order. */
const ev = (cid: string, n: number, event_type: string, event_data: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  auditEvent({
    correlation_id: cid,
    event_type,
    event_category: event_type.startsWith("gateway.") ? "gateway" : event_type.startsWith("apifrontend.") ? "apifrontend" : "orchestration",
    event_action: event_type.split(".").pop(),
    event_timestamp: new Date(base + n * 1000).toISOString(),
    actor_type: "service",
    actor_id: "remediationorchestrator",
    event_data: { event_type, ...event_data },
    ...extra
  })

/** `orchestrator.lifecycle.created` as the orchestrator writes it on first sight of an RR. */
const created = (cid: string, n = 0) =>
  ev(cid, n, "orchestrator.lifecycle.created", {
    rr_name: cid,
    namespace: "kubemend-system",
    timeout_config: { global: "1h", analyzing: "10m" },
    signal_name: "KubePodCrashLooping",
    fingerprint: "c".repeat(64),
    severity: "critical",
    signal_type: "alert",
    signal_source: "prometheus",
    target_kind: "Deployment",
    target_name: "checkout",
    target_namespace: "shop",
    target_api_version: "apps/v1",
    signal_labels: { alertname: "KubePodCrashLooping" },
    signal_annotations: { description: "pods restart" }
  })

const moved = (cid: string, n: number, from: string, to: string) =>
  ev(cid, n, "orchestrator.lifecycle.transitioned", { rr_name: cid, namespace: "kubemend-system", from_phase: from, to_phase: to })

const write = (events: ReadonlyArray<Record<string, unknown>>) =>
  Effect.gen(function* () {
    const h = yield* Harness
    const r = yield* Effect.promise(() => h.fetch("/api/v1/audit/events/batch", json(events)))
    expect(r.status).toBe(201)
  })

const rebuild = (cid: string) =>
  Effect.gen(function* () {
    const api = yield* client
    const result = yield* api.compliance.reconstructRemediationRequest({ path: { correlation_id: cid } })
    return { ...result, rr: Yaml.parse(result.remediation_request_yaml) }
  })

layer(harnessLayer(), { excludeTestServices: true, timeout: "120 seconds" })("reconstruction of lifecycle trails", (it) => {
  it.effect("an RR that timed out is rebuilt as TimedOut with the phase it timed out in, not as Failed", () =>
    Effect.gen(function* () {
      yield* write([
        created("rr-timeout"),
        moved("rr-timeout", 1, "Pending", "Processing"),
        moved("rr-timeout", 2, "Processing", "Analyzing"),
        ev("rr-timeout", 3, "orchestrator.lifecycle.failed", {
          rr_name: "rr-timeout",
          namespace: "kubemend-system",
          from_phase: "Analyzing",
          overall_phase: "TimedOut",
          failure_phase: "Analyzing",
          timeout_phase: "Analyzing",
          failure_reason: "analyzing timeout (10m) exceeded in phase Analyzing"
        }, { event_outcome: "failure" })
      ])
      const { rr } = yield* rebuild("rr-timeout")
      expect(rr.status).toMatchObject({
        overallPhase: "TimedOut",
        timeoutPhase: "Analyzing",
        message: "analyzing timeout (10m) exceeded in phase Analyzing"
      })
      expect(rr.status.failurePhase).toBeUndefined()
    }))

  it.effect("a verification timeout keeps TimedOut and its outcome; a real failure stays Failed with its phase and reason", () =>
    Effect.gen(function* () {
      yield* write([
        created("rr-verify"),
        ev("rr-verify", 1, "orchestrator.lifecycle.failed", {
          rr_name: "rr-verify",
          from_phase: "Verifying",
          overall_phase: "TimedOut",
          timeout_phase: "Verifying",
          crd_outcome: "VerificationTimedOut"
        }),
        created("rr-rejected"),
        ev("rr-rejected", 1, "orchestrator.lifecycle.failed", {
          rr_name: "rr-rejected",
          from_phase: "AwaitingApproval",
          overall_phase: "Failed",
          failure_phase: "Approval",
          failure_reason: "rejected by alice"
        })
      ])
      expect((yield* rebuild("rr-verify")).rr.status).toMatchObject({ overallPhase: "TimedOut", timeoutPhase: "Verifying", outcome: "VerificationTimedOut" })
      expect((yield* rebuild("rr-rejected")).rr.status).toMatchObject({ overallPhase: "Failed", failurePhase: "Approval", failureReason: "rejected by alice" })
    }))

  it.effect("a cancelled RR is rebuilt as Cancelled", () =>
    Effect.gen(function* () {
      yield* write([
        created("rr-cancel"),
        moved("rr-cancel", 1, "Pending", "Processing"),
        ev("rr-cancel", 2, "orchestrator.lifecycle.cancelled", {
          rr_name: "rr-cancel",
          from_phase: "Processing",
          overall_phase: "Cancelled",
          message: "cancelled by sre-user"
        })
      ])
      expect((yield* rebuild("rr-cancel")).rr.status).toMatchObject({ overallPhase: "Cancelled", message: "cancelled by sre-user" })
    }))

  it.effect("an unfinished RR shows the phase of its last transition", () =>
    Effect.gen(function* () {
      yield* write([
        created("rr-waiting"),
        moved("rr-waiting", 1, "Pending", "Processing"),
        moved("rr-waiting", 2, "Processing", "Analyzing"),
        moved("rr-waiting", 3, "Analyzing", "AwaitingApproval")
      ])
      expect((yield* rebuild("rr-waiting")).rr.status.overallPhase).toBe("AwaitingApproval")
    }))

  it.effect("without a signal event the orchestrator's first-sight event is the genesis: spec, target and RR namespace", () =>
    Effect.gen(function* () {
      yield* write([created("rr-kubectl"), moved("rr-kubectl", 1, "Pending", "Processing")])
      const { rr, validation } = yield* rebuild("rr-kubectl")
      expect(rr.metadata).toMatchObject({ name: "rr-kubectl", namespace: "kubemend-system" })
      expect(rr.spec).toMatchObject({
        signalName: "KubePodCrashLooping",
        signalFingerprint: "c".repeat(64),
        severity: "critical",
        signalType: "alert",
        signalSource: "prometheus",
        targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: "checkout", namespace: "shop" },
        signalLabels: { alertname: "KubePodCrashLooping" }
      })
      expect(validation).toMatchObject({ is_valid: true, errors: [] })
      expect(validation.completeness).toBeGreaterThanOrEqual(75)
    }))

  it.effect("the gateway's rr.created stays the genesis and the orchestrator's event fills what it lacks", () =>
    Effect.gen(function* () {
      yield* write([
        ev("rr-gw", 0, "apifrontend.rr.created", {
          session_id: "s-1",
          rr_name: "rr-gw",
          rr_namespace: "kubemend-system",
          target_kind: "Deployment",
          target_name: "cart",
          fingerprint: "d".repeat(64),
          signal_name: "InteractiveInvestigation"
        }, { actor_type: "user", actor_id: "sre-user", namespace: "shop" }),
        {
          ...created("rr-gw", 1),
          event_data: {
            ...created("rr-gw", 1).event_data,
            signal_name: "Other",
            target_name: "other",
            severity: "unknown",
            signal_type: "interactive",
            signal_source: "gateway"
          }
        }
      ])
      const { rr } = yield* rebuild("rr-gw")
      expect(rr.spec).toMatchObject({
        signalName: "InteractiveInvestigation",
        signalFingerprint: "d".repeat(64),
        severity: "unknown",
        signalType: "interactive",
        targetResource: { kind: "Deployment", name: "cart", namespace: "shop", apiVersion: "apps/v1" }
      })
      expect(rr.spec.receivedTime).toBe(new Date(base).toISOString())
    }))

  it.effect("refuses (400) an orchestrator trail whose first-sight event does not carry the signal", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      yield* write([
        ev("rr-old", 0, "orchestrator.lifecycle.created", { rr_name: "rr-old", namespace: "kubemend-system", timeout_config: { global: "1h" } }),
        moved("rr-old", 1, "Pending", "Processing")
      ])
      const r = yield* Effect.promise(() => h.fetch("/api/v1/audit/remediation-requests/rr-old/reconstruct", { method: "POST" }))
      expect(r.status).toBe(400)
      expect(r.headers.get("content-type")).toContain("application/problem+json")
      expect(yield* Effect.promise(() => r.json())).toMatchObject({ type: "https://kubemend.io/problems/reconstruction-incomplete" })
    }))
})
