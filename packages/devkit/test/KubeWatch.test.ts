import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, Watch } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type DevKube, DevKubeApiServer } from "../src/kube/index.ts"

const group = "kubemend.io"
const version = "v1alpha1"
const ns = "kubemend"
const path = `/apis/${group}/${version}/namespaces/${ns}/workflowexecutions`
const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch)

interface Seen {
  readonly type: string
  readonly object: any
}

const connect = (kube: DevKube) => {
  const kc = new KubeConfig()
  kc.loadFromString(kube.kubeConfig())
  const co = kc.makeApiClient(CustomObjectsApi)
  const wf = { group, version, namespace: ns, plural: "workflowexecutions" }
  /** Opens a watch with the real client; `done` resolves with the error it ended with (null when the server closed). */
  const watch = async (query: Record<string, string | number | boolean>, watchPath = path) => {
    const events: Array<Seen> = []
    let ended: (err: unknown) => void = () => {}
    const done = new Promise<unknown>((resolve) => (ended = resolve))
    const controller = await new Watch(kc).watch(watchPath, query, (type, object) => events.push({ type, object }), (err) => ended(err))
    const seen = (n: number) => vi.waitFor(() => expect(events.length).toBeGreaterThanOrEqual(n), { timeout: 2000, interval: 5 })
    return { events, done, seen, abort: () => controller.abort() }
  }
  return { co, wf, watch }
}

