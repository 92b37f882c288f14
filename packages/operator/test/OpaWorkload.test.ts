/**
 * The policy engine the platform reconciler deploys: OPA serving its REST API on 8181 (health and metrics on 8282),
 * non-root and read-only, its image overridable, and reachable only from the operator when network policies are on.
 */
import { describe, expect, it } from "@effect/vitest"
import { decodePlatformSpec } from "@kubemend/core/domain/Platform/index"
import { Either } from "effect"
import { platformCr } from "../src/local/Platform.ts"
import { renderNetworkPolicies } from "../src/Platform/NetworkPolicies.ts"
import { opaImage, renderOpa } from "../src/Platform/Opa.ts"

const cr = {
  ...platformCr("https://issuer.example", { provider: "openai", model: "m", endpoint: "http://llm.example", apiKey: "k" }, "http://alerts.example"),
  metadata: { name: "kubemend", namespace: "kubemend-system", uid: "cr-uid" }
}
const specOf = (over: Record<string, unknown> = {}) => Either.getOrThrow(decodePlatformSpec({ ...cr.spec, ...over }))

describe("the policy engine workload", () => {
  it("OPA's server on 8181 with its diagnostic port probed, owned by the CR, as the operator's config expects", () => {
    const objects = renderOpa(specOf(), { cr, apiGroup: "kubemend.io" })
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(["ServiceAccount/kubemend-opa", "Deployment/kubemend-opa", "Service/kubemend-opa"])
    const deployment = objects[1] as any
    const container = deployment.spec.template.spec.containers[0]
    expect(container).toMatchObject({
      image: opaImage,
      args: ["run", "--server", "--addr=0.0.0.0:8181", "--diagnostic-addr=0.0.0.0:8282", "--log-format=json", "--disable-telemetry"],
      readinessProbe: { httpGet: { path: "/health", port: 8282 } },
      securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }
    })
    expect(deployment.spec.template.spec.securityContext.runAsNonRoot).toBe(true)
    expect(deployment.metadata.ownerReferences).toMatchObject([{ kind: "Kubemend", name: "kubemend", controller: true }])
    expect((objects[2] as any).spec.ports).toContainEqual({ name: "http", port: 8181, targetPort: "http", protocol: "TCP" })
    const overridden = renderOpa(specOf({ image: { overrides: { opa: "registry.local/opa:1.22.3-static" } } }), { cr, apiGroup: "kubemend.io" })
    expect((overridden[1] as any).spec.template.spec.containers[0].image).toBe("registry.local/opa:1.22.3-static")
  })

  it("with network policies on, only the operator reaches OPA's API", () => {
    const policies = renderNetworkPolicies(specOf({ networkPolicies: { enabled: true, apiServerCIDR: "10.0.0.1/32" } }), {
      cr,
      apiGroup: "kubemend.io",
      discoveredApiServer: []
    })
    const opa = policies.find((p) => p.metadata.name === "kubemend-opa-ingress") as any
    expect(opa.spec).toEqual({
      podSelector: { matchLabels: { "app.kubernetes.io/name": "opa", "app.kubernetes.io/instance": "kubemend" } },
      policyTypes: ["Ingress"],
      ingress: [{
        from: [{ namespaceSelector: {}, podSelector: { matchLabels: { "app.kubernetes.io/name": "kubemend-operator" } } }],
        ports: [{ protocol: "TCP", port: 8181 }]
      }]
    })
  })
})
