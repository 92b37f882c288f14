/**
 * Serving certificates for every service's API, from whichever issuer the cluster has: cert-manager when its
 * `Certificate` CRD is installed (a self-signed bootstrap Issuer, a platform CA Certificate, a CA Issuer over it, one
 * Certificate per service); OpenShift's service CA when its operator's CRD is there (the Service annotation makes the
 * serving Secret, an annotated ConfigMap receives the CA bundle); otherwise the operator's own CA, kept in a Secret
 * made once and reused, with each service's certificate re-issued after two thirds of its 90 days. Every pod mounts
 * its certificate, key and the CA bundle at `paths.tlsDir` (`tls.crt`, `tls.key`, `ca.crt`), the files its listener
 * reloads and its clients trust.
 */
import type { K8sUnavailable, KubeObject } from "@kubemend/core/K8s"
import { issueServing, type KeyPair, makeAuthority, renewalDue, servesFor, validFor, validityOf } from "@kubemend/core/Tls/Certificates"
import { Clock, Effect, Option } from "effect"
import type { ClusterService } from "../runtime/Cluster.ts"
import { ownerLabels, ownerReference, paths, type ServiceName, workloadName } from "./Names.ts"

export type CertificateIssuer = "cert-manager" | "openshift" | "operator"

/** What gets a serving certificate: every service's API, and the policy engine (OPA) the operator calls. */
export type ServingName = ServiceName | "opa"

export const caSecretName = "kubemend-ca"
export const serviceCaConfigMap = "kubemend-service-ca"
export const servingSecretName = (svc: ServingName): string => `${workloadName(svc)}-tls`
const caIssuerName = "kubemend-ca"
const bootstrapIssuerName = "kubemend-selfsigned"
const certManager = "cert-manager.io/v1"
const openShiftServingAnnotation = "service.beta.openshift.io/serving-cert-secret-name"

/** Lifetimes of the operator's own certificates: renewed after two thirds (`renewalDue`). */
const leafDays = 90
const caDays = 10 * 365

/** The names a service is reached by inside the cluster. */
export const servingHosts = (svc: ServingName, namespace: string): ReadonlyArray<string> => {
  const name = workloadName(svc)
  return [name, `${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`]
}

