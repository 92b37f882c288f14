import { X509Certificate } from "node:crypto"
import { it as effect } from "@effect/vitest"
import { ApiException, CoreV1Api, KubeConfig } from "@kubernetes/client-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DevKube, DevKubeApiServer } from "../src/kube/index.ts"

let kube: DevKube
let core: CoreV1Api
const ns = "default"

const failureOf = (call: Promise<unknown>) => call.then(() => undefined, (e: unknown) => e as ApiException<string>)

beforeAll(async () => {
  kube = await DevKubeApiServer.start()
  const kc = new KubeConfig()
  kc.loadFromString(kube.kubeConfig())
  core = kc.makeApiClient(CoreV1Api)
  kube.seed([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: ns }, data: { a: "1" } }])
})
afterAll(() => kube.close())

describe("fault injection", () => {
  it("fails the next N matching requests with a Status, then recovers", async () => {
    kube.faults.failNext(2, { verb: "get", resource: "configmaps", status: 503 })
    await core.listNamespacedConfigMap({ namespace: ns }) // a list does not match
    const first = await failureOf(core.readNamespacedConfigMap({ name: "cfg", namespace: ns }))
    expect(first?.code).toBe(503)
    expect(JSON.parse(first!.body)).toMatchObject({ kind: "Status", reason: "ServiceUnavailable", code: 503 })
    expect((await failureOf(core.readNamespacedConfigMap({ name: "cfg", namespace: ns })))?.code).toBe(503)
    expect((await core.readNamespacedConfigMap({ name: "cfg", namespace: ns })).data).toEqual({ a: "1" })
  })

  it("answers 429 with Retry-After", async () => {
    kube.faults.failNext(1, { verb: ["create", "update"], status: 429, retryAfterSeconds: 3 })
    const error = await failureOf(core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "x" } } }))
    expect(error?.code).toBe(429)
    expect(error?.headers["retry-after"]).toBe("3")
    expect(JSON.parse(error!.body)).toMatchObject({ reason: "TooManyRequests", details: { retryAfterSeconds: 3 } })
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "x" } } })
  })

  it("adds latency to matching requests until removed", async () => {
    const remove = kube.faults.addLatency(150, { resource: "configmaps", name: "cfg" })
    const started = Date.now()
    await core.readNamespacedConfigMap({ name: "cfg", namespace: ns })
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    remove()
    const again = Date.now()
    await core.readNamespacedConfigMap({ name: "cfg", namespace: ns })
    expect(Date.now() - again).toBeLessThan(140)
  })

  it("reset clears pending faults", async () => {
    kube.faults.failNext(5, { status: 500 })
    kube.faults.reset()
    await core.readNamespacedConfigMap({ name: "cfg", namespace: ns })
  })
})

describe("HTTPS", () => {
  it("serves TLS with a generated CA that client-node trusts through the kubeconfig", async () => {
    const secure = await DevKubeApiServer.start({ tls: true })
    try {
      expect(secure.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const ca = new X509Certificate(secure.caPem!)
      expect(ca.ca).toBe(true)
      const kc = new KubeConfig()
      kc.loadFromString(secure.kubeConfig())
      expect(kc.getCurrentCluster()?.skipTLSVerify).toBeFalsy()
      const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace()
      expect(namespaces.items.map((n) => n.metadata?.name)).toContain("default")
    } finally {
      await secure.close()
    }
  })
})

describe("Effect wrapper", () => {
  effect.live("DevKube.layer serves for the scope and closes after it", () =>
    Effect.gen(function* () {
      const url = yield* Effect.gen(function* () {
        const dev = yield* DevKube
        const res = yield* Effect.promise(() => fetch(`${dev.url}/api/v1/namespaces/default`).then((r) => r.json()))
        expect(res).toMatchObject({ kind: "Namespace", metadata: { name: "default" } })
        return dev.url
      }).pipe(Effect.provide(DevKube.layer({ apiGroup: "example.dev" })))
      const after = yield* Effect.promise(() => fetch(`${url}/version`).then(() => "open", () => "closed"))
      expect(after).toBe("closed")
    }))

  effect.live("DevKube.scoped uses the configured API group", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const dev = yield* DevKube.scoped({ apiGroup: "example.dev" })
        const doc = yield* Effect.promise(() => fetch(`${dev.url}/apis/example.dev/v1alpha1`).then((r) => r.json()))
        expect(doc.resources.map((r: { name: string }) => r.name)).toContain("remediationrequests")
      })
    ))
})
