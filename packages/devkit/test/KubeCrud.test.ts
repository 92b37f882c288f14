import { ApiException, AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObjectApi, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DevKube, DevKubeApiServer } from "../src/kube/index.ts"

let kube: DevKube
let kc: KubeConfig
let core: CoreV1Api
let apps: AppsV1Api
let co: CustomObjectsApi

const group = "kubemend.io"
const version = "v1alpha1"
const ns = "kubemend"
const rr = { group, version, namespace: ns, plural: "remediationrequests" }
const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch)

/** The Status body of a failed call. */
const failure = async (call: Promise<unknown>) => {
  const error = await call.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(ApiException)
  const e = error as ApiException<unknown>
  return { code: e.code, body: (typeof e.body === "string" ? JSON.parse(e.body) : e.body) as Record<string, any> }
}

beforeAll(async () => {
  kube = await DevKubeApiServer.start()
  kc = new KubeConfig()
  kc.loadFromString(kube.kubeConfig())
  core = kc.makeApiClient(CoreV1Api)
  apps = kc.makeApiClient(AppsV1Api)
  co = kc.makeApiClient(CustomObjectsApi)
  kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }])
})
afterAll(() => kube.close())

describe("discovery", () => {
  it("serves /api, /apis and resource lists a REST mapper can use", async () => {
    const versions = await fetch(`${kube.url}/api`).then((r) => r.json())
    expect(versions).toMatchObject({ kind: "APIVersions", versions: ["v1"] })
    const groups = await fetch(`${kube.url}/apis`).then((r) => r.json())
    const names = groups.groups.map((g: { name: string }) => g.name)
    expect(names).toEqual(expect.arrayContaining(["apps", "batch", "events.k8s.io", group, "rbac.authorization.k8s.io"]))
    const coreList = await core.getAPIResources()
    const pods = coreList.resources.find((r) => r.name === "pods")
    expect(pods).toMatchObject({ singularName: "pod", namespaced: true, kind: "Pod", shortNames: ["po"] })
    expect(coreList.resources.find((r) => r.name === "namespaces")?.namespaced).toBe(false)
    const crs = await fetch(`${kube.url}/apis/${group}/${version}`).then((r) => r.json())
    expect(crs.resources.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(["kubemends", "kubemends/status", "remediationrequests", "aianalyses"])
    )
    expect(crs.resources.find((r: { name: string }) => r.name === "kubemends").kind).toBe("Kubemend")
  })

  it("serves Event in two groups and KubernetesObjectApi maps kinds through discovery", async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc)
    kube.seed([
      { apiVersion: "v1", kind: "Event", metadata: { name: "e1", namespace: ns }, reason: "BackOff" },
      { apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "e2", namespace: ns }, reason: "Pulled" }
    ])
    const e1 = await objects.read({ apiVersion: "v1", kind: "Event", metadata: { name: "e1", namespace: ns } })
    const e2 = await objects.read({ apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "e2", namespace: ns } })
    expect([(e1 as any).reason, (e2 as any).reason]).toEqual(["BackOff", "Pulled"])
  })
})

