/**
 * The signal service as the operator deploys it from the CR's `gateway` block: its config file read back by
 * SignalsConfig and the listener loader, its workload, and the RBAC that lets senders in and the service work.
 */
import { describe, expect, it } from "@effect/vitest"
import { providerFor } from "@kubemend/core/Config"
import { decodePlatformSpec } from "@kubemend/core/domain/Platform/index"
import { ServerConfig } from "@kubemend/core/Servers"
import { SignalsConfig } from "@kubemend/signals/SignalsConfig"
import { Duration, Effect, Either, Layer } from "effect"
import { renderClusterRbac } from "../src/platform/Rbac.ts"
import { renderServiceConfigs } from "../src/platform/RenderConfig.ts"
import { renderWorkloads } from "../src/platform/Workloads.ts"
import { spec as specJson } from "./PlatformHarness.ts"
import { serviceCommand } from "../src/platform/ServiceCommand.ts"

const spec = Either.getOrThrow(decodePlatformSpec(specJson((s) => {
  s.gateway = {
    config: { deduplicationCooldown: "10m", k8sRequestTimeout: "7s", trustedProxyCIDRs: ["10.0.0.0/8"], corsAllowedOrigins: ["https://console.example.com"] }
  }
})))
const ctx = { namespace: "kubemend-system", apiGroup: "kubemend.io" }

describe("the signal service in the platform", () => {
  it.effect("its config file carries the CR's gateway block, read back by its loaders", () =>
    Effect.gen(function* () {
      const file = renderServiceConfigs(spec, ctx).signals
      const read = Effect.all([SignalsConfig, ServerConfig]).pipe(
        Effect.provide(Layer.mergeAll(SignalsConfig.layerConfig, ServerConfig.layerConfig(8080))),
        Effect.withConfigProvider(providerFor("signals", file))
      )
      const [signals, server] = yield* read
      expect(Duration.toMinutes(signals.deduplicationCooldown)).toBe(10)
      expect(Duration.toSeconds(signals.k8sRequestTimeout)).toBe(7)
      expect(signals.trustedProxyCIDRs).toEqual(["10.0.0.0/8"])
      expect(signals.corsAllowedOrigins).toEqual(["https://console.example.com"])
      expect(signals.accessResourceName).toBe("kubemend-signals")
      expect(signals.events.enabled).toBe(true)
      expect(server).toMatchObject({ port: 8080, healthPort: 8081, metricsPort: 9090 })
      expect(file).toMatchObject({
        namespace: "kubemend-system",
        apiGroup: "kubemend.io",
        storage: { url: "https://kubemend-storage.kubemend-system.svc:8080" }
      })
    }))

  it("is deployed as its own workload unless gateway.enabled is false", () => {
    const cr = { apiVersion: "kubemend.io/v1alpha1", kind: "Kubemend", metadata: { name: "kubemend", namespace: "kubemend-system", uid: "u" } }
    const workloads = (s: typeof spec) => renderWorkloads(s, { cr, apiGroup: "kubemend.io", image: "img", configs: renderServiceConfigs(s, ctx) })
    const deployment = workloads(spec).find((o) => o.kind === "Deployment" && o.metadata.name === "kubemend-signals") as any
    expect(deployment.spec.template.spec.containers[0].command).toEqual(serviceCommand("signals"))
    expect(workloads(spec).some((o) => o.kind === "Service" && o.metadata.name === "kubemend-signals")).toBe(true)
    const off = { ...spec, gateway: { ...spec.gateway, enabled: false } }
    expect(workloads(off).some((o) => o.metadata.name === "kubemend-signals")).toBe(false)
  })

  it("gateway-signal-source grants create on the signal service; the service may write requests and review senders", () => {
    const rbac = renderClusterRbac(spec, {
      ...ctx,
      name: "kubemend",
      toolPrefix: "svc",
      operator: { namespace: "kubemend-operator", name: "kubemend-operator" }
    })
    const role = rbac.clusterRoles.find((r) => r.metadata.name === "kubemend-system-gateway-signal-source") as any
    expect(role.rules).toEqual([{ apiGroups: [""], resources: ["services"], verbs: ["get", "create"], resourceNames: ["kubemend-signals"] }])
    const bound = (bindings: ReadonlyArray<unknown>) =>
      bindings.filter((b: any) => b.subjects.some((s: any) => s.name === "kubemend-signals")).map((b: any) => b.roleRef.name)
    expect(bound(rbac.clusterRoleBindings)).toEqual(["kubemend-system-signal-gateway"])
    expect(bound(rbac.roleBindings)).toEqual(["kubemend-system-storage-client"])
    const own = rbac.clusterRoles.find((r) => r.metadata.name === "kubemend-system-signal-gateway") as any
    expect(own.rules.some((r: any) => r.resources.includes("tokenreviews"))).toBe(true)
  })
})
