/**
 * Audit rows as they come out of PostgreSQL, and their two views: the hashed `ChainEvent` and the wire `AuditEvent`.
 * Queries select `auditColumns`, which renders times as ISO-8601 UTC text with milliseconds (the form that was
 * hashed) and dates as text, so no Date objects are built per row and no time zone of the process leaks in.
 */
import type { AuditEvent } from "@kubemend/core/domain/Audit"
import type { ChainEvent, ChainRow } from "../Chain.ts"

export const auditColumns = `
  event_id::text AS event_id, event_version,
  to_char(event_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS event_timestamp,
  event_date::text AS event_date, event_type,
  event_category, event_action, event_outcome, actor_type, actor_id, actor_ip, resource_type, resource_id,
  correlation_id, parent_event_id::text AS parent_event_id, parent_event_date, namespace, cluster_id, severity,
  duration_ms, error_code, error_message, retention_days, is_sensitive, event_data, chain_position, event_hash,
  previous_event_hash, hash_algorithm, legal_hold, legal_hold_reason, legal_hold_placed_by, legal_hold_placed_at`

export interface AuditRow {
  readonly event_id: string
  readonly event_version: string
  readonly event_timestamp: string
  readonly event_date: string
  readonly event_type: string
  readonly event_category: string
  readonly event_action: string
  readonly event_outcome: string
  readonly actor_type: string | null
  readonly actor_id: string | null
  readonly actor_ip: string | null
  readonly resource_type: string | null
  readonly resource_id: string | null
  readonly correlation_id: string
  readonly parent_event_id: string | null
  readonly parent_event_date: string | null
  readonly namespace: string | null
  readonly cluster_id: string | null
  readonly severity: string | null
  readonly duration_ms: number | null
  readonly error_code: string | null
  readonly error_message: string | null
  readonly retention_days: number
  readonly is_sensitive: boolean | null
  readonly event_data: Record<string, unknown>
  readonly chain_position: number
  readonly event_hash: string
  readonly previous_event_hash: string
  readonly hash_algorithm: string
  readonly legal_hold: boolean
  readonly legal_hold_reason: string | null
  readonly legal_hold_placed_by: string | null
  readonly legal_hold_placed_at: Date | null
}

export const toChainEvent = (r: AuditRow): ChainEvent => ({
  event_id: r.event_id,
  version: r.event_version,
  event_type: r.event_type,
  event_timestamp: r.event_timestamp,
  event_category: r.event_category,
  event_action: r.event_action,
  event_outcome: r.event_outcome,
  correlation_id: r.correlation_id,
  actor_type: r.actor_type,
  actor_id: r.actor_id,
  actor_ip: r.actor_ip,
  resource_type: r.resource_type,
  resource_id: r.resource_id,
  parent_event_id: r.parent_event_id,
  parent_event_date: r.parent_event_date,
  namespace: r.namespace,
  cluster_id: r.cluster_id,
  severity: r.severity,
  duration_ms: r.duration_ms,
  error_code: r.error_code,
  error_message: r.error_message,
  retention_days: r.retention_days,
  is_sensitive: r.is_sensitive,
  event_data: r.event_data
})

export const toChainRow = (r: AuditRow): ChainRow => ({
  event: toChainEvent(r),
  chainPosition: r.chain_position,
  eventHash: r.event_hash.trim(),
  previousEventHash: r.previous_event_hash,
  hashAlgorithm: r.hash_algorithm
})

const present = <K extends string, V>(key: K, value: V | null): { [P in K]?: V } => (value === null ? {} : { [key]: value }) as { [P in K]?: V }

export const toAuditEvent = (r: AuditRow): AuditEvent => ({
  event_id: r.event_id,
  version: r.event_version,
  event_type: r.event_type,
  event_timestamp: r.event_timestamp,
  event_category: r.event_category as AuditEvent["event_category"],
  event_action: r.event_action,
  event_outcome: r.event_outcome as AuditEvent["event_outcome"],
  correlation_id: r.correlation_id,
  ...present("actor_type", r.actor_type),
  ...present("actor_id", r.actor_id),
  ...present("actor_ip", r.actor_ip),
  ...present("resource_type", r.resource_type),
  ...present("resource_id", r.resource_id),
  ...present("parent_event_id", r.parent_event_id),
  ...present("parent_event_date", r.parent_event_date),
  ...present("namespace", r.namespace),
  ...present("cluster_id", r.cluster_id),
  ...present("severity", r.severity),
  ...present("duration_ms", r.duration_ms),
  ...present("error_code", r.error_code),
  ...present("error_message", r.error_message),
  retention_days: r.retention_days,
  ...present("is_sensitive", r.is_sensitive),
  event_data: r.event_data,
  event_date: r.event_date,
  event_hash: r.event_hash.trim(),
  previous_event_hash: r.previous_event_hash,
  hash_algorithm: r.hash_algorithm as NonNullable<AuditEvent["hash_algorithm"]>,
  legal_hold: r.legal_hold,
  ...present("legal_hold_reason", r.legal_hold_reason),
  ...present("legal_hold_placed_by", r.legal_hold_placed_by),
  ...present("legal_hold_placed_at", r.legal_hold_placed_at?.toISOString() ?? null)
})