describe("CRUD", () => {
  it("creates, reads, replaces, lists and deletes core objects with server-set metadata", async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "cm1", labels: { app: "a" } }, data: { k: "v" } }
    })
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date)
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0)
    const read = await core.readNamespacedConfigMap({ name: "cm1", namespace: ns })
    expect(read.data).toEqual({ k: "v" })
    const replaced = await core.replaceNamespacedConfigMap({ name: "cm1", namespace: ns, body: { ...read, data: { k: "w" } } })
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(read.metadata?.resourceVersion))
    const list = await core.listNamespacedConfigMap({ namespace: ns })
    expect(list.kind).toBe("ConfigMapList")
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(replaced.metadata?.resourceVersion))
    await core.deleteNamespacedConfigMap({ name: "cm1", namespace: ns })
    expect(kube.get("v1", "ConfigMap", "cm1", ns)).toBeUndefined()
  })

  it("answers NotFound, AlreadyExists and Conflict Status objects", async () => {
    const missing = await failure(core.readNamespacedSecret({ name: "nope", namespace: ns }))
    expect(missing.code).toBe(404)
    expect(missing.body).toMatchObject({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "NotFound",
      code: 404,
      message: "secrets \"nope\" not found",
      details: { name: "nope", kind: "secrets" }
    })
    await co.createNamespacedCustomObject({
      ...rr,
      body: { apiVersion: `${group}/${version}`, kind: "RemediationRequest", metadata: { name: "rr1" }, spec: { a: 1 } }
    })
    const dup = await failure(co.createNamespacedCustomObject({ ...rr, body: { metadata: { name: "rr1" } } }))
    expect(dup.body).toMatchObject({ code: 409, reason: "AlreadyExists" })
    const current = (await co.getNamespacedCustomObject({ ...rr, name: "rr1" })) as any
    await co.replaceNamespacedCustomObject({ ...rr, name: "rr1", body: { ...current, spec: { a: 2 } } })
    const stale = await failure(co.replaceNamespacedCustomObject({ ...rr, name: "rr1", body: { ...current, spec: { a: 3 } } }))
    expect(stale.body).toMatchObject({ code: 409, reason: "Conflict", details: { name: "rr1", group, kind: "remediationrequests" } })
    expect(stale.body.message).toContain("the object has been modified")
    const stalePatch = await failure(co.patchNamespacedCustomObject(
      { ...rr, name: "rr1", body: { metadata: { resourceVersion: current.metadata.resourceVersion }, spec: { a: 4 } } },
      merge
    ))
    expect(stalePatch.code).toBe(409)
  })

  it("sets generation on create and bumps it on spec changes only", async () => {
    const created = (await co.createNamespacedCustomObject({ ...rr, body: { metadata: { name: "gen" }, spec: { x: 1 } } })) as any
    expect(created.metadata.generation).toBe(1)
    const labelled = (await co.patchNamespacedCustomObject({ ...rr, name: "gen", body: { metadata: { labels: { a: "b" } } } }, merge)) as any
    expect(labelled.metadata.generation).toBe(1)
    const changed = (await co.patchNamespacedCustomObject({ ...rr, name: "gen", body: { spec: { x: 2 } } }, merge)) as any
    expect(changed.metadata.generation).toBe(2)
    const same = (await co.patchNamespacedCustomObject({ ...rr, name: "gen", body: { spec: { x: 2 } } }, merge)) as any
    expect(same.metadata.resourceVersion).toBe(changed.metadata.resourceVersion)
  })

  it("supports generateName, cluster-scoped kinds and Secret stringData", async () => {
    const made = await core.createNamespacedPod({ namespace: ns, body: { metadata: { generateName: "worker-" }, spec: { containers: [] } } })
    expect(made.metadata?.name).toMatch(/^worker-[a-z0-9]{5}$/)
    await core.createNamespace({ body: { metadata: { name: "scratch" } } })
    expect((await core.readNamespace({ name: "scratch" })).status?.phase).toBe("Active")
    const secret = await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: "s" }, stringData: { pw: "hunter2" } } })
    expect(secret.data).toEqual({ pw: Buffer.from("hunter2").toString("base64") })
  })
})

describe("collections and namespaces", () => {
  it("deletes a labelled collection and cascades a namespace deletion", async () => {
    kube.seed(["a", "b", "c"].map((n) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `dc-${n}`, namespace: "scratch2", labels: { batch: n === "c" ? "keep" : "drop" } }
    })))
    await core.deleteCollectionNamespacedConfigMap({ namespace: "scratch2", labelSelector: "batch=drop" })
    expect(kube.list("v1", "ConfigMap", "scratch2").map((c) => c.metadata.name)).toEqual(["dc-c"])
    kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: "scratch2" } }])
    await core.deleteNamespace({ name: "scratch2" })
    expect(kube.list("v1", "ConfigMap", "scratch2")).toEqual([])
    const missing = await failure(core.readNamespace({ name: "scratch2" }))
    expect(missing.code).toBe(404)
  })

  it("lists namespaced kinds across namespaces and refuses unknown resources", async () => {
    const all = await core.listPodForAllNamespaces()
    expect(all.items.every((p) => p.metadata?.namespace !== undefined)).toBe(true)
    const res = await fetch(`${kube.url}/apis/${group}/${version}/namespaces/${ns}/widgets`)
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ kind: "Status", code: 404, reason: "NotFound" })
  })
})

