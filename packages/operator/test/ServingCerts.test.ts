/**
 * Serving certificates from the reconcile: with no cert-manager, the operator's own CA (kept across reconciles) signs
 * a certificate per service for its in-cluster names, renewed after two thirds of its lifetime (TestClock); with
 * cert-manager's CRD installed, cert-manager's Issuers and Certificates instead. Either way every Deployment mounts
 * the certificate and CA bundle its config names, and the services call each other over https. The console mounts
 * the CA bundle alone (never a key) and its config names it, so it can verify the gateway's certificate.
 */
import { describe, expect, it } from "@effect/vitest"
import { servesFor } from "@kubemend/core/Tls/Certificates"
import { providerFor } from "@kubemend/core/Config"
import { caFileConfig } from "@kubemend/core/ServerConfig"
import { Duration, Effect, Option, TestClock } from "effect"
import * as YAML from "yaml"
import { caSecretName, caVolume, servingSecretName, serviceCaConfigMap } from "../src/platform/ServingCerts.ts"
import { namespace, spec, world } from "./PlatformHarness.ts"

const services = ["gateway", "agent", "storage", "signals"] as const
const pem = (secret: any, key: string) => Buffer.from(secret.data[key], "base64").toString("utf8")
const hostsOf = (svc: string) => [`kubemend-${svc}.${namespace}.svc`, `kubemend-${svc}.${namespace}.svc.cluster.local`]

const expectMountedAndNamed = (w: { deployment: (svc: string) => any; kube: { get: (...a: Array<string>) => any } }) => {
  for (const svc of services) {
    const pod = w.deployment(svc).spec.template.spec
    const volume = pod.volumes.find((v: { name: string }) => v.name === "tls")
    expect(volume.projected.sources[0].secret.name, svc).toBe(servingSecretName(svc))
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: "tls", mountPath: "/etc/kubemend/tls", readOnly: true })
    const config = YAML.parse(w.kube.get("v1", "ConfigMap", `kubemend-${svc}`, namespace).data["config.yaml"])
    expect(config.tls, svc).toEqual({ certFile: "/etc/kubemend/tls/tls.crt", keyFile: "/etc/kubemend/tls/tls.key", caFile: "/etc/kubemend/tls/ca.crt" })
    if (config.storage?.url !== undefined) expect(config.storage.url).toBe(`https://kubemend-storage.${namespace}.svc:8080`)
  }
}

