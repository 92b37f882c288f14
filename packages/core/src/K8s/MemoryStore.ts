/**
 * The in-memory "API server" behind K8sMemory: objects per resource, one global resourceVersion counter, a bounded
 * change log for watches (older versions answer 410), a request log, and fault injection. Every request goes through
 * `gate` (record, delay, fail) so faults behave as they would on the wire.
 */
import { Duration, Effect, PubSub, Ref } from "effect"
import type { KubeObject } from "../K8s.ts"
import { HttpFailure } from "./Retry.ts"
import { mergePatch } from "./MergePatch.ts"

/** One request the store received; `plural` carries a subresource as `plural/status`. */
export interface K8sAction {
  readonly verb: string
  readonly plural: string
  readonly name: string
}

export interface FaultMatch {
  readonly verb?: string
  /** Matches `plural` exactly (`remediationrequests`, `remediationrequests/status`, `leases`). */
  readonly plural?: string
}

export interface FaultOptions extends FaultMatch {
  readonly status: number
  readonly message?: string
  /** Sent as Retry-After. */
  readonly retryAfter?: Duration.DurationInput
}

export interface Change {
  readonly rv: number
  readonly resource: string
  readonly namespace: string
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  readonly object: KubeObject
  /** The object before a MODIFIED, to turn selector transitions into ADDED/DELETED for filtered watches. */
  readonly previous?: KubeObject
}

export type Signal = Change | { readonly _tag: "close" }

interface Rule<A> {
  readonly match: FaultMatch
  remaining: number
  readonly value: A
}

const take = <A>(rules: Array<Rule<A>>, action: K8sAction): A | undefined => {
  const rule = rules.find((r) =>
    r.remaining > 0 && (r.match.verb === undefined || r.match.verb === action.verb) &&
    (r.match.plural === undefined || r.match.plural === action.plural)
  )
  if (rule === undefined) return undefined
  if (--rule.remaining === 0) rules.splice(rules.indexOf(rule), 1)
  return rule.value
}

const key = (namespace: string, name: string) => `${namespace}/${name}`

export class MemoryStore {
  rv = 0
  /** Highest resourceVersion dropped from the log; watching from below it answers 410. */
  compactedRv = 0
  log: Array<Change> = []
  /** Watch requests currently open. */
  openWatches = 0
  /** Changes made by the current request, published to watchers when it completes. */
  private pending: Array<Change> = []
  private readonly objects = new Map<string, Map<string, KubeObject>>()
  private readonly failures: Array<Rule<HttpFailure>> = []
  private readonly delays: Array<Rule<Duration.Duration>> = []

  constructor(
    readonly hub: PubSub.PubSub<Signal>,
    readonly actions: Ref.Ref<ReadonlyArray<K8sAction>>,
    private historySize: number
  ) {}

  /** Records the request, then applies any matching latency and failure. */
  gate(action: K8sAction): Effect.Effect<void, HttpFailure> {
    return Effect.zipRight(
      Ref.update(this.actions, (all) => [...all, action]),
      Effect.suspend(() => {
        const delay = take(this.delays, action)
        const failure = take(this.failures, action)
        const slow = delay === undefined ? Effect.void : Effect.sleep(delay)
        return failure === undefined ? slow : Effect.zipRight(slow, Effect.fail(failure))
      })
    )
  }

  failNext(count: number, fault: FaultOptions): void {
    const { status, message, retryAfter, ...match } = fault
    const failure = new HttpFailure({
      status,
      message: message ?? `injected ${status}`,
      ...(retryAfter === undefined ? {} : { retryAfter: Duration.decode(retryAfter) })
    })
    this.failures.push({ match, remaining: count, value: failure })
  }

  /** Drops every pending fault (an outage that ends). */
  clearFaults(): void {
    this.failures.length = 0
    this.delays.length = 0
  }

  delayNext(count: number, delay: Duration.DurationInput, match: FaultMatch = {}): void {
    this.delays.push({ match, remaining: count, value: Duration.decode(delay) })
  }

  setHistory(size: number): void {
    this.historySize = size
    this.trim()
  }

  compact(): void {
    this.compactedRv = this.rv
    this.log = []
  }

  private trim(): void {
    while (this.log.length > this.historySize) this.compactedRv = this.log.shift()!.rv
  }

  private bucket(resource: string): Map<string, KubeObject> {
    let b = this.objects.get(resource)
    if (b === undefined) this.objects.set(resource, b = new Map())
    return b
  }

  get(resource: string, namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(resource)?.get(key(namespace, name))
  }

  list(resource: string, namespace: string): Array<KubeObject> {
    return [...(this.objects.get(resource)?.values() ?? [])]
      .filter((o) => (o.metadata.namespace ?? "") === namespace)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
  }

  all(resource: string): Array<KubeObject> {
    return [...(this.objects.get(resource)?.values() ?? [])]
  }

  /** Stores the object under a new resourceVersion and logs the change; returns what watchers will see. */
  write(resource: string, object: KubeObject, type: "ADDED" | "MODIFIED"): Change {
    const namespace = object.metadata.namespace ?? ""
    const previous = this.get(resource, namespace, object.metadata.name)
    const rv = ++this.rv
    const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(rv) } }
    this.bucket(resource).set(key(namespace, object.metadata.name), stored)
    return this.record({ rv, resource, namespace, type, object: stored, ...(previous === undefined ? {} : { previous }) })
  }

  remove(resource: string, namespace: string, name: string): Change | undefined {
    const current = this.get(resource, namespace, name)
    if (current === undefined) return undefined
    this.bucket(resource).delete(key(namespace, name))
    const rv = ++this.rv
    const object = { ...current, metadata: { ...current.metadata, resourceVersion: String(rv) } }
    return this.record({ rv, resource, namespace, type: "DELETED", object })
  }

  private record(change: Change): Change {
    this.log.push(change)
    this.pending.push(change)
    this.trim()
    return change
  }

  /**
   * Hands the pending changes to open watches. A watch subscribes before it reads the log and drops what it already
   * replayed (by resourceVersion), so a change published late is neither lost nor seen twice.
   */
  flush(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const changes = this.pending
      this.pending = []
      return changes.length === 0 ? Effect.void : Effect.asVoid(PubSub.publishAll(this.hub, changes))
    })
  }
}

/** Merge-patches an object the way the API server does: identity fields kept, a stale resourceVersion refused. */
export const patchObject = (
  current: KubeObject,
  patch: Record<string, unknown>,
  kind: string
): KubeObject | HttpFailure => {
  const wanted = (patch.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion
  if (typeof wanted === "string" && wanted !== current.metadata.resourceVersion) {
    return new HttpFailure({
      status: 409,
      message: `Operation cannot be fulfilled on ${kind} "${current.metadata.name}": the object has been modified`
    })
  }
  const merged = mergePatch(current, patch) as KubeObject
  return {
    ...merged,
    ...(current.apiVersion === undefined ? {} : { apiVersion: current.apiVersion }),
    ...(current.kind === undefined ? {} : { kind: current.kind }),
    metadata: {
      ...merged.metadata,
      name: current.metadata.name,
      ...(current.metadata.namespace === undefined ? {} : { namespace: current.metadata.namespace }),
      ...(current.metadata.uid === undefined ? {} : { uid: current.metadata.uid }),
      ...(current.metadata.creationTimestamp === undefined ? {} : { creationTimestamp: current.metadata.creationTimestamp })
    }
  }
}