describe("status subresource", () => {
  it("writes to /status change only status; writes to the object ignore status", async () => {
    const created = (await co.createNamespacedCustomObject({
      ...rr,
      body: { metadata: { name: "st" }, spec: { a: 1 }, status: { phase: "Ignored" } }
    })) as any
    expect(created.status).toBeUndefined()
    const withStatus = (await co.patchNamespacedCustomObjectStatus(
      { ...rr, name: "st", body: { spec: { a: 99 }, status: { phase: "Running" } } },
      merge
    )) as any
    expect(withStatus.status).toEqual({ phase: "Running" })
    expect(withStatus.spec).toEqual({ a: 1 })
    expect(withStatus.metadata.generation).toBe(1)
    const main = (await co.patchNamespacedCustomObject({ ...rr, name: "st", body: { spec: { a: 2 }, status: { phase: "Hacked" } } }, merge)) as any
    expect(main.status).toEqual({ phase: "Running" })
    expect(main.spec).toEqual({ a: 2 })
    const replaced = (await co.replaceNamespacedCustomObjectStatus({ ...rr, name: "st", body: { ...main, status: { phase: "Done" } } })) as any
    expect(replaced.status).toEqual({ phase: "Done" })
  })

  it("applies to deployments too", async () => {
    await apps.createNamespacedDeployment({ namespace: ns, body: { metadata: { name: "web" }, spec: { replicas: 1, selector: {}, template: {} } } })
    const patched = await apps.patchNamespacedDeploymentStatus({ name: "web", namespace: ns, body: { status: { readyReplicas: 1 } } }, merge)
    expect(patched.status?.readyReplicas).toBe(1)
    const viaMain = await apps.patchNamespacedDeployment({ name: "web", namespace: ns, body: { status: { readyReplicas: 5 } } }, merge)
    expect(viaMain.status?.readyReplicas).toBe(1)
  })
})

describe("patch", () => {
  it("applies merge patch (null removes) and JSON patch (default content type)", async () => {
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "p" }, data: { a: "1", b: "2" } } })
    const merged = await core.patchNamespacedConfigMap({ name: "p", namespace: ns, body: { data: { a: null, c: "3" } } }, merge)
    expect(merged.data).toEqual({ b: "2", c: "3" })
    const patched = await core.patchNamespacedConfigMap({
      name: "p",
      namespace: ns,
      body: [
        { op: "test", path: "/data/b", value: "2" },
        { op: "replace", path: "/data/b", value: "20" },
        { op: "move", from: "/data/c", path: "/data/d" },
        { op: "copy", from: "/data/d", path: "/data/e" },
        { op: "add", path: "/metadata/labels", value: { x: "y" } },
        { op: "remove", path: "/data/e" }
      ]
    })
    expect(patched.data).toEqual({ b: "20", d: "3" })
    expect(patched.metadata?.labels).toEqual({ x: "y" })
    const failed = await failure(core.patchNamespacedConfigMap({ name: "p", namespace: ns, body: [{ op: "test", path: "/data/b", value: "x" }] }))
    expect(failed.code).toBe(422)
  })

  it("refuses copy and move without 'from' with 422, as the apiserver does, and changes nothing", async () => {
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "nofrom" }, data: { a: "1" } } })
    for (const op of ["copy", "move"]) {
      const refused = await failure(core.patchNamespacedConfigMap({ name: "nofrom", namespace: ns, body: [{ op, path: "/data/b" }] }))
      expect(refused.code).toBe(422)
      expect(refused.body.message).toContain(`${op} operation failed to decode from`)
    }
    expect((await core.readNamespacedConfigMap({ name: "nofrom", namespace: ns })).data).toEqual({ a: "1" })
  })

  it("server-side apply creates and then merges, and needs a fieldManager", async () => {
    const apply = setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply)
    const body = { apiVersion: `${group}/${version}`, kind: "Kubemend", metadata: { name: "platform" }, spec: { replicas: 1 } }
    const plural = { ...rr, plural: "kubemends", name: "platform" }
    const created = (await co.patchNamespacedCustomObject({ ...plural, body, fieldManager: "operator" }, apply)) as any
    expect(created.metadata.uid).toBeDefined()
    const updated = (await co.patchNamespacedCustomObject({ ...plural, body: { ...body, spec: { mode: "x" } }, fieldManager: "operator" }, apply)) as any
    expect(updated.spec).toEqual({ replicas: 1, mode: "x" })
    const missing = await failure(co.patchNamespacedCustomObject({ ...plural, body }, apply))
    expect(missing.code).toBe(400)
  })
})

