/**
 * Rebuilds a RemediationRequest from its audit trail (original: `pkg/datastorage/reconstruction`). The spec comes from
 * `gateway.signal.received`, `apifrontend.rr.created` (RRs created through the gateway) and the orchestrator's
 * `orchestrator.lifecycle.created`, which carries the signal too because Kubemend has no signal gateway of its own and
 * RRs may be created by anything; the first of them is the genesis. The orchestrator, analysis and
 * workflow-execution events fill in the status, keeping the terminal phase the RR really ended in (`Completed`,
 * `Failed`, `TimedOut`, `Cancelled`). Completeness is the share of the twelve tracked fields that the events supplied;
 * below 50% (or without a genesis event) the caller gets `ReconstructionIncomplete`.
 */
import type { AuditEvent } from "@kubemend/core/domain/Audit"
import { ReconstructionIncomplete } from "@kubemend/core/Errors"
import { Either } from "effect"
import * as Yaml from "yaml"

type Data = Record<string, unknown>

const str = (d: Data, k: string): string | undefined => (typeof d[k] === "string" && d[k] !== "" ? (d[k] as string) : undefined)
const obj = (d: Data, k: string): Data | undefined =>
  typeof d[k] === "object" && d[k] !== null && !Array.isArray(d[k]) && Object.keys(d[k] as Data).length > 0 ? (d[k] as Data) : undefined
const defined = (o: Data): Data => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/** Tracked fields: [path in the RR, required, warning when missing]. */
const tracked = [
  ["spec.signalName", true, "signalName is missing"],
  ["spec.signalFingerprint", true, "signalFingerprint is missing"],
  ["spec.targetResource", true, "targetResource is missing"],
  ["spec.signalType", false, "signalType is missing"],
  ["spec.severity", false, "severity is missing"],
  ["spec.signalLabels", false, "signalLabels are missing (Gap #2) - labels identify the alert"],
  ["spec.signalAnnotations", false, "signalAnnotations are missing (Gap #3) - annotations provide additional metadata"],
  ["spec.originalPayload", false, "originalPayload is missing (Gap #1) - the raw signal cannot be replayed"],
  ["status.timeoutConfig", false, "timeoutConfig is missing (Gap #8) - no orchestrator.lifecycle.created event"],
  ["status.selectedWorkflowRef", false, "selectedWorkflowRef is missing (Gap #5) - no workflow selection event"],
  ["status.workflowExecutionRef", false, "workflowExecutionRef is missing (Gap #6) - no execution started event"],
  ["status.overallPhase", false, "overallPhase is unknown - no lifecycle event"]
] as const

