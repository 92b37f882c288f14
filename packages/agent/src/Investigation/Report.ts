/**
 * The audit events the agent emits: after every investigation `aiagent.alignment_verdict` and
 * `aiagent.response.complete` (with `total_prompt_tokens` / `total_completion_tokens`), and the interactive
 * session events (takeover, cancel, completion). Correlated by the remediation id; sent through the core Audit
 * layer (non-blocking, batched to storage).
 */
import { Clock, Effect } from "effect"
import type { AuditService } from "@kubemend/core/Audit"
import { AuditEventVersion } from "@kubemend/core/domain/Audit"

export interface EventInput {
  readonly type: string
  readonly action: string
  readonly outcome: "success" | "failure"
  readonly correlationId: string
  readonly actor?: { readonly type: "user" | "service"; readonly id: string }
  readonly namespace?: string
  readonly data: Record<string, unknown>
}

/** Emits one `aiagent.*` event; audit never fails or delays the investigation. */
export const emit = (audit: AuditService, input: EventInput) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const type = `aiagent.${input.type}`
    yield* audit.emit({
      version: AuditEventVersion,
      event_type: type,
      event_timestamp: new Date(now).toISOString(),
      event_category: "aiagent",
      event_action: input.action,
      event_outcome: input.outcome,
      correlation_id: input.correlationId,
      actor_type: input.actor?.type ?? "service",
      actor_id: input.actor?.id ?? "agent",
      ...(input.namespace === undefined ? {} : { namespace: input.namespace }),
      event_data: { event_type: type, ...input.data }
    })
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("audit emit failed", cause)))
