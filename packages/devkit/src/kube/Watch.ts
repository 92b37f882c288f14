/**
 * Watch streams: newline-delimited JSON events, replaying retained history after `resourceVersion` (410 Gone when it
 * was compacted), then live changes; selectors apply, so an object that stops matching is seen as DELETED.
 */
import type { ServerResponse } from "node:http"
import type { Objects } from "./Objects.ts"
import { groupVersion, type ResourceType, storageKey } from "./Resources.ts"
import { type FieldRequirement, matchFields, matchLabels, type Requirement } from "./Selectors.ts"
import { badRequest, gone } from "./Status.ts"
import type { Change, Obj, Store } from "./Store.ts"

export interface WatchRequest {
  readonly rt: ResourceType
  readonly namespace?: string
  readonly labels: ReadonlyArray<Requirement>
  readonly fields: ReadonlyArray<FieldRequirement>
  readonly resourceVersion?: string
  readonly timeoutSeconds?: number
  readonly allowBookmarks: boolean
}

interface OpenWatch {
  readonly close: () => void
  readonly bookmark: () => void
}

/** The open watches, so tests can cut them or ask for bookmarks now. */
export class WatchHub {
  private readonly open = new Set<OpenWatch>()

  constructor(
    private readonly store: Store,
    private readonly objects: Objects,
    readonly bookmarkIntervalMs: number
  ) {}

  get count(): number {
    return this.open.size
  }

  closeAll(): number {
    const all = [...this.open]
    for (const w of all) w.close()
    return all.length
  }

  bookmarkAll(): void {
    for (const w of this.open) w.bookmark()
  }

  /** Validates the request (throwing ApiError before any byte is written), then streams until closed. */
  serve(res: ServerResponse, w: WatchRequest): void {
    const rv = w.resourceVersion
    const fromScratch = rv === undefined || rv === "" || rv === "0"
    const start = fromScratch ? 0 : Number(rv)
    if (!Number.isInteger(start) || start < 0) throw badRequest(`invalid resource version: ${rv}`)
    const replay = fromScratch ? [] : this.store.since(start)

    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private" })
    res.flushHeaders()
    const send = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`)
    if (replay === undefined) {
      const status = gone(`too old resource version: ${start} (${this.store.oldestRetained + 1})`).toStatus()
      send("ERROR", status)
      res.end()
      return
    }

    const key = storageKey(w.rt)
    const selected = (o: Obj | undefined): o is Obj =>
      o !== undefined &&
      (w.namespace === undefined || o.metadata.namespace === w.namespace) &&
      matchLabels(w.labels, o.metadata.labels) &&
      matchFields(w.fields, o)
    const emit = (change: Change) => {
      if (change.key !== key) return
      const now = selected(change.object) && change.type !== "DELETED"
      const before = selected(change.previous)
      const type = change.type === "DELETED" ?
        (before ? "DELETED" : undefined)
        : now && before
        ? "MODIFIED"
        : now
        ? "ADDED"
        : before
        ? "DELETED"
        : undefined
      if (type !== undefined) send(type, this.objects.present(w.rt, change.object))
    }

    if (fromScratch) {
      for (const o of this.store.list(key, w.rt.namespaced ? w.namespace : undefined)) {
        if (selected(o)) send("ADDED", this.objects.present(w.rt, o))
      }
    } else for (const change of replay) emit(change)
    const unsubscribe = this.store.subscribe(emit)

    const bookmark = () => {
      if (w.allowBookmarks) {
        send("BOOKMARK", {
          kind: w.rt.kind,
          apiVersion: groupVersion(w.rt),
          metadata: { resourceVersion: String(this.store.resourceVersion) }
        })
      }
    }
    const timers: Array<NodeJS.Timeout> = []
    if (w.allowBookmarks) timers.push(setInterval(bookmark, this.bookmarkIntervalMs))
    const handle: OpenWatch = {
      close: () => {
        cleanup()
        res.end()
      },
      bookmark
    }
    const cleanup = () => {
      unsubscribe()
      for (const t of timers) clearInterval(t)
      this.open.delete(handle)
    }
    if (w.timeoutSeconds !== undefined && w.timeoutSeconds > 0) {
      timers.push(setTimeout(handle.close, w.timeoutSeconds * 1000))
    }
    this.open.add(handle)
    res.on("close", cleanup)
  }
}