export interface Reconstruction {
  readonly yaml: string
  readonly completeness: number
  readonly errors: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

/** Events that describe the signal, most authoritative first; later ones only fill what earlier ones lack. */
const signalSources = ["gateway.signal.received", "apifrontend.rr.created", "orchestrator.lifecycle.created"] as const

/** The orchestrator's first-sight event counts as a signal source only when it carries the signal. */
const describesSignal = (e: AuditEvent) => e.event_type !== "orchestrator.lifecycle.created" || str(e.event_data, "signal_name") !== undefined

/** What one source event says about the RR's spec. */
const specOf = (e: AuditEvent): Data => {
  const g = e.event_data
  // The orchestrator's `namespace` is the RR's; the target's is `target_namespace` there.
  const lifecycle = e.event_type === "orchestrator.lifecycle.created"
  const kind = str(g, "resource_kind") ?? str(g, "target_kind")
  return defined({
    signalName: str(g, "signal_name"),
    signalFingerprint: str(g, "fingerprint"),
    signalType: str(g, "signal_type"),
    signalSource: str(g, "signal_source") ?? (lifecycle ? undefined : e.actor_id),
    severity: str(g, "severity") ?? e.severity ?? undefined,
    targetResource: kind === undefined
      ? undefined
      : defined({
        apiVersion: str(g, "target_api_version") ?? str(g, "resource_api_version"),
        kind,
        name: str(g, "resource_name") ?? str(g, "target_name"),
        namespace: str(g, "target_namespace") ?? (lifecycle ? undefined : str(g, "namespace") ?? e.namespace ?? undefined)
      }),
    receivedTime: lifecycle ? undefined : e.event_timestamp,
    signalLabels: obj(g, "signal_labels"),
    signalAnnotations: obj(g, "signal_annotations"),
    originalPayload: typeof g["original_payload"] === "string"
      ? g["original_payload"]
      : obj(g, "original_payload")
      ? JSON.stringify(g["original_payload"])
      : undefined
  })
}

/** Field-wise merge where the first value wins (target resources merge one level down). */
const mergeSpecs = (specs: ReadonlyArray<Data>): Data => {
  const merged: Data = {}
  for (const spec of specs) {
    for (const [k, v] of Object.entries(spec)) {
      if (merged[k] === undefined) merged[k] = v
      else if (k === "targetResource") merged[k] = { ...(v as Data), ...(merged[k] as Data) }
    }
  }
  return merged
}

/** The phase a failure event ended in: `TimedOut` stays `TimedOut`, anything else is `Failed`. */
const failedPhase = (d: Data) => (str(d, "overall_phase") === "TimedOut" ? "TimedOut" : "Failed")

export const reconstruct = (
  correlationId: string,
  events: ReadonlyArray<AuditEvent>,
  apiGroup: string,
  now: Date
): Either.Either<Reconstruction, ReconstructionIncomplete> => {
  const sources = signalSources.flatMap((type) => events.filter((e) => e.event_type === type && describesSignal(e)))
  if (sources.length === 0) {
    return Either.left(
      new ReconstructionIncomplete({
        completeness: 0,
        detail: "gateway.signal.received (or apifrontend.rr.created, or orchestrator.lifecycle.created with the signal) event is required for reconstruction"
      })
    )
  }
  const genesis = sources[0]!
  const g = genesis.event_data
  const fromGateway = genesis.event_type === "gateway.signal.received"
  let name = str(g, "rr_name") ?? (fromGateway ? str(g, "remediation_request")?.split("/").pop() : undefined)
  let namespace = str(g, "rr_namespace") ??
    (genesis.event_type === "orchestrator.lifecycle.created" ? str(g, "namespace") : genesis.namespace ?? str(g, "namespace"))
  const spec = mergeSpecs(sources.map(specOf))
  const status: Data = {}
  for (const e of events) {
    const d = e.event_data
    switch (e.event_type) {
      case "orchestrator.lifecycle.created":
        name = str(d, "rr_name") ?? name
        namespace = str(d, "namespace") ?? namespace
        Object.assign(
          status,
          defined({ timeoutConfig: obj(d, "timeout_config"), startTime: e.event_timestamp, overallPhase: status["overallPhase"] ?? "Pending" })
        )
        break
      case "orchestrator.lifecycle.transitioned":
        Object.assign(status, defined({ overallPhase: str(d, "to_phase") }))
        break
      case "aianalysis.analysis.completed":
        Object.assign(
          status,
          defined({ aiAnalysisRef: str(d, "analysis_name") ? defined({ name: str(d, "analysis_name"), namespace: str(d, "namespace") }) : undefined })
        )
        if (str(d, "workflow_id") && status["selectedWorkflowRef"] === undefined) status["selectedWorkflowRef"] = { workflowId: str(d, "workflow_id") }
        break
      case "workflowexecution.selection.completed":
        status["selectedWorkflowRef"] = defined({
          workflowId: str(d, "workflow_id"),
          version: str(d, "workflow_version"),
          workflowName: str(d, "workflow_name"),
          executionBundle: str(d, "container_image")
        })
        break
      case "workflowexecution.execution.started":
        Object.assign(
          status,
          defined({
            workflowExecutionRef: str(d, "execution_name") ? defined({ name: str(d, "execution_name"), namespace: e.namespace ?? namespace }) : undefined,
            executingStartTime: str(d, "started_at") ?? e.event_timestamp,
            overallPhase: "Running"
          })
        )
        break
      case "orchestrator.lifecycle.completed":
        Object.assign(
          status,
          defined({
            overallPhase: "Completed",
            outcome: str(d, "crd_outcome") ?? (str(d, "outcome") === "Success" ? "Remediated" : undefined),
            completedAt: e.event_timestamp
          })
        )
        break
      case "orchestrator.lifecycle.failed": {
        const phase = failedPhase(d)
        Object.assign(
          status,
          defined({
            overallPhase: phase,
            ...(phase === "TimedOut"
              ? { timeoutPhase: str(d, "timeout_phase") ?? str(d, "failure_phase"), timeoutTime: e.event_timestamp, message: str(d, "failure_reason") }
              : { failurePhase: str(d, "failure_phase"), failureReason: str(d, "failure_reason") }),
            outcome: str(d, "crd_outcome"),
            completedAt: e.event_timestamp
          })
        )
        break
      }
      case "orchestrator.lifecycle.cancelled":
        Object.assign(status, defined({ overallPhase: "Cancelled", message: str(d, "message"), completedAt: e.event_timestamp }))
        break
    }
  }
  const rr = { spec, status }
  const errors: Array<string> = []
  const warnings: Array<string> = []
  let present = 0
  for (const [path, required, message] of tracked) {
    const [part, key] = path.split(".") as ["spec" | "status", string]
    if (rr[part][key] !== undefined) present++
    else (required ? errors : warnings).push(message)
  }
  const completeness = Math.round((present / tracked.length) * 100)
  if (completeness < 50) {
    return Either.left(
      new ReconstructionIncomplete({
        completeness,
        detail: `the reconstructed RemediationRequest is only ${completeness}% complete (at least 50% is required)`
      })
    )
  }
  const document = {
    apiVersion: `${apiGroup}/v1alpha1`,
    kind: "RemediationRequest",
    metadata: defined({
      name: name ?? correlationId,
      namespace,
      labels: {
        "app.kubernetes.io/managed-by": "kubemend-storage",
        [`${apiGroup}/reconstructed`]: "true"
      },
      annotations: {
        [`${apiGroup}/reconstructed-at`]: now.toISOString(),
        [`${apiGroup}/reconstruction-source`]: "audit-trail",
        [`${apiGroup}/correlation-id`]: correlationId
      }
    }),
    spec,
    status
  }
  return Either.right({ yaml: Yaml.stringify(document), completeness, errors, warnings })
}
