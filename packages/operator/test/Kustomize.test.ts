/**
 * deploy/ as a kustomize base with dev and production overlays, rendered by `kubectl kustomize` (skipped with the
 * reason when kubectl is missing, failed under CI) and applied to the dev API server; the install page (docs/install.md)
 * names overlays that render.
 */
import { describe, expect, it } from "vitest"
import { DevKube } from "@kubemend/devkit/kube/index"
import { externalTool } from "@kubemend/devkit/ExternalTool"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as YAML from "yaml"
import { apiGroup } from "./PlatformHarness.ts"

const root = Path.resolve(import.meta.dirname, "../../..")
const deployDir = Path.join(root, "deploy")
const kubectl = externalTool("kubectl", ["version", "--client"], "Debian's kubectl package or the Kubernetes release")
const title = "deploy/ kustomize base and overlays"
if (kubectl.skip) console.warn(`Kustomize.test.ts skipped: ${kubectl.missing}`)

const render = (dir: string): Array<any> =>
  YAML.parseAllDocuments(kubectl.run(["kustomize", Path.join(root, dir)])).map((d) => d.toJS()).filter((o) => o !== null)

const operatorContainer = (objects: Array<any>) =>
  objects.find((o) => o.kind === "Deployment" && o.metadata.name === "kubemend-operator").spec.template.spec.containers[0]

/** The image the operator deploys the services with: OPERATOR_IMAGE when set, else its config file's `image`. */
const servicesImage = (objects: Array<any>) => {
  const env = operatorContainer(objects).env.find((e: any) => e.name === "OPERATOR_IMAGE")
  const config = YAML.parse(objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "kubemend-operator").data["config.yaml"])
  return env?.value ?? config.image
}

describe.skipIf(kubectl.skip)(kubectl.skip ? `${title} (skipped: ${kubectl.missing})` : title, () => {
  it("the base holds every generated CRD and the operator", () => {
    const objects = render("deploy/base")
    const files = Fs.readdirSync(Path.join(deployDir, "crds")).filter((f) => f.endsWith(".yaml"))
    const crds = objects.filter((o) => o.kind === "CustomResourceDefinition").map((o) => `${o.spec.group}_${o.spec.names.plural}.yaml`)
    expect(crds.sort()).toEqual(files.sort())
    expect(operatorContainer(objects).image).toBe("ghcr.io/kubemend/kubemend:0.1.0")
  })

  it.each([
    ["deploy/overlays/dev", "ghcr.io/kubemend/kubemend:dev"],
    ["deploy/overlays/production", "ghcr.io/kubemend/kubemend:0.1.0"]
  ])("%s runs the operator and the services it deploys on one image (%s)", (dir, image) => {
    const objects = render(dir)
    expect(operatorContainer(objects).image).toBe(image)
    expect(servicesImage(objects)).toBe(image)
  })

  it("the dev overlay logs at debug and pulls on every start", () => {
    const container = operatorContainer(render("deploy/overlays/dev"))
    expect(container.imagePullPolicy).toBe("Always")
    expect(container.env).toContainEqual({ name: "OPERATOR_LOGGING_LEVEL", value: "debug" })
  })

  it("the production overlay applies to an API server: CRDs established, the operator's objects created", async () => {
    const objects = render("deploy/overlays/production")
    await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      kube.seed(objects)
      const deployment = kube.get("apps/v1", "Deployment", "kubemend-operator", "kubemend-operator") as any
      expect(deployment.spec.template.spec.containers[0].resources.limits.memory).toBe("1Gi")
      expect(kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", "kubemend-operator")).toBeDefined()
    })))
  })

  it("the install page's commands apply overlays that render", () => {
    const install = Fs.readFileSync(Path.join(root, "docs", "install.md"), "utf8")
    const dirs = [...install.matchAll(/kubectl (?:apply|kustomize) -k (\S+)/g)].map((m) => m[1]!)
    expect(dirs).toEqual(expect.arrayContaining(["deploy/overlays/production"]))
    for (const dir of dirs) expect(render(dir).length).toBeGreaterThan(0)
  })
})
