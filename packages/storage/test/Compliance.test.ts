/** Signed export, RemediationRequest reconstruction, effectiveness and remediation-history context over HTTP. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Jose from "jose"
import * as Yaml from "yaml"
import { auditEvent, client, Harness, harnessLayer, json } from "./support/Harness.ts"

const write = (events: ReadonlyArray<Record<string, unknown>>) =>
  Effect.gen(function* () {
    const h = yield* Harness
    const r = yield* Effect.promise(() => h.fetch("/api/v1/audit/events/batch", json(events)))
    expect(r.status).toBe(201)
  })

const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString()

const ev = (correlation_id: string, event_type: string, event_data: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  auditEvent({
    correlation_id,
    event_type,
    event_category: event_type.split(".")[0] === "gateway" ? "gateway" : event_type.startsWith("effectiveness") ? "effectiveness" : "orchestration",
    event_action: event_type.split(".").pop(),
    event_data: { event_type, ...event_data },
    ...extra
  })

/** What the platform's controllers write for one remediation, in order. */
const remediationTrail = (cid: string) => [
  ev(cid, "gateway.signal.received", {
    signal_type: "alert",
    signal_name: "HighCPU",
    namespace: "prod",
    fingerprint: "a".repeat(64),
    severity: "critical",
    resource_kind: "Deployment",
    resource_name: "api",
    signal_labels: { alertname: "HighCPU", severity: "critical" },
    signal_annotations: { summary: "CPU usage is high" },
    original_payload: { alert: "data" }
  }, { namespace: "prod", event_timestamp: at(30) }),
  ev(cid, "orchestrator.lifecycle.created", { rr_name: cid, namespace: "kubemend-system", timeout_config: { global: "1h0m0s", processing: "10m0s" } }, {
    event_timestamp: at(29)
  }),
  ev(cid, "aianalysis.analysis.completed", {
    analysis_name: `ai-${cid}`,
    namespace: "kubemend-system",
    phase: "Completed",
    approval_required: false,
    degraded_mode: false,
    warnings_count: 0,
    workflow_id: "wf-1"
  }, { event_category: "analysis", event_timestamp: at(25) }),
  ev(cid, "workflowexecution.selection.completed", {
    workflow_id: "wf-1",
    workflow_version: "1.0.0",
    workflow_name: "scale-up",
    target_resource: "prod/Deployment/api",
    phase: "Pending",
    container_image: "ghcr.io/x/scale@sha256:1",
    execution_name: `we-${cid}`
  }, { event_category: "workflowexecution", event_timestamp: at(24) }),
  ev(cid, "workflowexecution.execution.started", {
    workflow_id: "wf-1",
    workflow_version: "1.0.0",
    target_resource: "prod/Deployment/api",
    phase: "Running",
    container_image: "ghcr.io/x/scale@sha256:1",
    execution_name: `we-${cid}`,
    started_at: at(23)
  }, { event_category: "workflowexecution", event_timestamp: at(23), namespace: "kubemend-system" }),
  ev(cid, "orchestrator.lifecycle.completed", { rr_name: cid, namespace: "kubemend-system", outcome: "Success", crd_outcome: "Remediated" }, {
    event_timestamp: at(20)
  })
]

