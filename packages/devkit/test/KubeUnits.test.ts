import { X509Certificate } from "node:crypto"
import { describe, expect, it } from "vitest"
import { jsonPatch, mergePatch } from "../src/kube/Patch.ts"
import { parseRoute } from "../src/kube/Route.ts"
import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from "../src/kube/Selectors.ts"
import { ApiError } from "../src/kube/Status.ts"
import { generateTls } from "../src/kube/Tls.ts"
import { defaultAndPrune, validate } from "../src/kube/Validation.ts"

const code = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    return e instanceof ApiError ? e.code : -1
  }
  return 0
}

describe("merge patch (RFC 7386)", () => {
  it("follows the RFC's examples", () => {
    expect(mergePatch({ a: "b" }, { a: "c" })).toEqual({ a: "c" })
    expect(mergePatch({ a: "b" }, { b: "c" })).toEqual({ a: "b", b: "c" })
    expect(mergePatch({ a: "b" }, { a: null })).toEqual({})
    expect(mergePatch({ a: [{ b: "c" }] }, { a: [1] })).toEqual({ a: [1] })
    expect(mergePatch({ a: { b: "c" } }, { a: { b: "d", c: null } })).toEqual({ a: { b: "d" } })
    expect(mergePatch(["a"], { a: "c" })).toEqual({ a: "c" })
    expect(mergePatch({ a: "foo" }, "bar")).toEqual("bar")
    expect(mergePatch({}, { a: { bb: { ccc: null } } })).toEqual({ a: { bb: {} } })
  })
})

describe("JSON patch (RFC 6902)", () => {
  const doc = { a: { b: [1, 2, 3] }, "x/y": 1, "m~n": 2 }
  it("applies every operation and leaves the input untouched", () => {
    const out = jsonPatch(doc, [
      { op: "add", path: "/a/b/1", value: 9 },
      { op: "add", path: "/a/b/-", value: 4 },
      { op: "remove", path: "/x~1y" },
      { op: "replace", path: "/m~0n", value: 3 },
      { op: "copy", from: "/a/b", path: "/c" },
      { op: "move", from: "/c", path: "/d" },
      { op: "test", path: "/d/0", value: 1 }
    ])
    expect(out).toEqual({ a: { b: [1, 9, 2, 3, 4] }, "m~n": 3, d: [1, 9, 2, 3, 4] })
    expect(doc.a.b).toEqual([1, 2, 3])
  })
  it("fails the whole patch with 422 on a bad path or failed test, 400 on a malformed patch", () => {
    expect(code(() => jsonPatch(doc, [{ op: "replace", path: "/nope", value: 1 }]))).toBe(422)
    expect(code(() => jsonPatch(doc, [{ op: "remove", path: "/a/b/7" }]))).toBe(422)
    expect(code(() => jsonPatch(doc, [{ op: "test", path: "/a/b/0", value: 2 }]))).toBe(422)
    expect(code(() => jsonPatch(doc, [{ op: "move", from: "/a", path: "/a/b/x" }]))).toBe(422)
    expect(code(() => jsonPatch(doc, [{ op: "copy", path: "/c" }]))).toBe(422)
    expect(code(() => jsonPatch(doc, [{ op: "move", path: "/c" }]))).toBe(422)
    expect(code(() => jsonPatch(doc, { op: "add" }))).toBe(400)
    expect(code(() => jsonPatch(doc, [{ op: "frobnicate", path: "/a" }]))).toBe(400)
  })
})

describe("selectors", () => {
  const labels = { app: "web", tier: "front", version: "3" }
  const m = (s: string) => matchLabels(parseLabelSelector(s), labels)
  it("implements the label selector grammar", () => {
    expect([m("app=web"), m("app==web"), m("app!=web"), m("app!=db"), m("other!=x")]).toEqual([true, true, false, true, true])
    expect([m("app in (web,db)"), m("app notin (web)"), m("other notin (x)"), m("other in (x)")]).toEqual([true, false, true, false])
    expect([m("app"), m("!app"), m("!other"), m("app,tier=front"), m("app,tier=back")]).toEqual([true, false, true, true, false])
    expect([m("version>2"), m("version<3"), m("")]).toEqual([true, false, true])
    expect(code(() => parseLabelSelector("a b c"))).toBe(400)
  })
  it("implements field selectors with an allow-list per kind", () => {
    const ev = { metadata: { name: "e" }, involvedObject: { name: "pod-1" }, source: { component: "kubelet" } }
    const f = (s: string) => matchFields(parseFieldSelector(s, ["involvedObject.name", "source"], "Event"), ev)
    expect([f("metadata.name=e"), f("involvedObject.name==pod-1"), f("involvedObject.name!=pod-1"), f("source=kubelet")]).toEqual([true, true, false, true])
    expect(code(() => parseFieldSelector("spec.x=1", [], "Pod"))).toBe(400)
  })
})

