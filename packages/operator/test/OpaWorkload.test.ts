/**
 * The policy engine the platform reconciler deploys: OPA serving its REST API over HTTPS on 8181 with its serving
 * certificate (health and metrics plain HTTP on 8282), non-root and read-only, its image overridable, and reachable
 * only from the operator when network policies are on.
 */
import { describe, expect, it } from "@effect/vitest"
import { decodePlatformSpec } from "@kubemend/core/domain/Platform/index"
import { Either } from "effect"
import { LifecycleConfig } from "../src/remediation/LifecycleConfig.ts"
import { platformCr } from "@kubemend/local/Platform"
import { renderNetworkPolicies } from "../src/platform/NetworkPolicies.ts"
import { opaImage, renderOpa } from "../src/platform/Opa.ts"
import { servingHosts, servingSecretName } from "../src/platform/ServingCerts.ts"

const cr = {
  ...platformCr("https://issuer.example", { provider: "openai", model: "m", endpoint: "http://llm.example", apiKey: "k" }, "http://alerts.example"),
  metadata: { name: "kubemend", namespace: "kubemend-system", uid: "cr-uid" }
}
const specOf = (over: Record<string, unknown> = {}) => Either.getOrThrow(decodePlatformSpec({ ...cr.spec, ...over }))

describe("the policy engine workload", () => {
  it("OPA's HTTPS server on 8181 with its serving certificate, its plain diagnostic port probed, owned by the CR, as the operator's config expects", () => {
    const objects = renderOpa(specOf(), { cr, apiGroup: "kubemend.io" })
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(["ServiceAccount/kubemend-opa", "Deployment/kubemend-opa", "Service/kubemend-opa"])
    const deployment = objects[1] as any
    const pod = deployment.spec.template.spec
    const container = pod.containers[0]
    expect(container).toMatchObject({
      image: opaImage,
      args: [
        "run",
        "--server",
        "--addr=https://0.0.0.0:8181",
        "--diagnostic-addr=http://0.0.0.0:8282",
        "--tls-cert-file=/etc/kubemend/tls/tls.crt",
        "--tls-private-key-file=/etc/kubemend/tls/tls.key",
        "--tls-cert-refresh-period=1h",
        "--log-format=json",
        "--disable-telemetry"
      ],
      readinessProbe: { httpGet: { path: "/health", port: 8282 } },
      livenessProbe: { httpGet: { path: "/health", port: 8282 } },
      securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }
    })
    // The probes carry no scheme: plain HTTP, which the diagnostic address serves.
    expect(container.readinessProbe.httpGet.scheme).toBeUndefined()
    expect(container.volumeMounts).toEqual([{ name: "tls", mountPath: "/etc/kubemend/tls", readOnly: true }])
    expect(pod.volumes[0].projected.sources[0].secret).toMatchObject({ name: servingSecretName("opa") })
    expect(servingSecretName("opa")).toBe("kubemend-opa-tls")
    expect(pod.securityContext.runAsNonRoot).toBe(true)
    expect(deployment.metadata.ownerReferences).toMatchObject([{ kind: "Kubemend", name: "kubemend", controller: true }])
    expect((objects[2] as any).spec.ports).toContainEqual({ name: "https", port: 8181, targetPort: "https", protocol: "TCP" })
    // The operator calls it over https by a name its certificate carries.
    const url = new URL(LifecycleConfig.defaults.policy.url)
    expect([url.protocol, url.port]).toEqual(["https:", "8181"])
    expect(servingHosts("opa", "kubemend-system")).toContain(url.hostname)
    const overridden = renderOpa(specOf({ image: { overrides: { opa: "registry.local/opa:1.22.3-static" } } }), { cr, apiGroup: "kubemend.io" })
    expect((overridden[1] as any).spec.template.spec.containers[0].image).toBe("registry.local/opa:1.22.3-static")
  })

  it("on OpenShift the service CA writes its serving Secret (Service annotation) and the CA bundle comes from its ConfigMap", () => {
    const objects = renderOpa(specOf(), { cr, apiGroup: "kubemend.io", certificates: "openshift" })
    expect((objects[2] as any).metadata.annotations).toEqual({ "service.beta.openshift.io/serving-cert-secret-name": "kubemend-opa-tls" })
    const sources = (objects[1] as any).spec.template.spec.volumes[0].projected.sources
    expect(sources[1].configMap.items).toEqual([{ key: "service-ca.crt", path: "ca.crt" }])
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
