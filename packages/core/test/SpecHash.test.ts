import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { specHash } from "../src/SpecHash.ts"

const deployment = (image: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "checkout", namespace: "shop", resourceVersion: "7", ...extra },
  spec: { replicas: 2, template: { spec: { containers: [{ name: "app", image }] } } },
  status: { readyReplicas: 0 }
})

describe("SpecHash", () => {
  it("hashes the canonical JSON of .spec as sha256:<hex>, whatever the key order, metadata or status", () => {
    const a = specHash(deployment("shop/app:1"))
    expect(a).toBe(
      `sha256:${
        createHash("sha256").update("{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"image\":\"shop/app:1\",\"name\":\"app\"}]}}}").digest("hex")
      }`
    )
    const reordered = {
      status: { readyReplicas: 2 },
      spec: { template: { spec: { containers: [{ image: "shop/app:1", name: "app" }] } }, replicas: 2 },
      metadata: { name: "x", resourceVersion: "99" }
    }
    expect(specHash(reordered)).toBe(a)
    expect(specHash(deployment("shop/app:1").spec)).toBe(a)
  })

  it("changes when the declared state changes", () => {
    expect(specHash(deployment("shop/app:2"))).not.toBe(specHash(deployment("shop/app:1")))
  })

  it("covers data for kinds without a spec, and tolerates a missing spec", () => {
    const cm = (v: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", uid: v }, data: { level: v } })
    expect(specHash(cm("debug"))).not.toBe(specHash(cm("info")))
    expect(specHash({ ...cm("info"), metadata: { name: "other" } })).toBe(specHash(cm("info")))
    expect(specHash(undefined)).toMatch(/^sha256:[0-9a-f]{64}$/)
  })
})