describe("watch", () => {
  let kube: DevKube
  let c: ReturnType<typeof connect>

  beforeAll(async () => {
    kube = await DevKubeApiServer.start()
    c = connect(kube)
  })
  afterAll(() => kube.close())

  it("streams ADDED/MODIFIED/DELETED after the list's resourceVersion", async () => {
    const list = (await c.co.listNamespacedCustomObject(c.wf)) as any
    const w = await c.watch({ resourceVersion: list.metadata.resourceVersion })
    await c.co.createNamespacedCustomObject({ ...c.wf, body: { metadata: { name: "w1" }, spec: { step: 1 } } })
    await c.co.patchNamespacedCustomObject({ ...c.wf, name: "w1", body: { spec: { step: 2 } } }, merge)
    await c.co.deleteNamespacedCustomObject({ ...c.wf, name: "w1" })
    await w.seen(3)
    expect(w.events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"])
    expect(w.events[1]!.object).toMatchObject({ kind: "WorkflowExecution", apiVersion: `${group}/${version}`, spec: { step: 2 } })
    const rvs = w.events.map((e) => Number(e.object.metadata.resourceVersion))
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b))
    w.abort()
  })

  it("replays retained history newer than resourceVersion, and sends current objects when none is given", async () => {
    const from = kube.resourceVersion()
    kube.seed([{ apiVersion: `${group}/${version}`, kind: "WorkflowExecution", metadata: { name: "w2", namespace: ns }, spec: {} }])
    kube.put({ apiVersion: `${group}/${version}`, kind: "WorkflowExecution", metadata: { name: "w2", namespace: ns }, spec: { v: 2 } })
    const replay = await c.watch({ resourceVersion: from })
    await replay.seen(2)
    expect(replay.events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED"])
    const fresh = await c.watch({})
    await fresh.seen(1)
    expect(fresh.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED w2"])
    replay.abort()
    fresh.abort()
  })

  it("applies label and field selectors: objects entering and leaving the selection are ADDED and DELETED", async () => {
    const w = await c.watch({ resourceVersion: kube.resourceVersion(), labelSelector: "team=sre" })
    const named = await c.watch({ resourceVersion: kube.resourceVersion(), fieldSelector: "metadata.name=w4" })
    await c.co.createNamespacedCustomObject({ ...c.wf, body: { metadata: { name: "w3", labels: { team: "dev" } }, spec: {} } })
    await c.co.patchNamespacedCustomObject({ ...c.wf, name: "w3", body: { metadata: { labels: { team: "sre" } } } }, merge)
    await c.co.patchNamespacedCustomObject({ ...c.wf, name: "w3", body: { metadata: { labels: { team: "ops" } } } }, merge)
    await c.co.createNamespacedCustomObject({ ...c.wf, body: { metadata: { name: "w4", labels: { team: "sre" } }, spec: {} } })
    await w.seen(3)
    await named.seen(1)
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED w3", "DELETED w3", "ADDED w4"])
    expect(named.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED w4"])
    w.abort()
    named.abort()
  })

  it("ends with the server: closed by fault injection, and after timeoutSeconds", async () => {
    const w = await c.watch({ resourceVersion: kube.resourceVersion() })
    await vi.waitFor(() => expect(kube.openWatches()).toBe(1))
    expect(kube.faults.closeWatches()).toBe(1)
    expect(await w.done).toBeNull()
    expect(kube.openWatches()).toBe(0)
    const started = Date.now()
    const timed = await c.watch({ resourceVersion: kube.resourceVersion(), timeoutSeconds: 1 })
    expect(await timed.done).toBeNull()
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
  })

  it("fails a watch request by fault injection", async () => {
    kube.faults.failNext(1, { verb: "watch", resource: "workflowexecutions", status: 503 })
    const w = await c.watch({ resourceVersion: kube.resourceVersion() })
    expect(await w.done).toMatchObject({ statusCode: 503 })
  })

  it("streams raw newline-delimited JSON for watch=1", async () => {
    const abort = new AbortController()
    const res = await fetch(`${kube.url}${path}?watch=1&resourceVersion=${kube.resourceVersion()}`, { signal: abort.signal })
    expect(res.headers.get("content-type")).toBe("application/json")
    const reader = res.body!.getReader()
    kube.put({ apiVersion: `${group}/${version}`, kind: "WorkflowExecution", metadata: { name: "raw", namespace: ns }, spec: {} })
    const { value } = await reader.read()
    const line = new TextDecoder().decode(value)
    expect(line.endsWith("\n")).toBe(true)
    expect(JSON.parse(line)).toMatchObject({ type: "ADDED", object: { metadata: { name: "raw" } } })
    abort.abort()
  })

  it("serves the legacy /watch/ path prefix", async () => {
    const w = await c.watch({ resourceVersion: kube.resourceVersion() }, `/apis/${group}/${version}/watch/namespaces/${ns}/workflowexecutions`)
    await c.co.createNamespacedCustomObject({ ...c.wf, body: { metadata: { name: "w5" }, spec: {} } })
    await w.seen(1)
    expect(w.events[0]!.type).toBe("ADDED")
    w.abort()
  })
})

describe("watch history and bookmarks", () => {
  let kube: DevKube
  let c: ReturnType<typeof connect>

  beforeAll(async () => {
    kube = await DevKubeApiServer.start({ watchHistory: 2, bookmarkIntervalMs: 50 })
    c = connect(kube)
  })
  afterAll(() => kube.close())

  it("answers an ERROR event with a 410 Status for a resourceVersion older than the retained window", async () => {
    const from = kube.resourceVersion()
    for (const name of ["a", "b", "c"]) {
      await c.co.createNamespacedCustomObject({ ...c.wf, body: { metadata: { name }, spec: {} } })
    }
    const w = await c.watch({ resourceVersion: from })
    expect(await w.done).toBeNull()
    expect(w.events).toHaveLength(1)
    expect(w.events[0]).toMatchObject({ type: "ERROR", object: { kind: "Status", status: "Failure", code: 410, reason: "Expired" } })
    const recent = await c.watch({ resourceVersion: String(Number(kube.resourceVersion()) - 1) })
    await recent.seen(1)
    expect(recent.events.map((e) => e.type)).toEqual(["ADDED"])
    recent.abort()
    const current = kube.resourceVersion()
    kube.compactHistory()
    const compacted = await c.watch({ resourceVersion: String(Number(current) - 1) })
    await compacted.done
    expect(compacted.events[0]!.object.code).toBe(410)
  })

  it("sends BOOKMARK events with the current resourceVersion when allowed", async () => {
    const w = await c.watch({ resourceVersion: kube.resourceVersion(), allowWatchBookmarks: true })
    const plain = await c.watch({ resourceVersion: kube.resourceVersion() })
    await w.seen(1)
    expect(w.events[0]).toMatchObject({
      type: "BOOKMARK",
      object: { kind: "WorkflowExecution", apiVersion: `${group}/${version}`, metadata: { resourceVersion: kube.resourceVersion() } }
    })
    kube.sendBookmarks()
    expect(plain.events).toEqual([])
    w.abort()
    plain.abort()
  })
})
