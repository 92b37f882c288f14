/**
 * Audit events of the lifecycle controllers, shaped as the storage service's `AuditEventRequest` with the RR name as
 * correlation id, so storage can rebuild an RR from them (`orchestrator.lifecycle.created|completed|failed`,
 * `aianalysis.analysis.completed`, `workflowexecution.selection.completed`, `workflowexecution.execution.started`,
 * and for the signal stream `gateway.signal.received`). Emitting never fails a reconcile; where events go is a layer
 * choice: core's Audit layer (buffered, batched to storage, flushed on shutdown), the log, or a recording for tests.
 */
import { Audit, AuditConfig, type AuditSettings } from "@kubemend/core/Audit"
import type { AuditEventCategory, AuditEventRequest } from "@kubemend/core/domain/Audit"
import { Metrics } from "@kubemend/core/Metrics"
import { Storage, type StorageClientOptions } from "@kubemend/core/Storage"
import { Clock, Config, Context, Effect, Layer, Option, Ref } from "effect"

export interface LifecycleEvent {
  /** Full event type, e.g. `orchestrator.lifecycle.created`. */
  readonly type: string
  readonly category: AuditEventCategory
  readonly outcome?: "success" | "failure" | "pending"
  /** The RR name. */
  readonly correlationId: string
  readonly namespace?: string
  /** Defaults to the controller itself (`service` actor). */
  readonly actor?: { readonly type: string; readonly id: string }
  readonly resource?: { readonly type: string; readonly id: string }
  readonly data: Readonly<Record<string, unknown>>
}

/** The storage envelope of an event at `now`. */
export const toAuditEvent = (e: LifecycleEvent, now: Date): AuditEventRequest => ({
  version: "1.0",
  event_type: e.type,
  event_timestamp: now.toISOString(),
  event_category: e.category,
  event_action: (e.type.split(".").pop() ?? e.type).slice(0, 50),
  event_outcome: e.outcome ?? "success",
  correlation_id: e.correlationId.slice(0, 255),
  actor_type: e.actor?.type ?? "service",
  actor_id: e.actor?.id ?? "remediationorchestrator",
  ...(e.resource === undefined ? {} : { resource_type: e.resource.type, resource_id: e.resource.id }),
  ...(e.namespace === undefined ? {} : { namespace: e.namespace }),
  event_data: { event_type: e.type, ...e.data }
})

export interface LifecycleAuditShape {
  readonly emit: (event: LifecycleEvent) => Effect.Effect<void>
}

export class LifecycleAudit extends Context.Tag("@kubemend/operator/LifecycleAudit")<LifecycleAudit, LifecycleAuditShape>() {
  /** Hands each event to `sink` (e.g. the core Audit layer's non-blocking `emit`). */
  static readonly fromSink = (sink: (event: AuditEventRequest) => Effect.Effect<void>): LifecycleAuditShape => ({
    emit: (event) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => sink(toAuditEvent(event, new Date(now)))),
        Effect.catchAllCause((cause) => Effect.logWarning("audit emit failed", cause))
      )
  })

  static readonly layerSink = (sink: (event: AuditEventRequest) => Effect.Effect<void>) => Layer.succeed(LifecycleAudit, LifecycleAudit.fromSink(sink))

  /** JSON log lines only (no storage configured). */
  static readonly layerLog = LifecycleAudit.layerSink((event) => Effect.logInfo("audit").pipe(Effect.annotateLogs({ audit: event })))

  /** Into core's Audit layer, which the caller provides. */
  static readonly layerAudit = Layer.effect(LifecycleAudit, Effect.map(Audit, (audit) => LifecycleAudit.fromSink(audit.emit)))

  /** To the storage service at `options.baseUrl` with a ServiceAccount token (`audit_events_dropped_total{service="operator"}`). */
  static readonly layerStorage = (options: StorageClientOptions, audit: Partial<AuditSettings> = {}) =>
    LifecycleAudit.layerAudit.pipe(
      Layer.provide(Audit.layer),
      Layer.provide(Layer.mergeAll(Storage.layer(options), AuditConfig.layer("operator", audit), Metrics.Default))
    )

  /**
   * From the operator's config, as the gateway and the agent do: with `storage.url` (and `storage.tokenFile` or
   * `storage.token`, default the pod's ServiceAccount token; `audit.*` for the buffer) events go to storage, so it
   * can rebuild an RR from them; without it they are logged. Needs Metrics.
   */
  static readonly layerConfig = Layer.unwrapEffect(
    Effect.map(Config.option(Config.string("url").pipe(Config.nested("storage"))), (url) =>
      Option.isSome(url)
        ? LifecycleAudit.layerAudit.pipe(
          Layer.provide(Audit.layer),
          Layer.provide(Layer.merge(Storage.layerConfig, AuditConfig.layerConfig("operator")))
        )
        : LifecycleAudit.layerLog)
  )
}

/** Keeps every event, for tests. */
export class RecordedAudit extends Context.Tag("@kubemend/operator/RecordedAudit")<
  RecordedAudit,
  { readonly events: Effect.Effect<ReadonlyArray<AuditEventRequest>> }
>() {
  static readonly layer = Layer.effectContext(
    Effect.gen(function* () {
      const ref = yield* Ref.make<ReadonlyArray<AuditEventRequest>>([])
      return Context.make(LifecycleAudit, LifecycleAudit.fromSink((e) => Ref.update(ref, (xs) => [...xs, e]))).pipe(
        Context.add(RecordedAudit, { events: Ref.get(ref) })
      )
    })
  )
}
