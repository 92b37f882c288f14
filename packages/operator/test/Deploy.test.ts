import { describe, expect, it } from "@effect/vitest"
import { DevKube } from "@kubemend/devkit/kube/index"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { decodePlatformSpec } from "@kubemend/core/domain/Platform/index"
import { ConfigProvider, Effect, Either, Option } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as YAML from "yaml"
import { crdFileName, crdYaml, renderCrds } from "../src/Crds.ts"
import { OperatorConfig } from "../src/OperatorConfig.ts"
import { apiGroup, namespace, platform, spec } from "./PlatformHarness.ts"
import { serviceCommand } from "../src/platform/ServiceCommand.ts"

const deployDir = Path.resolve(import.meta.dirname, "../../../deploy")
const crdDir = Path.join(deployDir, "crds")
const docs = (file: string) => YAML.parseAllDocuments(Fs.readFileSync(Path.join(deployDir, file), "utf8")).map((d) => d.toJS() as any)

describe("generated CRDs", () => {
  it("the committed deploy/crds/*.yaml are what crdgen generates from the schemas", () => {
    const crds = renderCrds()
    expect(crds.map(crdFileName).sort()).toEqual(Fs.readdirSync(crdDir).filter((f) => f.endsWith(".yaml")).sort())
    for (const crd of crds) {
      expect(Fs.readFileSync(Path.join(crdDir, crdFileName(crd)), "utf8"), crdFileName(crd)).toBe(crdYaml(crd))
    }
  })

  it("the platform CRD is structural and carries the CEL rules", () => {
    const text = Fs.readFileSync(Path.join(crdDir, "kubemend.io_kubemends.yaml"), "utf8")
    const crd = YAML.parseAllDocuments(text)[0]!.toJS() as any
    const schema = crd.spec.versions[0].schema.openAPIV3Schema
    const json = JSON.stringify(schema)
    expect(json).not.toContain("$ref")
    expect(json).not.toContain("\"additionalProperties\":false")
    expect(schema.properties.spec.required).toEqual(["postgresql", "valkey", "agent", "aiAnalysis", "signalProcessing"])
    expect(schema.properties.spec.properties.ansible["x-kubernetes-validations"][0].rule).toContain("has(self.apiURL)")
    expect(schema.properties.spec.properties.postgresql.properties.sslMode.enum).toEqual(["require", "verify-ca", "verify-full"])
    expect(crd.spec.versions[0].subresources).toEqual({ status: {} })
  })

  it.live("registered in the dev API server, the platform CRD rejects a bad CR with 422 naming the field", () =>
    Effect.scoped(Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      kube.seedYaml(Fs.readFileSync(Path.join(crdDir, "kubemend.io_kubemends.yaml"), "utf8"))
      kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }])
      const k8s = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig() })
      const bad = yield* Effect.flip(k8s.createCr(
        "kubemends",
        platform(spec((s) => {
          s.postgresql.sslMode = "disable"
        }))
      ))
      expect(bad).toMatchObject({ _tag: "K8sUnavailable", status: 422 })
      expect(bad.message).toContain("spec.postgresql.sslMode")
      const missing = yield* Effect.flip(k8s.createCr(
        "kubemends",
        platform(spec((s) => {
          delete s.aiAnalysis.policy.configMapName
        }))
      ))
      expect(missing.message).toContain("spec.aiAnalysis.policy.configMapName")
      const drain = yield* Effect.flip(k8s.createCr(
        "kubemends",
        platform(spec((s) => {
          s.apiFrontend.shutdown = { drainSeconds: 301 }
        }))
      ))
      expect(drain.message).toContain("spec.apiFrontend.shutdown.drainSeconds")

      // A valid CR is admitted with the schema's defaults filled in.
      const created = yield* k8s.createCr("kubemends", platform())
      const stored = created.spec as any
      expect(stored.postgresql.port).toBe(5432)
      expect(stored.apiFrontend.shutdown.drainSeconds).toBe(15)
      expect(stored.agent.maxTurns).toBe(40)
    })))
})

describe("deploy/ manifests", () => {
  it.live("the example platform CR is admitted by the CRD and valid for the operator", () =>
    Effect.scoped(Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      kube.seedYaml(Fs.readFileSync(Path.join(crdDir, "kubemend.io_kubemends.yaml"), "utf8"))
      const [ns, example] = docs("platform/kubemend.yaml")
      kube.seed([ns])
      const k8s = yield* K8sLive.make({ namespace: example.metadata.namespace, apiGroup, kubeconfig: kube.kubeConfig() })
      const created = yield* k8s.createCr("kubemends", example)
      expect(Either.isRight(decodePlatformSpec(created.spec))).toBe(true)
    })))

  it.live("the operator manifests apply to a cluster and its config file loads", () =>
    Effect.scoped(Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      const objects = docs("operator/operator.yaml")
      kube.seed(objects)
      const deployment = kube.get("apps/v1", "Deployment", "kubemend-operator", "kubemend-operator") as any
      const container = deployment.spec.template.spec.containers[0]
      expect(container.command).toEqual(serviceCommand("operator"))
      expect(deployment.spec.template.spec.securityContext.runAsNonRoot).toBe(true)
      const role = objects.find((o) => o.kind === "ClusterRole")
      expect(role.rules.some((r: any) => r.resources.includes("clusterroles") && r.verbs.includes("escalate"))).toBe(true)
      const file = YAML.parse(objects.find((o) => o.kind === "ConfigMap").data["config.yaml"])
      const settings = yield* Effect.flatMap(OperatorConfig, Effect.succeed).pipe(
        Effect.provide(OperatorConfig.layerConfig),
        Effect.withConfigProvider(ConfigProvider.fromJson(file))
      )
      expect(settings.watchNamespace).toEqual(Option.none())
      expect(settings.workers).toBe(2)
    })))

  it("the Dockerfile is multi-stage and runs as a non-root user", () => {
    const text = Fs.readFileSync(Path.join(deployDir, "Dockerfile"), "utf8")
    expect(text.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2)
    expect(text).toMatch(/^USER 10001/m)
  })

  it("the Grafana dashboard queries the operator's metric names", () => {
    const dashboard = JSON.parse(Fs.readFileSync(Path.join(deployDir, "grafana/kubemend-operator.json"), "utf8"))
    const exprs = dashboard.panels.flatMap((p: any) => p.targets.map((t: any) => t.expr)).join("\n")
    for (
      const metric of [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "workqueue_depth",
        "workqueue_retries_total",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds_bucket"
      ]
    ) {
      expect(exprs).toContain(metric)
    }
  })
})