describe("CRD schema", () => {
  const schema = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        required: ["n"],
        properties: {
          n: { type: "integer", minimum: 1, exclusiveMaximum: true, maximum: 10 },
          port: { "x-kubernetes-int-or-string": true },
          free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          map: { type: "object", additionalProperties: { type: "string" } },
          opt: { type: "string", nullable: true, default: "d" },
          any: { anyOf: [{ type: "integer" }, { type: "string", pattern: "^\\d+%$" }] },
          list: { type: "array", minItems: 1, items: { type: "string", minLength: 2 } }
        }
      }
    }
  } as const
  it("defaults and prunes like a structural schema", () => {
    const obj: any = {
      apiVersion: "x/v1",
      kind: "X",
      metadata: { name: "a", anything: 1 },
      spec: { n: 2, junk: 1, free: { k: { v: 1 } }, map: { a: "b" } },
      extra: true
    }
    defaultAndPrune(obj, schema)
    expect(obj).toEqual({
      apiVersion: "x/v1",
      kind: "X",
      metadata: { name: "a", anything: 1 },
      spec: { n: 2, free: { k: { v: 1 } }, map: { a: "b" }, opt: "d" }
    })
  })
  it("reports causes with field paths", () => {
    const causes = validate({ metadata: {}, spec: { n: 10, port: true, map: { a: 1 }, opt: null, any: "50", list: ["x"] } }, schema)
    expect(causes.map((c) => [c.field, c.reason])).toEqual([
      ["spec.n", "FieldValueInvalid"],
      ["spec.port", "FieldValueInvalid"],
      ["spec.map.a", "FieldValueInvalid"],
      ["spec.any", "FieldValueInvalid"],
      ["spec.list[0]", "FieldValueInvalid"]
    ])
    expect(validate({ spec: {} }, schema)).toEqual([{ reason: "FieldValueRequired", message: "Required value", field: "spec.n" }])
    expect(validate({ spec: { n: 1, any: "50%", port: "http", list: [] } }, schema).map((c) => c.field)).toEqual(["spec.list"])
  })
})

describe("routes", () => {
  const isPlural = (_g: string, _v: string, p: string) => p !== "status"
  it("tells namespaced paths, cluster paths and namespace subresources apart", () => {
    expect(parseRoute("/api/v1/namespaces/a/pods/p/status", isPlural)).toMatchObject({
      type: "resource",
      group: "",
      namespace: "a",
      plural: "pods",
      name: "p",
      subresource: "status"
    })
    expect(parseRoute("/api/v1/namespaces/a", isPlural)).toMatchObject({ plural: "namespaces", name: "a" })
    expect(parseRoute("/api/v1/namespaces/a/status", isPlural)).toMatchObject({ plural: "namespaces", name: "a", subresource: "status" })
    expect(parseRoute("/apis/apps/v1/deployments", isPlural)).toMatchObject({ group: "apps", plural: "deployments" })
    expect(parseRoute("/apis/apps/v1/watch/namespaces/a/deployments", isPlural)).toMatchObject({ watchPath: true, namespace: "a" })
    expect(parseRoute("/apis/apps", isPlural)).toEqual({ type: "group", group: "apps" })
    expect(parseRoute("/metrics", isPlural)).toEqual({ type: "unknown" })
  })
})

describe("TLS material", () => {
  it("makes a CA and a server certificate it signed, valid for the loopback address", async () => {
    const tls = await generateTls(["127.0.0.1", "localhost"])
    const ca = new X509Certificate(tls.caPem)
    const cert = new X509Certificate(tls.certPem)
    expect(ca.ca).toBe(true)
    expect(cert.ca).toBe(false)
    expect(cert.verify(ca.publicKey)).toBe(true)
    expect(cert.checkIP("127.0.0.1")).toBe("127.0.0.1")
    expect(cert.checkHost("localhost")).toBe("localhost")
    expect(cert.issuer).toBe(ca.subject)
  })
})