describe("selectors and finalizers", () => {
  it("filters lists by label and field selectors", async () => {
    const mk = (name: string, labels: Record<string, string>) => ({ apiVersion: "v1", kind: "Service", metadata: { name, namespace: ns, labels } })
    kube.seed([mk("s1", { tier: "web", env: "prod" }), mk("s2", { tier: "db", env: "prod" }), mk("s3", { tier: "web" })])
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await core.listNamespacedService({ namespace: ns, ...(labelSelector ? { labelSelector } : {}), ...(fieldSelector ? { fieldSelector } : {}) }))
        .items.map((s) => s.metadata?.name)
    expect(await names("tier=web")).toEqual(["s1", "s3"])
    expect(await names("tier==web,env=prod")).toEqual(["s1"])
    expect(await names("env!=prod")).toEqual(["s3"])
    expect(await names("tier in (db, cache)")).toEqual(["s2"])
    expect(await names("tier notin (db)")).toEqual(["s1", "s3"])
    expect(await names("env")).toEqual(["s1", "s2"])
    expect(await names("!env")).toEqual(["s3"])
    expect(await names(undefined, "metadata.name=s2")).toEqual(["s2"])
    expect(await names(undefined, "metadata.name!=s2")).toEqual(["s1", "s3"])
    kube.seed([
      { apiVersion: "v1", kind: "Event", metadata: { name: "ev-a", namespace: ns }, reason: "OOMKilled", involvedObject: { kind: "Pod", name: "api-1" } },
      { apiVersion: "v1", kind: "Event", metadata: { name: "ev-b", namespace: ns }, reason: "Pulled", involvedObject: { kind: "Pod", name: "api-2" } }
    ])
    const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: "involvedObject.kind=Pod,involvedObject.name=api-1,reason=OOMKilled" })
    expect(events.items.map((e) => e.metadata?.name)).toEqual(["ev-a"])
    const bad = await failure(core.listNamespacedService({ namespace: ns, fieldSelector: "spec.type=ClusterIP" }))
    expect(bad.code).toBe(400)
  })

  it("pages lists with limit and continue", async () => {
    const first = await core.listNamespacedService({ namespace: ns, limit: 2 })
    expect(first.items).toHaveLength(2)
    const rest = await core.listNamespacedService({ namespace: ns, limit: 2, _continue: first.metadata!._continue! })
    expect(rest.items.map((s) => s.metadata?.name)).toEqual(["s3"])
  })

  it("marks objects with finalizers and deletes them when the last finalizer goes", async () => {
    await co.createNamespacedCustomObject({ ...rr, body: { metadata: { name: "fin", finalizers: ["kubemend.io/cleanup"] }, spec: {} } })
    const marked = (await co.deleteNamespacedCustomObject({ ...rr, name: "fin" })) as any
    expect(marked.metadata.deletionTimestamp).toBeDefined()
    expect(kube.get(`${group}/${version}`, "RemediationRequest", "fin", ns)).toBeDefined()
    const refused = await failure(
      co.patchNamespacedCustomObject({ ...rr, name: "fin", body: { metadata: { finalizers: ["kubemend.io/cleanup", "other"] } } }, merge)
    )
    expect(refused.code).toBe(422)
    await co.patchNamespacedCustomObject({ ...rr, name: "fin", body: { metadata: { finalizers: null } } }, merge)
    expect(kube.get(`${group}/${version}`, "RemediationRequest", "fin", ns)).toBeUndefined()
  })
})

describe("CRD schema", () => {
  it("defaults, prunes and validates custom resources against the stored CRD", async () => {
    kube.seedYaml(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: aianalyses.${group} }
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: aianalyses, singular: aianalysis, kind: AIAnalysis }
  versions:
    - name: ${version}
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [target]
              properties:
                target: { type: string, minLength: 3, pattern: "^[a-z-]+$" }
                mode: { type: string, enum: [auto, manual], default: auto }
                retries: { type: integer, minimum: 0, maximum: 5 }
                steps: { type: array, maxItems: 2, items: { type: object, properties: { name: { type: string, maxLength: 4 } } } }
            status: { type: object, x-kubernetes-preserve-unknown-fields: true }
`)
    const plural = { ...rr, plural: "aianalyses" }
    const ok = (await co.createNamespacedCustomObject({ ...plural, body: { metadata: { name: "ok" }, spec: { target: "api", extra: 1 } } })) as any
    expect(ok.spec).toEqual({ target: "api", mode: "auto" })
    const bad = await failure(co.createNamespacedCustomObject({
      ...plural,
      body: { metadata: { name: "bad" }, spec: { mode: "yolo", retries: 9, steps: [{ name: "toolong" }, {}, {}] } }
    }))
    expect(bad.code).toBe(422)
    expect(bad.body).toMatchObject({ reason: "Invalid", details: { name: "bad", kind: "AIAnalysis", group } })
    const fields = bad.body.details.causes.map((c: { field: string }) => c.field)
    expect(fields).toEqual(expect.arrayContaining(["spec.target", "spec.mode", "spec.retries", "spec.steps", "spec.steps[0].name"]))
    const badUpdate = await failure(co.patchNamespacedCustomObject({ ...plural, name: "ok", body: { spec: { target: "NO" } } }, merge))
    expect(badUpdate.body.details.causes.map((c: { field: string }) => c.field)).toEqual(["spec.target", "spec.target"])
  })
})
