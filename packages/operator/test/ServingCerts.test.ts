/**
 * Serving certificates from the reconcile: with no cert-manager, the operator's own CA (kept across reconciles) signs
 * a certificate per service for its in-cluster names, renewed after two thirds of its lifetime (TestClock); with
 * cert-manager's CRD installed, cert-manager's Issuers and Certificates instead. Either way every Deployment mounts
 * the certificate and CA bundle its config names, and the services call each other over https.
 */
import { describe, expect, it } from "@effect/vitest"
import { servesFor } from "@kubemend/core/Tls/Certificates"
import { Duration, Effect, TestClock } from "effect"
import * as YAML from "yaml"
import { caSecretName, servingSecretName } from "../src/Platform/ServingCerts.ts"
import { namespace, world } from "./Harness.ts"

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
