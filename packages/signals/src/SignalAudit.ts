/**
 * The audit events of ingestion, with the request's name as correlation id: `gateway.signal.received` carries all
 * storage's reconstruction needs as the request's genesis (signal, fingerprint, target, labels, annotations, the
 * original payload); `gateway.rr.deduplicated` each folded duplicate; `gateway.signal.resolved` each resolved alert
 * (the effectiveness assessment reads it).
 */
import type { AuditEventInput } from "@kubemend/core/StorageApi"
import type { KubeObject } from "@kubemend/core/K8s"
import { countOf, type Entry } from "./Tracked.ts"
import { type Signal, signalSource, signalType, type Target } from "./Signal.ts"

const envelope = (type: string, correlation: string, at: string, namespace: string | undefined, data: Record<string, unknown>): AuditEventInput => ({
  version: "1.0",
  event_type: type,
  event_timestamp: at,
  event_category: "gateway",
  event_action: type.split(".").pop()!,
  event_outcome: "success",
  correlation_id: correlation,
  actor_type: "service",
  actor_id: "signals",
  resource_type: "RemediationRequest",
  resource_id: correlation,
  ...(namespace === undefined ? {} : { namespace }),
  event_data: { event_type: type, ...data }
})

const signalData = (s: Signal, fp: string, t: Target) => ({
  signal_name: s.name,
  fingerprint: fp,
  signal_type: signalType(s.source),
  signal_source: signalSource(s.source),
  severity: s.severity,
  resource_kind: t.kind,
  resource_name: t.name,
  target_api_version: t.apiVersion,
  ...(t.namespace === undefined ? {} : { target_namespace: t.namespace })
})

export const signalAudit = {
  received: (s: Signal, fp: string, t: Target, rr: KubeObject, rrNamespace: string, at: string) => {
    const spec = rr.spec as Record<string, unknown>
    return envelope("gateway.signal.received", rr.metadata.name, at, t.namespace, {
      ...signalData(s, fp, t),
      rr_name: rr.metadata.name,
      rr_namespace: rrNamespace,
      remediation_request: `${rrNamespace}/${rr.metadata.name}`,
      firing_time: spec["firingTime"],
      signal_labels: s.labels,
      signal_annotations: s.annotations,
      provider_data: spec["providerData"],
      original_payload: spec["originalPayload"]
    })
  },
  deduplicated: (s: Signal, fp: string, e: Entry, rrNamespace: string, at: string) =>
    envelope("gateway.rr.deduplicated", e.rrName, at, undefined, {
      signal_name: s.name,
      fingerprint: fp,
      rr_name: e.rrName,
      remediation_request: `${rrNamespace}/${e.rrName}`,
      occurrence_count: countOf(e),
      first_seen_at: e.firstSeen,
      last_seen_at: e.lastSeen
    }),
  resolved: (s: Signal, fp: string, t: Target, rrName: string | undefined, rrNamespace: string, at: string) =>
    envelope("gateway.signal.resolved", rrName ?? fp, at, t.namespace, {
      ...signalData(s, fp, t),
      ...(rrName === undefined ? {} : { rr_name: rrName, remediation_request: `${rrNamespace}/${rrName}` }),
      ends_at: s.providerData["endsAt"],
      signal_labels: s.labels
    })
}