const crdExists = (cluster: ClusterService, name: string) =>
  Effect.map(
    cluster.get({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", name }),
    Option.isSome
  )

/** cert-manager first (an explicit install wins), then OpenShift's service CA, else the operator's own CA. */
export const detectIssuer = (cluster: ClusterService): Effect.Effect<CertificateIssuer, K8sUnavailable> =>
  Effect.gen(function* () {
    if (yield* crdExists(cluster, "certificates.cert-manager.io")) return "cert-manager"
    if (yield* crdExists(cluster, "servicecas.operator.openshift.io")) return "openshift"
    return "operator"
  })

/** The projected volume every service mounts at `paths.tlsDir`: its serving pair and the CA bundle as `ca.crt`. */
export const tlsVolume = (svc: ServingName, issuer: CertificateIssuer) => ({
  volume: {
    name: "tls",
    projected: {
      sources: [
        {
          secret: {
            name: servingSecretName(svc),
            items: [
              { key: "tls.crt", path: "tls.crt" },
              { key: "tls.key", path: "tls.key" },
              ...(issuer === "openshift" ? [] : [{ key: "ca.crt", path: "ca.crt" }])
            ]
          }
        },
        ...(issuer === "openshift" ? [{ configMap: { name: serviceCaConfigMap, items: [{ key: "service-ca.crt", path: "ca.crt" }] } }] : [])
      ]
    }
  },
  mount: { name: "tls", mountPath: paths.tlsDir, readOnly: true }
})

/**
 * The CA bundle alone at `paths.tlsDir/ca.crt`, for the console (it serves no platform API, it calls the gateway):
 * the `ca.crt` item of the gateway's serving Secret (the CA its certificate chains to; the Secret's key is not
 * projected), or the service CA's ConfigMap on OpenShift. Never the operator CA's Secret, which holds its key.
 */
export const caVolume = (issuer: CertificateIssuer) => ({
  volume: {
    name: "tls",
    projected: {
      sources: [
        issuer === "openshift"
          ? { configMap: { name: serviceCaConfigMap, items: [{ key: "service-ca.crt", path: "ca.crt" }] } }
          : { secret: { name: servingSecretName("gateway"), items: [{ key: "ca.crt", path: "ca.crt" }] } }
      ]
    }
  },
  mount: { name: "tls", mountPath: paths.tlsDir, readOnly: true }
})

/** Metadata for a service's Service: on OpenShift, the annotation that has the service CA write its serving Secret. */
export const serviceAnnotations = (svc: ServingName, issuer: CertificateIssuer) =>
  issuer === "openshift" ? { annotations: { [openShiftServingAnnotation]: servingSecretName(svc) } } : {}

const owned = (cr: KubeObject, apiGroup: string, name: string) => {
  const namespace = cr.metadata.namespace ?? ""
  return { name, namespace, labels: ownerLabels(apiGroup, namespace, cr.metadata.name), ownerReferences: [ownerReference(cr)] }
}

/** cert-manager's objects: the bootstrap and CA Issuers, the CA Certificate, and one Certificate per service. */
export const renderCertManager = (cr: KubeObject, apiGroup: string, services: ReadonlyArray<ServingName>): ReadonlyArray<KubeObject> => {
  const namespace = cr.metadata.namespace ?? ""
  const meta = (name: string) => owned(cr, apiGroup, name)
  return [
    { apiVersion: certManager, kind: "Issuer", metadata: meta(bootstrapIssuerName), spec: { selfSigned: {} } },
    {
      apiVersion: certManager,
      kind: "Certificate",
      metadata: meta(caSecretName),
      spec: {
        isCA: true,
        commonName: `kubemend-ca.${namespace}`,
        secretName: caSecretName,
        duration: `${caDays * 24}h`,
        privateKey: { algorithm: "ECDSA", size: 256 },
        issuerRef: { name: bootstrapIssuerName, kind: "Issuer", group: "cert-manager.io" }
      }
    },
    { apiVersion: certManager, kind: "Issuer", metadata: meta(caIssuerName), spec: { ca: { secretName: caSecretName } } },
    ...services.map((svc): KubeObject => ({
      apiVersion: certManager,
      kind: "Certificate",
      metadata: meta(workloadName(svc)),
      spec: {
        secretName: servingSecretName(svc),
        commonName: `${workloadName(svc)}.${namespace}.svc`,
        dnsNames: [...servingHosts(svc, namespace)],
        duration: `${leafDays * 24}h`,
        renewBefore: `${(leafDays / 3) * 24}h`,
        privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
        usages: ["server auth", "digital signature", "key encipherment"],
        issuerRef: { name: caIssuerName, kind: "Issuer", group: "cert-manager.io" }
      }
    }))
  ]
}

/** The ConfigMap OpenShift's service CA injects its bundle into (`service-ca.crt`). */
export const renderServiceCaBundle = (cr: KubeObject, apiGroup: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { ...owned(cr, apiGroup, serviceCaConfigMap), annotations: { "service.beta.openshift.io/inject-cabundle": "true" } }
})

const decode = (secret: KubeObject, key: string): string | undefined => {
  const value = (secret as { data?: Record<string, string> }).data?.[key]
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8")
}

const tlsSecret = (cr: KubeObject, apiGroup: string, name: string, pair: KeyPair, caPem?: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: owned(cr, apiGroup, name),
  type: "kubernetes.io/tls",
  data: {
    "tls.crt": Buffer.from(pair.certPem).toString("base64"),
    "tls.key": Buffer.from(pair.keyPem).toString("base64"),
    ...(caPem === undefined ? {} : { "ca.crt": Buffer.from(caPem).toString("base64") })
  }
} as KubeObject)

