/**
 * The OpenAPI documents of the dev API server, as kubectl reads them: the v3 index, one document per group-version
 * with each kind's schema (a stored CRD's own) and a PATCH that declares `fieldValidation`, and v2 in JSON. With
 * kubectl on the machine, `kubectl apply -f` and `replace -f` work without `--validate=false`.
 */
import { execFile, execFileSync } from "node:child_process"
import { promisify } from "node:util"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DevKube, DevKubeApiServer } from "../src/kube/index.ts"

let kube: DevKube

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { kind: "Widget", plural: "widgets", singular: "widget" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer", minimum: 1 } } } } } }
    }]
  }
}

const get = async (path: string, accept = "application/json") => {
  const res = await fetch(`${kube.url}${path}`, { headers: { accept } })
  return { status: res.status, body: (await res.json()) as any }
}

beforeAll(async () => {
  kube = await DevKubeApiServer.start()
  kube.seed([crd, { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } }])
})
afterAll(() => kube.close())

const kubectlOnPath = (() => {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

describe("OpenAPI documents", () => {
  it("v3: an index of group-versions, each document with the kind's schema and a PATCH taking fieldValidation", async () => {
    const index = await get("/openapi/v3")
    expect(index.status).toBe(200)
    expect(Object.keys(index.body.paths)).toEqual(expect.arrayContaining(["api/v1", "apis/apps/v1", "apis/example.com/v1", "apis/kubemend.io/v1alpha1"]))
    const url = index.body.paths["apis/example.com/v1"].serverRelativeURL as string
    expect(url).toMatch(/^\/openapi\/v3\/apis\/example.com\/v1\?hash=[0-9A-F]+$/)
    const doc = (await get(url)).body
    expect(doc.openapi).toBe("3.0.0")
    const schema = doc.components.schemas["com.example.v1.Widget"]
    expect(schema["x-kubernetes-group-version-kind"]).toEqual([{ group: "example.com", version: "v1", kind: "Widget" }])
    expect(schema.properties.spec.properties.size).toEqual({ type: "integer", minimum: 1 })
    const patch = doc.paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"].patch
    expect(patch["x-kubernetes-group-version-kind"]).toEqual({ group: "example.com", version: "v1", kind: "Widget" })
    expect(patch.parameters.map((p: any) => p.name)).toContain("fieldValidation")
    const core = (await get("/openapi/v3/api/v1")).body
    expect(core.components.schemas["io.k8s.api.core.v1.Pod"]["x-kubernetes-preserve-unknown-fields"]).toBe(true)
    expect(core.paths["/api/v1/namespaces/{namespace}/pods/{name}"]).toBeDefined()
    expect(core.paths["/api/v1/namespaces/{name}"]).toBeDefined()
  })

  it("an unknown group-version is 404; v2 is JSON, and 406 to a client that takes only protobuf", async () => {
    expect((await get("/openapi/v3/apis/nope.io/v1")).status).toBe(404)
    const v2 = await get("/openapi/v2")
    expect(v2.status).toBe(200)
    expect(v2.body.swagger).toBe("2.0")
    expect(v2.body.definitions["com.example.v1.Widget"]).toBeDefined()
    expect((await get("/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")).status).toBe(406)
  })

  it.skipIf(!kubectlOnPath)("kubectl apply -f and replace -f validate against them (no --validate=false)", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "devkube-openapi-"))
    try {
      const config = Path.join(dir, "kubeconfig")
      Fs.writeFileSync(config, kube.kubeConfig())
      const file = Path.join(dir, "objects.yaml")
      const write = (size: number) =>
        Fs.writeFileSync(
          file,
          `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: c, namespace: shop }\ndata: { a: "1" }\n---\n` +
            `apiVersion: example.com/v1\nkind: Widget\nmetadata: { name: w, namespace: shop }\nspec: { size: ${size} }\n`
        )
      // Asynchronous: the server answering kubectl runs in this process.
      const kubectl = async (...args: Array<string>) => (await promisify(execFile)("kubectl", ["--kubeconfig", config, ...args])).stdout
      write(2)
      expect(await kubectl("apply", "-f", file)).toContain("widget.example.com/w created")
      write(3)
      expect(await kubectl("apply", "-f", file)).toContain("widget.example.com/w configured")
      expect(await kubectl("replace", "-f", file)).toContain("widget.example.com/w replaced")
      expect((kube.get("example.com/v1", "Widget", "w", "shop")!.spec as any).size).toBe(3)
      write(0)
      await expect(kubectl("apply", "-f", file)).rejects.toThrow(/spec.size/)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
