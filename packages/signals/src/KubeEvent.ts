/**
 * A core/v1 Event as JSON (what event exporters post, and what the watch delivers). Warning events become signals
 * named by their reason; the involved object is the target (walked up its owner chain like an alert's pod).
 */
import { Schema } from "effect"
import { decodeBody } from "./Decode.ts"
import type { Signal } from "./Signal.ts"

const NonEmpty = Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" }))

export const KubeEvent = Schema.Struct({
  metadata: Schema.Struct({ name: Schema.optional(Schema.String), namespace: Schema.optional(Schema.String) }),
  involvedObject: Schema.Struct({
    kind: NonEmpty,
    name: NonEmpty,
    namespace: Schema.optional(Schema.String),
    apiVersion: Schema.optional(Schema.String),
    uid: Schema.optional(Schema.String)
  }),
  reason: NonEmpty,
  message: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  count: Schema.optional(Schema.Number),
  firstTimestamp: Schema.optional(Schema.NullOr(Schema.String)),
  lastTimestamp: Schema.optional(Schema.NullOr(Schema.String)),
  eventTime: Schema.optional(Schema.NullOr(Schema.String)),
  source: Schema.optional(Schema.Struct({ component: Schema.optional(Schema.String), host: Schema.optional(Schema.String) }))
})
export interface KubeEvent extends Schema.Schema.Type<typeof KubeEvent> {}

export const decodeKubeEvent = decodeBody(KubeEvent)

/** Reasons whose events mean more than a warning. */
const highReasons = new Set(["OOMKilling", "Evicted", "NodeNotReady"])

export const eventSignal = (event: KubeEvent, receivedAt: string): Signal => {
  const o = event.involvedObject
  const namespace = o.namespace ?? event.metadata.namespace
  return {
    source: "kubernetes-event",
    name: event.reason,
    severity: highReasons.has(event.reason) ? "high" : "warning",
    status: "firing",
    firingTime: event.firstTimestamp ?? event.eventTime ?? event.lastTimestamp ?? receivedAt,
    labels: {
      reason: event.reason,
      kind: o.kind,
      ...(namespace === undefined ? {} : { namespace }),
      ...(event.type === undefined ? {} : { type: event.type })
    },
    annotations: event.message === undefined ? {} : { message: event.message },
    target: o.kind === "Node" || (namespace !== undefined && namespace !== "")
      ? { kind: o.kind, name: o.name, ...(namespace === undefined ? {} : { namespace }), ...(o.apiVersion === undefined ? {} : { apiVersion: o.apiVersion }) }
      : { unresolvable: "no_namespace" },
    providerData: {
      ...(event.metadata.name === undefined ? {} : { eventName: event.metadata.name }),
      ...(event.count === undefined ? {} : { count: event.count }),
      ...(event.source === undefined ? {} : { source: event.source }),
      ...(o.uid === undefined ? {} : { involvedObjectUid: o.uid })
    },
    original: event
  }
}
