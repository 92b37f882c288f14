import { assert, describe, it } from "@effect/vitest"
import { Either, JSONSchema, Option, Schema } from "effect"
import { parse } from "yaml"
import { parseGoDuration } from "../../src/Config.ts"
import {
  ActionTypeCreateRequest,
  AuditEvent,
  AuditEventRequest,
  GoDurationString,
  IncidentRequest,
  IncidentResponse,
  issuesFromParseError,
  AIAnalysis,
  InvestigationSession,
  Platform,
  RemediationApprovalRequest,
  RemediationRequest,
  RemediationWorkflowDocument,
  SessionStatus,
  Workflow,
  WorkflowExecution
} from "../../src/domain/index.ts"

const pathsOf = <A, I>(schema: Schema.Schema<A, I, never>, input: unknown) => {
  const r = Schema.decodeUnknownEither(schema)(input, { errors: "all" })
  return Either.isLeft(r) ? issuesFromParseError(r.left).map((i) => i.path) : []
}

const toolExecuted = {
  version: "1.0",
  event_type: "apifrontend.tool.executed",
  event_timestamp: "2025-11-20T09:20:01.123Z",
  event_category: "apifrontend",
  event_action: "executed",
  event_outcome: "success",
  correlation_id: "rr-7f3a9c",
  actor_type: "user",
  actor_id: "alice",
  actor_ip: "10.0.4.17",
  namespace: "kubemend-system",
  cluster_id: null,
  duration_ms: 42,
  event_data: {
    event_type: "apifrontend.tool.executed",
    session_id: "is-rr-7f3a9c",
    tool_name: "svc_get_remediation",
    execution_duration_ms: 42,
    tool_outcome: "success"
  }
}

describe("audit event envelope", () => {
  it("decodes a tool.executed event and its stored form", () => {
    const e = Schema.decodeUnknownSync(AuditEventRequest)(toolExecuted)
    assert.strictEqual(e.event_outcome, "success")
    assert.strictEqual(e.cluster_id, null)
    assert.strictEqual(e.event_data.tool_name, "svc_get_remediation")
    const stored = Schema.decodeUnknownSync(AuditEvent)({
      ...toolExecuted,
      event_id: "8d3c1f0a-6b1e-4f7a-9c2d-3e4f5a6b7c8d",
      event_date: "2025-11-20",
      event_hash: "a".repeat(64),
      previous_event_hash: "",
      hash_algorithm: "sha256-unkeyed",
      legal_hold: false
    })
    assert.strictEqual(stored.hash_algorithm, "sha256-unkeyed")
  })

  it("names each invalid envelope field", () => {
    assert.deepStrictEqual(
      pathsOf(AuditEventRequest, {
        ...toolExecuted,
        event_outcome: "maybe",
        event_category: "nonsense",
        event_timestamp: "yesterday",
        correlation_id: "",
        event_data: "not an object"
      }),
      ["event_timestamp", "event_category", "event_outcome", "correlation_id", "event_data"]
    )
    const { version: _, ...missing } = toolExecuted
    assert.deepStrictEqual(pathsOf(AuditEventRequest, missing), ["version"])
    assert.deepStrictEqual(pathsOf(AuditEventRequest, { ...toolExecuted, parent_event_id: "not-a-uuid" }), ["parent_event_id"])
  })
})

const incident = {
  incident_id: "inc-001",
  remediation_id: "rr-7f3a9c",
  signal_name: "OOMKilled",
  severity: "low",
  signal_source: "alertmanager",
  resource_namespace: "payments",
  resource_kind: "Deployment",
  resource_name: "payments-api",
  resource_api_version: "apps/v1",
  error_message: "container killed",
  environment: "production",
  priority: "P1",
  risk_tolerance: "medium",
  business_category: "payments",
  cluster_name: "prod-eu-1",
  signal_labels: { team: "payments" },
  signal_mode: "reactive",
  interactive: null
}

