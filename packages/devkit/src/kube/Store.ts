/**
 * Object storage with one global, monotonic resourceVersion (like etcd's revision) and a bounded history of changes
 * that watches replay from. Everything handed in or out is a copy.
 */
import { clone } from "./Patch.ts"

export interface KubeMeta {
  name: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  generateName?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  finalizers?: Array<string>
  [key: string]: unknown
}

export interface Obj {
  apiVersion?: string
  kind?: string
  metadata: KubeMeta
  status?: unknown
  [key: string]: unknown
}

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED"

export interface Change {
  readonly rv: number
  readonly type: ChangeType
  /** Storage key (`group/plural`). */
  readonly key: string
  readonly object: Obj
  /** The state before this change (undefined for ADDED); lets selector-filtered watches see objects leave. */
  readonly previous?: Obj
}

const objectKey = (namespace: string | undefined, name: string) => `${namespace ?? ""}/${name}`

export class Store {
  private rv = 0
  private compactedRv = 0
  private readonly data = new Map<string, Map<string, Obj>>()
  private readonly history: Array<Change> = []
  private readonly listeners = new Set<(change: Change) => void>()

  constructor(private historyLimit: number) {}

  get resourceVersion(): number {
    return this.rv
  }

  /** Changes with rv <= this are no longer retained; watching from an older rv answers 410. */
  get oldestRetained(): number {
    return this.compactedRv
  }

  get(key: string, namespace: string | undefined, name: string): Obj | undefined {
    const found = this.data.get(key)?.get(objectKey(namespace, name))
    return found === undefined ? undefined : clone(found)
  }

  /** The stored object itself, for read-only use (schemas); never hand it out. */
  peek(key: string, namespace: string | undefined, name: string): Obj | undefined {
    return this.data.get(key)?.get(objectKey(namespace, name))
  }

  /**
   * Sorted by namespace then name, like the real server's key order. `keep` (read-only) selects before copying, so
   * a selective list costs what it returns, not a copy of the whole kind.
   */
  list(key: string, namespace?: string, keep?: (o: Obj) => boolean): Array<Obj> {
    const bucket = this.data.get(key)
    if (bucket === undefined) return []
    return [...bucket.entries()]
      .filter(([, o]) => (namespace === undefined || o.metadata.namespace === namespace) && (keep === undefined || keep(o)))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => clone(o))
  }

  /** Records a change: stamps the next resourceVersion, stores or removes the object, and tells the watchers. */
  commit(key: string, type: ChangeType, object: Obj): Obj {
    this.rv += 1
    const stored = clone(object)
    stored.metadata.resourceVersion = String(this.rv)
    let bucket = this.data.get(key)
    if (bucket === undefined) {
      bucket = new Map()
      this.data.set(key, bucket)
    }
    const k = objectKey(stored.metadata.namespace, stored.metadata.name)
    const previous = bucket.get(k)
    if (type === "DELETED") bucket.delete(k)
    else bucket.set(k, stored)
    const change: Change = { rv: this.rv, type, key, object: stored, ...(previous === undefined ? {} : { previous }) }
    this.history.push(change)
    this.trim()
    for (const listener of this.listeners) listener(change)
    return clone(stored)
  }

  /** Changes newer than `rv`, or undefined when some of them were already compacted away. */
  since(rv: number): ReadonlyArray<Change> | undefined {
    if (rv < this.compactedRv) return undefined
    return this.history.filter((c) => c.rv > rv)
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Drops all retained history (as an etcd compaction would): every older watch rv becomes 410. */
  compact(): void {
    this.history.length = 0
    this.compactedRv = this.rv
  }

  setHistoryLimit(limit: number): void {
    this.historyLimit = limit
    this.trim()
  }

  private trim(): void {
    while (this.history.length > this.historyLimit) this.compactedRv = this.history.shift()!.rv
  }
}