describe("serving certificates", () => {
  it.effect("the operator's own CA signs each service's certificate, kept across reconciles and renewed at 2/3 of its life", () =>
    Effect.scoped(Effect.gen(function* () {
      yield* TestClock.setTime(Date.now())
      const w = yield* world()
      yield* w.settle()
      const ca = w.kube.get("v1", "Secret", caSecretName, namespace) as any
      const caPem = pem(ca, "tls.crt")
      const issued = Object.fromEntries(services.map((svc) => [svc, w.kube.get("v1", "Secret", servingSecretName(svc), namespace) as any]))
      for (const svc of services) {
        expect(issued[svc].type).toBe("kubernetes.io/tls")
        expect(pem(issued[svc], "ca.crt")).toBe(caPem)
        expect(servesFor(pem(issued[svc], "tls.crt"), caPem, hostsOf(svc)), svc).toBe(true)
        expect(issued[svc].metadata.ownerReferences[0].kind).toBe("Kubemend")
      }
      expectMountedAndNamed(w)
      // OPA's serving certificate too, from the same CA, for the names the operator calls it by.
      const opa = w.kube.get("v1", "Secret", servingSecretName("opa"), namespace) as any
      expect(servesFor(pem(opa, "tls.crt"), caPem, ["kubemend-opa", `kubemend-opa.${namespace}.svc`])).toBe(true)

      // Sixty days in (of ninety), nothing changes; past two thirds, every certificate is re-issued by the same CA.
      yield* TestClock.adjust(Duration.days(59))
      yield* w.reconcile
      for (const svc of services) {
        expect((w.kube.get("v1", "Secret", servingSecretName(svc), namespace) as any).metadata.resourceVersion)
          .toBe(issued[svc].metadata.resourceVersion)
      }
      yield* TestClock.adjust(Duration.days(2))
      yield* w.reconcile
      expect(pem(w.kube.get("v1", "Secret", caSecretName, namespace), "tls.crt")).toBe(caPem)
      for (const svc of services) {
        const renewed = w.kube.get("v1", "Secret", servingSecretName(svc), namespace) as any
        expect(pem(renewed, "tls.crt"), svc).not.toBe(pem(issued[svc], "tls.crt"))
        expect(servesFor(pem(renewed, "tls.crt"), caPem, hostsOf(svc)), svc).toBe(true)
      }

      // A service certificate from another CA (or none) is replaced at the next reconcile.
      w.kube.delete("v1", "Secret", servingSecretName("agent"), namespace)
      yield* w.reconcile
      expect(servesFor(pem(w.kube.get("v1", "Secret", servingSecretName("agent"), namespace), "tls.crt"), caPem, hostsOf("agent"))).toBe(true)
    })))

  it.effect("the console mounts only the platform CA, names it as its tls.caFile, and that CA verifies the gateway", () =>
    Effect.scoped(Effect.gen(function* () {
      yield* TestClock.setTime(Date.now())
      const w = yield* world()
      yield* w.settle(spec((s) => {
        s.console = { enabled: true, auth: { secretName: "console-auth" } }
      }))
      const pod = (w.deployment("console") as any).spec.template.spec
      const volume = pod.volumes.find((v: { name: string }) => v.name === "tls")
      expect(volume.projected.sources).toEqual([{ secret: { name: servingSecretName("gateway"), items: [{ key: "ca.crt", path: "ca.crt" }] } }])
      expect(pod.containers[0].volumeMounts).toContainEqual({ name: "tls", mountPath: "/etc/kubemend/tls", readOnly: true })
      expect(JSON.stringify(pod.volumes)).not.toContain(caSecretName)
      expect(JSON.stringify(pod.volumes)).not.toContain("tls.key")

      const config = YAML.parse((w.kube.get("v1", "ConfigMap", "kubemend-console", namespace) as any).data["console.yaml"])
      expect(config.gatewayURL).toBe(`https://kubemend-gateway.${namespace}.svc:8443`)
      const caFile = yield* Effect.withConfigProvider(caFileConfig, providerFor("console", config))
      expect(caFile).toEqual(Option.some("/etc/kubemend/tls/ca.crt"))
      // What the kubelet projects there: the gateway Secret's `ca.crt`, which the gateway's certificate chains to.
      const gateway = w.kube.get("v1", "Secret", servingSecretName("gateway"), namespace) as any
      expect(servesFor(pem(gateway, "tls.crt"), pem(gateway, "ca.crt"), hostsOf("gateway"))).toBe(true)
      // On OpenShift the bundle comes from the service CA's ConfigMap instead.
      expect(caVolume("openshift").volume.projected.sources).toEqual([
        { configMap: { name: serviceCaConfigMap, items: [{ key: "service-ca.crt", path: "ca.crt" }] } }
      ])
    })))

  it.effect("with cert-manager installed, renders its Issuers and a Certificate per service instead", () =>
    Effect.scoped(Effect.gen(function* () {
      yield* TestClock.setTime(Date.now())
      const w = yield* world()
      w.kube.seed([{
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "certificates.cert-manager.io" },
        spec: {
          group: "cert-manager.io",
          scope: "Namespaced",
          names: { plural: "certificates", kind: "Certificate" },
          versions: [{ name: "v1", served: true, storage: true }]
        }
      }, {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "issuers.cert-manager.io" },
        spec: {
          group: "cert-manager.io",
          scope: "Namespaced",
          names: { plural: "issuers", kind: "Issuer" },
          versions: [{ name: "v1", served: true, storage: true }]
        }
      }])
      yield* w.settle()
      expect(w.kube.get("v1", "Secret", caSecretName, namespace)).toBeUndefined()
      const certificate = w.kube.get("cert-manager.io/v1", "Certificate", "kubemend-storage", namespace) as any
      expect(certificate.spec).toMatchObject({
        secretName: servingSecretName("storage"),
        dnsNames: expect.arrayContaining(hostsOf("storage")),
        issuerRef: { name: "kubemend-ca", kind: "Issuer" }
      })
      expect((w.kube.get("cert-manager.io/v1", "Certificate", caSecretName, namespace) as any).spec.isCA).toBe(true)
      expect((w.kube.get("cert-manager.io/v1", "Issuer", "kubemend-ca", namespace) as any).spec.ca.secretName).toBe(caSecretName)
      expectMountedAndNamed(w)
    })))
})