describe("agent incident contract", () => {
  it("decodes an IncidentRequest with the severity alias", () => {
    const r = Schema.decodeUnknownSync(IncidentRequest)(incident)
    assert.strictEqual(r.severity, "info")
    assert.strictEqual(r.interactive, null)
  })

  it("names every missing required field and the empty remediation_id", () => {
    assert.deepStrictEqual(pathsOf(IncidentRequest, { ...incident, remediation_id: "", severity: "page" }), [
      "remediation_id",
      "severity"
    ])
    assert.strictEqual(pathsOf(IncidentRequest, {}).length, 15)
  })

  it("decodes an IncidentResponse; needs_human_review defaults to false", () => {
    const r = Schema.decodeUnknownSync(IncidentResponse)({
      incident_id: "inc-001",
      analysis: "memory limit too low",
      root_cause_analysis: { summary: "limit 512Mi < working set", contributing_factors: ["traffic"] },
      root_cause: "limit 512Mi < working set",
      investigation_outcome: "workflow_selected",
      actionable: true,
      confidence: 0.82,
      timestamp: "2025-11-20T09:14:50Z",
      selected_workflow: {
        workflow_id: "5d0e9a52-3c1f-5b7e-9a1d-8f2c4b6e0a11",
        action_type: "IncreaseMemoryLimit",
        parameters: { MEMORY_LIMIT: "1Gi" },
        extra: 1
      },
      human_review_reason: null,
      alignment_verdict: { result: "aligned", flagged: 0, total: 12 }
    })
    assert.isFalse(r.needs_human_review)
    assert.strictEqual(r.selected_workflow?.action_type, "IncreaseMemoryLimit")
    assert.strictEqual(r.selected_workflow?.extra, 1)
    assert.deepStrictEqual(
      pathsOf(IncidentResponse, { incident_id: "x", analysis: "", root_cause_analysis: {}, confidence: 1.2, timestamp: "t", human_review_reason: "bored" }),
      ["confidence", "human_review_reason"]
    )
  })

  it("session status: the five values, running read as investigating", () => {
    for (const status of ["pending", "investigating", "completed", "failed", "cancelled"]) {
      assert.strictEqual(Schema.decodeUnknownSync(SessionStatus)({ status, progress: "turn 3/40" }).status, status)
    }
    assert.strictEqual(Schema.decodeUnknownSync(SessionStatus)({ session_id: "s", status: "running" }).status, "investigating")
    assert.deepStrictEqual(pathsOf(SessionStatus, { status: "sleeping" }), ["status"])
  })
})

const workflowYaml = `
apiVersion: kubemend.io/v1alpha1
kind: RemediationWorkflow
metadata: { name: oom-increase-memory }
spec:
  version: v1.2.0
  actionType: IncreaseMemoryLimit
  description:
    what: Raises the memory limit of the target's containers
    whenToUse: Repeated OOMKilled with a working set near the limit
  labels: { severity: [critical, high], component: [apps/v1/Deployment], environment: [production, staging], priority: "*" }
  execution: { engine: job, bundle: "quay.io/acme/oom@sha256:abc" }
  parameters:
    - { name: MEMORY_LIMIT, type: string, description: New limit, required: true, pattern: "^[0-9]+(Mi|Gi)$" }
    - { name: DRY_RUN, type: boolean, description: Only print, required: false, default: false }
`

describe("workflow catalog records", () => {
  it("decodes a RemediationWorkflow document and the stored workflow", () => {
    const doc = Schema.decodeUnknownSync(RemediationWorkflowDocument)(parse(workflowYaml))
    assert.strictEqual(doc.spec.parameters[0]?.pattern, "^[0-9]+(Mi|Gi)$")
    const stored = Schema.decodeUnknownSync(Workflow)({
      workflowId: "5d0e9a52-3c1f-5b7e-9a1d-8f2c4b6e0a11",
      workflowName: "oom-increase-memory",
      name: "Increase memory limit",
      version: "v1.2.0",
      description: doc.spec.description,
      actionType: "IncreaseMemoryLimit",
      content: workflowYaml,
      contentHash: "f".repeat(64),
      status: "Active",
      labels: doc.spec.labels,
      parameters: doc.spec.parameters
    })
    assert.strictEqual(stored.status, "Active")
  })

  it("names invalid workflow fields", () => {
    const doc = parse(workflowYaml)
    doc.spec.parameters = []
    doc.spec.labels.severity = ["medium"]
    delete doc.spec.description.whenToUse
    assert.deepStrictEqual(pathsOf(RemediationWorkflowDocument, doc), [
      "spec.description.whenToUse",
      "spec.labels.severity[0]",
      "spec.parameters"
    ])
    assert.deepStrictEqual(
      pathsOf(Workflow, { workflowId: "nope", status: "Retired", contentHash: "abc" }).filter((p) => ["workflowId", "status", "contentHash"].includes(p)),
      ["workflowId", "contentHash", "status"]
    )
    assert.deepStrictEqual(pathsOf(ActionTypeCreateRequest, { name: "RestartPod", description: { what: "x" }, registeredBy: "" }), [
      "description.whenToUse",
      "registeredBy"
    ])
  })
})

describe("Go durations", () => {
  it("GoDurationString accepts exactly what the config loader parses", () => {
    for (const s of ["0", "0s", "30s", "15m", "2160h", "1h30m", "1.5h", "250ms", "10us", "10µs", "5ns", "", "30", "30 s", "-5m", "1d", "h"]) {
      const schemaOk = Either.isRight(Schema.decodeUnknownEither(GoDurationString)(s))
      assert.strictEqual(schemaOk, Option.isSome(parseGoDuration(s)), JSON.stringify(s))
    }
  })
})

describe("JSON Schema", () => {
  it("every resource and record schema renders flat (no $ref) for CRD and tool schemas", () => {
    const schemas = {
      RemediationRequest,
      RemediationApprovalRequest,
      AIAnalysis,
      InvestigationSession,
      WorkflowExecution,
      Platform,
      AuditEventRequest,
      AuditEvent,
      IncidentRequest,
      IncidentResponse,
      SessionStatus,
      Workflow,
      RemediationWorkflowDocument
    }
    for (const [name, schema] of Object.entries(schemas)) {
      const json = JSON.stringify(JSONSchema.make(schema as Schema.Schema<unknown, unknown, never>))
      assert.notInclude(json, "$ref", name)
    }
  })
})