layer(harnessLayer((base) => ({ export: { ...base.export, maxEvents: 20 } })), { excludeTestServices: true, timeout: "120 seconds" })(
  "compliance and read models",
  (it) => {
    it.effect("exports with a detached JWS that verifies with the published key (and fails on a changed byte)", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        yield* write([
          auditEvent({ correlation_id: "rr-export", event_data: { user_email: "alice@example.com" } }),
          auditEvent({ correlation_id: "rr-export", event_data: { user_email: "bob@example.com" } })
        ])
        const r = yield* Effect.promise(() => h.fetch("/api/v1/audit/export?correlation_id=rr-export&redact_pii=true"))
        expect(r.status).toBe(200)
        const signature = r.headers.get("x-export-signature")!
        const body = new Uint8Array(yield* Effect.promise(() => r.arrayBuffer()))
        const keys = (yield* Effect.promise(() => h.fetch("/api/v1/audit/export/signing-key", { token: null }).then((x) => x.json()))) as Jose.JSONWebKeySet
        const [protectedHeader, , sig] = signature.split(".")
        const jwks = Jose.createLocalJWKSet(keys)
        const verified = yield* Effect.promise(() =>
          Jose.flattenedVerify({ protected: protectedHeader!, payload: Jose.base64url.encode(body), signature: sig! }, jwks)
        )
        expect(verified.protectedHeader?.alg).toBe("ES256")
        const tampered = body.slice()
        tampered[10] = tampered[10]! ^ 1
        const refused = yield* Effect.flip(
          Effect.tryPromise(() => Jose.flattenedVerify({ protected: protectedHeader!, payload: Jose.base64url.encode(tampered), signature: sig! }, jwks))
        )
        expect(refused.error).toBeInstanceOf(Jose.errors.JWSSignatureVerificationFailed)

        const doc = JSON.parse(new TextDecoder().decode(body))
        expect(doc.export_metadata).toMatchObject({
          total_events: 2,
          signature_algorithm: "ES256",
          signature_key_id: keys.keys[0]!.kid,
          exported_by: "system:serviceaccount:kubemend-system:gateway"
        })
        expect(doc.hash_chain_verification).toMatchObject({ total_events_verified: 2, valid_chain_events: 2, broken_chain_events: 0 })
        expect(doc.events.map((e: { hash_chain_valid: boolean }) => e.hash_chain_valid)).toEqual([true, true])
        expect(doc.events[0].event_data.user_email).toBe("a***@e***.com")
      }))

    it.effect("refuses an export of more events than allowed with 413, and pages with offset/limit", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        yield* write(Array.from({ length: 25 }, () => auditEvent({ correlation_id: "rr-big-export" })))
        const tooMany = yield* Effect.promise(() => h.fetch("/api/v1/audit/export?correlation_id=rr-big-export"))
        expect(tooMany.status).toBe(413)
        expect(tooMany.headers.get("content-type")).toContain("application/problem+json")
        const page = yield* Effect.promise(() => h.fetch("/api/v1/audit/export?correlation_id=rr-big-export&offset=10&limit=20"))
        expect(page.status).toBe(200)
        expect(((yield* Effect.promise(() => page.json())) as { events: Array<unknown> }).events).toHaveLength(15)
      }))

    it.effect("reconstructs a RemediationRequest from a realistic trail; 404 without events, 400 when too incomplete", () =>
      Effect.gen(function* () {
        const api = yield* client
        yield* write(remediationTrail("rr-recon"))
        const result = yield* api.compliance.reconstructRemediationRequest({ path: { correlation_id: "rr-recon" } })
        expect(result.validation).toEqual({ is_valid: true, completeness: 100, errors: [], warnings: [] })
        const rr = Yaml.parse(result.remediation_request_yaml)
        expect(rr).toMatchObject({
          apiVersion: "kubemend.io/v1alpha1",
          kind: "RemediationRequest",
          metadata: { name: "rr-recon", namespace: "kubemend-system" },
          spec: {
            signalName: "HighCPU",
            signalFingerprint: "a".repeat(64),
            severity: "critical",
            targetResource: { kind: "Deployment", name: "api", namespace: "prod" },
            signalLabels: { alertname: "HighCPU" },
            originalPayload: "{\"alert\":\"data\"}"
          },
          status: {
            overallPhase: "Completed",
            outcome: "Remediated",
            timeoutConfig: { global: "1h0m0s" },
            selectedWorkflowRef: { workflowId: "wf-1", version: "1.0.0", workflowName: "scale-up" },
            workflowExecutionRef: { name: "we-rr-recon" },
            aiAnalysisRef: { name: "ai-rr-recon" }
          }
        })
        const missing = yield* Effect.flip(api.compliance.reconstructRemediationRequest({ path: { correlation_id: "rr-nothing" } }))
        expect(missing).toMatchObject({ status: 404 })
        yield* write([ev("rr-thin", "gateway.signal.received", { signal_name: "X", fingerprint: "b".repeat(64) })])
        const thin = yield* Effect.flip(api.compliance.reconstructRemediationRequest({ path: { correlation_id: "rr-thin" } }))
        expect(thin).toMatchObject({ status: 400, type: "https://kubemend.io/problems/reconstruction-incomplete" })
        yield* write([auditEvent({ correlation_id: "rr-no-genesis" })])
        expect(yield* Effect.flip(api.compliance.reconstructRemediationRequest({ path: { correlation_id: "rr-no-genesis" } }))).toMatchObject({ status: 400 })
      }))

    it.effect("scores effectiveness per remediation and aggregates it per workflow", () =>
      Effect.gen(function* () {
        const api = yield* client
        const eff = (cid: string, component: string, score: number | null, extra: Record<string, unknown> = {}) =>
          ev(cid, `effectiveness.${component}.assessed`, { correlation_id: cid, namespace: "prod", component, assessed: score !== null, score, ...extra })
        yield* write([
          eff("rr-e1", "health", 1),
          eff("rr-e1", "alert", 0.5),
          eff("rr-e1", "metrics", 0),
          ev("rr-e1", "effectiveness.hash.computed", {
            correlation_id: "rr-e1",
            namespace: "prod",
            component: "hash",
            pre_remediation_spec_hash: "sha256:aa",
            post_remediation_spec_hash: "sha256:bb",
            hash_match: false
          }),
          ev("rr-e1", "effectiveness.assessment.completed", { correlation_id: "rr-e1", namespace: "prod", component: "completed", reason: "Full" })
        ])
        const score = yield* api.compliance.getEffectivenessScore({ path: { correlation_id: "rr-e1" } })
        expect(score).toMatchObject({
          score: 0.575,
          assessment_status: "Full",
          components: { health_score: 1, alert_score: 0.5, metrics_score: 0 },
          hash_comparison: { pre_remediation_spec_hash: "sha256:aa", hash_match: false }
        })
        expect(yield* Effect.flip(api.compliance.getEffectivenessScore({ path: { correlation_id: "rr-no-effect" } }))).toMatchObject({ status: 404 })

        const run = (cid: string, outcome: "completed" | "failed", durationMs: number, namespace: string) =>
          ev(cid, `workflowexecution.workflow.${outcome}`, {
            workflow_id: "wf-agg",
            workflow_version: "1",
            target_resource: `${namespace}/Deployment/api`,
            phase: outcome === "completed" ? "Completed" : "Failed",
            container_image: "i",
            execution_name: `we-${cid}`
          }, { duration_ms: durationMs, namespace })
        yield* write([
          run("rr-a1", "completed", 60_000, "prod"),
          run("rr-a2", "completed", 120_000, "prod"),
          run("rr-a3", "failed", 30_000, "dev"),
          eff("rr-a1", "health", 1)
        ])
        const all = yield* api.compliance.getWorkflowEffectiveness({ urlParams: { workflow_id: "wf-agg" } })
        expect(all).toEqual({ workflow_id: "wf-agg", success_rate: 0.6667, avg_duration: "1m10s", sample_size: 3, avg_effectiveness_score: 1 })
        const prod = yield* api.compliance.getWorkflowEffectiveness({ urlParams: { workflow_id: "wf-agg", namespace: "prod" } })
        expect(prod).toMatchObject({ namespace: "prod", success_rate: 1, avg_duration: "1m30s", sample_size: 2 })
      }))

    it.effect("builds the remediation-history context with tier windows and regression detection", () =>
      Effect.gen(function* () {
        const api = yield* client
        const created = (cid: string, minutesAgo: number) =>
          ev(cid, "remediation.workflow_created", {
            rr_name: cid,
            namespace: "kubemend-system",
            target_resource: "prod/Deployment/web",
            pre_remediation_spec_hash: "sha256:old",
            action_type: "ScaleReplicas",
            signal_type: "alert",
            signal_fingerprint: "f"
          }, { event_timestamp: at(minutesAgo) })
        yield* write([
          created("rr-h1", 60),
          ev("rr-h1", "effectiveness.assessment.completed", { correlation_id: "rr-h1", namespace: "prod", component: "completed", reason: "Full" }, {
            event_timestamp: at(50)
          }),
          ev("rr-h1", "effectiveness.health.assessed", {
            correlation_id: "rr-h1",
            namespace: "prod",
            component: "health",
            score: 1,
            health_checks: { podRunning: true }
          }, { event_timestamp: at(55) }),
          ev("rr-h1", "orchestrator.lifecycle.completed", { rr_name: "rr-h1", namespace: "kubemend-system", crd_outcome: "Remediated" }, {
            event_timestamp: at(50)
          }),
          created("rr-h2", 60 * 24 * 30)
        ])
        const query = { targetKind: "Deployment", targetName: "web", targetNamespace: "prod" }
        const plain = yield* api.compliance.getRemediationHistoryContext({ urlParams: query })
        expect(plain).toMatchObject({
          targetResource: "prod/Deployment/web",
          regressionDetected: false,
          tier1: { window: "24h" },
          tier2: { window: "2160h", chain: [] }
        })
        expect(plain.tier1.chain).toEqual([
          expect.objectContaining({
            remediationUID: "rr-h1",
            actionType: "ScaleReplicas",
            outcome: "Remediated",
            effectivenessScore: 1,
            assessmentReason: "Full",
            healthChecks: { podRunning: true },
            hashMatch: "none"
          })
        ])
        const regressed = yield* api.compliance.getRemediationHistoryContext({ urlParams: { ...query, currentSpecHash: "sha256:old", tier1Window: "2h" } })
        expect(regressed.regressionDetected).toBe(true)
        expect(regressed.tier1.chain.map((e) => e.remediationUID)).toEqual(["rr-h1"])
        expect(regressed.tier2.chain).toEqual([expect.objectContaining({ remediationUID: "rr-h2", hashMatch: "preRemediation" })])
        const h = yield* Harness
        const bad = yield* Effect.promise(() =>
          h.fetch("/api/v1/remediation-history/context?targetKind=Deployment&targetName=web&targetNamespace=prod&tier1Window=1day")
        )
        expect(bad.status).toBe(400)
      }))
  }
)
