/**
 * The gateway's audit events (`apifrontend.<type>`), shaped as the storage service's `AuditEventRequest`
 * (reference facts §9: category `apifrontend`, action from the type, actor the user or the gateway itself,
 * correlation id the RR or session when known). Emitting never blocks or fails a request; where events go is a
 * layer choice: the core Audit layer (batched to storage), the log, or a recording for tests.
 */
import { Clock, Context, Effect, FiberRef, Layer, Option, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { currentRequestId } from "@kubemend/core/ApiHeaders"
import type { AuditEventRequest } from "@kubemend/core/domain/Audit"

export interface AuditEntry {
  /** Without the `apifrontend.` prefix, e.g. `tool.executed`. */
  readonly type: string
  readonly outcome: "success" | "failure"
  readonly userId?: string
  readonly clientIp?: string
  /** RR name, MCP session id … ; a fresh id when absent. */
  readonly correlationId?: string
  readonly namespace?: string
  readonly durationMs?: number
  readonly data: Readonly<Record<string, unknown>>
}

const actions: Readonly<Record<string, string>> = {
  "auth.success": "authenticated",
  "auth.failure": "authentication_failed",
  "auth.access_denied": "denied",
  "auth.identity_ignored": "ignored",
  "ratelimit.denied": "denied",
  "tool.executed": "executed",
  "mcp.tool_failed": "failed",
  "mcp.session_init": "initialized",
  "rr.created": "created",
  "rr.deduplicated": "deduplicated",
  "user.decision": "decided",
  "jwt.delegation": "delegated",
  "circuitbreaker.trip": "tripped"
}

export const eventTypeOf = (type: string) => `apifrontend.${type}`

/** The entry with the id of the request being served (`data.request_id`, the answer's `X-Request-Id`). */
const stamped = (entry: AuditEntry) =>
  Effect.map(
    FiberRef.get(currentRequestId),
    (id): AuditEntry => Option.isNone(id) || "request_id" in entry.data ? entry : { ...entry, data: { ...entry.data, request_id: id.value } }
  )

/** The storage envelope of an entry. */
export const toAuditEvent = (entry: AuditEntry, now: Date): AuditEventRequest => ({
  version: "1.0",
  event_type: eventTypeOf(entry.type),
  event_timestamp: now.toISOString(),
  event_category: "apifrontend",
  event_action: actions[entry.type] ?? entry.type.split(".").pop()!.slice(0, 50),
  event_outcome: entry.outcome,
  correlation_id: (entry.correlationId ?? randomUUID()).slice(0, 255),
  ...(entry.userId === undefined
    ? { actor_type: "service", actor_id: "apifrontend" }
    : { actor_type: "user", actor_id: entry.userId }),
  ...(entry.clientIp === undefined ? {} : { actor_ip: entry.clientIp.slice(0, 45) }),
  ...(entry.namespace === undefined ? {} : { namespace: entry.namespace }),
  ...(entry.durationMs === undefined ? {} : { duration_ms: Math.round(entry.durationMs) }),
  event_data: { event_type: eventTypeOf(entry.type), ...entry.data }
})

export interface GatewayAuditShape {
  readonly emit: (entry: AuditEntry) => Effect.Effect<void>
}

export class GatewayAudit extends Context.Tag("@kubemend/gateway/GatewayAudit")<GatewayAudit, GatewayAuditShape>() {
  /** Hands each event to `sink` (for instance the core Audit layer's non-blocking `emit`). */
  static readonly fromSink = (sink: (event: AuditEventRequest) => Effect.Effect<void>): GatewayAuditShape => ({
    emit: (entry) =>
      Effect.zip(Clock.currentTimeMillis, stamped(entry)).pipe(
        Effect.flatMap(([now, e]) => sink(toAuditEvent(e, new Date(now)))),
        Effect.catchAllCause((cause) => Effect.logWarning("audit emit failed", cause))
      )
  })

  /** JSON log lines only (no storage configured). */
  static readonly layerLog = Layer.succeed(
    GatewayAudit,
    GatewayAudit.fromSink((event) => Effect.logInfo("audit").pipe(Effect.annotateLogs({ audit: event })))
  )
}

/** Keeps every entry, for tests. */
export class RecordedAudit extends Context.Tag("@kubemend/gateway/RecordedAudit")<
  RecordedAudit,
  { readonly entries: Effect.Effect<ReadonlyArray<AuditEntry>>; readonly clear: Effect.Effect<void> }
>() {
  static readonly layer = Layer.effectContext(
    Effect.gen(function* () {
      const ref = yield* Ref.make<ReadonlyArray<AuditEntry>>([])
      return Context.make(GatewayAudit, { emit: (entry: AuditEntry) => Effect.flatMap(stamped(entry), (e) => Ref.update(ref, (xs) => [...xs, e])) }).pipe(
        Context.add(RecordedAudit, { entries: Ref.get(ref), clear: Ref.set(ref, []) })
      )
    })
  )
}