/**
 * The operator's own CA: the Secret is made once and kept (a restart or reconcile reuses it, so clients keep
 * trusting it); replaced only when two thirds of its 10 years have passed, and the services' certificates with it.
 * Each service's Secret is re-issued when it is missing, due for renewal, signed by another CA, or lacks a name.
 * Returns the CA certificate (PEM) the services' clients trust.
 */
export const ensureOwnCertificates = (
  cluster: ClusterService,
  cr: KubeObject,
  apiGroup: string,
  services: ReadonlyArray<ServingName>
): Effect.Effect<string, K8sUnavailable> =>
  Effect.gen(function* () {
    const namespace = cr.metadata.namespace ?? ""
    const now = new Date(yield* Clock.currentTimeMillis)
    const secret = (name: string) => cluster.get({ apiVersion: "v1", kind: "Secret", name, namespace })
    const stored = Option.flatMap(yield* secret(caSecretName), (s) => {
      const certPem = decode(s, "tls.crt")
      const keyPem = decode(s, "tls.key")
      return certPem === undefined || keyPem === undefined || renewalDue(validityOf(certPem), now)
        ? Option.none()
        : Option.some({ certPem, keyPem })
    })
    const ca = Option.isSome(stored) ? stored.value : yield* Effect.promise(() => makeAuthority(`kubemend-ca.${namespace}`, validFor(now, caDays)))
    if (Option.isNone(stored)) {
      yield* cluster.apply(tlsSecret(cr, apiGroup, caSecretName, ca))
      yield* Effect.logInfo("platform CA created").pipe(Effect.annotateLogs("secret", caSecretName))
    }
    for (const svc of services) {
      const hosts = servingHosts(svc, namespace)
      const current = Option.flatMap(yield* secret(servingSecretName(svc)), (s) => Option.fromNullable(decode(s, "tls.crt")))
      const valid = Option.isSome(current) && servesFor(current.value, ca.certPem, hosts) &&
        !renewalDue(validityOf(current.value), now)
      if (valid) continue
      const leaf = yield* Effect.promise(() => issueServing(ca, `${workloadName(svc)}.${namespace}.svc`, hosts, validFor(now, leafDays)))
      yield* cluster.apply(tlsSecret(cr, apiGroup, servingSecretName(svc), leaf, ca.certPem))
      yield* Effect.logInfo(Option.isSome(current) ? "serving certificate renewed" : "serving certificate issued").pipe(
        Effect.annotateLogs("secret", servingSecretName(svc))
      )
    }
    return ca.certPem
  })

/**
 * Makes sure every service has its serving Secret from `issuer` and returns the CA bundle the platform's clients
 * trust; none yet while cert-manager or the service CA has not written it (the next reconcile reads it).
 */
export const ensureServingCertificates = (
  cluster: ClusterService,
  cr: KubeObject,
  apiGroup: string,
  services: ReadonlyArray<ServingName>,
  issuer: CertificateIssuer
): Effect.Effect<Option.Option<string>, K8sUnavailable> =>
  Effect.gen(function* () {
    const namespace = cr.metadata.namespace ?? ""
    if (issuer === "operator") return Option.some(yield* ensureOwnCertificates(cluster, cr, apiGroup, services))
    if (issuer === "cert-manager") {
      for (const o of renderCertManager(cr, apiGroup, services)) yield* cluster.apply(o)
      const ca = yield* cluster.get({ apiVersion: "v1", kind: "Secret", name: caSecretName, namespace })
      return Option.flatMap(ca, (s) => Option.fromNullable(decode(s, "ca.crt") ?? decode(s, "tls.crt")))
    }
    yield* cluster.apply(renderServiceCaBundle(cr, apiGroup))
    const bundle = yield* cluster.get({ apiVersion: "v1", kind: "ConfigMap", name: serviceCaConfigMap, namespace })
    return Option.flatMap(bundle, (c) => Option.fromNullable((c as { data?: Record<string, string> }).data?.["service-ca.crt"]))
  })
