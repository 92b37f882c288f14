/**
 * Names, labels, ports and mount paths the platform reconciler renders with. One place, so the rendered config
 * files, the Deployments that mount them and the tests agree.
 */
import type { KubeObject } from "@kubemend/core/K8s"

/** The services the operator deploys from one platform CR (the console is optional and separate). */
export const services = ["gateway", "agent", "storage", "signals"] as const
export type ServiceName = (typeof services)[number]

/** Object name of a service's Deployment, Service, ServiceAccount and ConfigMap. */
export const workloadName = (svc: ServiceName | "console" | "opa"): string => `kubemend-${svc}`

/** API port per service (document 3: 8443 for the agent and external gateway, 8080 for storage). */
export const apiPorts: Readonly<Record<ServiceName, number>> = { gateway: 8443, agent: 8443, storage: 8080, signals: 8080 }

/** The services a CR deploys: signal ingestion only while `gateway.enabled` (its default). */
export const deployedServices = (spec: { readonly gateway: { readonly enabled: boolean } }): ReadonlyArray<ServiceName> =>
  services.filter((svc) => svc !== "signals" || spec.gateway.enabled)
export const healthPort = 8081
export const metricsPort = 9090
export const consolePort = 4180

/** Where things are mounted in the pods. */
export const paths = {
  configDir: "/etc/kubemend/config",
  configFile: "/etc/kubemend/config/config.yaml",
  secretsDir: "/etc/kubemend/secrets",
  llmApiKeyFile: "/etc/kubemend/secrets/llm/api-key",
  postgresDir: "/etc/kubemend/secrets/postgresql",
  runtimeDir: "/etc/kubemend/llm-runtime",
  runtimeFile: "/etc/kubemend/llm-runtime/llm-runtime.yaml",
  consoleSecretDir: "/etc/kubemend/secrets/console",
  dataDir: "/var/lib/kubemend",
  /** The serving certificate, its key and the CA bundle (`tls.crt`, `tls.key`, `ca.crt`; `ServingCerts.ts`). */
  tlsDir: "/etc/kubemend/tls",
  serviceAccountToken: "/var/run/secrets/kubernetes.io/serviceaccount/token"
} as const

/** The file name inside each service ConfigMap. */
export const configKey = "config.yaml"
export const consoleConfigKey = "console.yaml"

/** The finalizer that removes cluster-scoped objects (ownerReferences cannot point from them to a namespaced CR). */
export const finalizerName = (apiGroup: string) => `${apiGroup}/cleanup`
export const configHashAnnotation = (apiGroup: string) => `${apiGroup}/config-hash`

/** Labels that tie an object to its platform CR; cluster-scoped objects are found (and cleaned) by these. */
export const ownerLabels = (apiGroup: string, namespace: string, name: string): Record<string, string> => ({
  "app.kubernetes.io/managed-by": "kubemend-operator",
  "app.kubernetes.io/part-of": "kubemend",
  [`${apiGroup}/owner-namespace`]: namespace,
  [`${apiGroup}/owner-name`]: name
})

export const ownerSelector = (apiGroup: string, namespace: string, name: string): string =>
  `${apiGroup}/owner-namespace=${namespace},${apiGroup}/owner-name=${name}`

/** Which RBAC set a ClusterRole belongs to (the counts of document 3 are per set). */
export type RbacSet = "baseline" | "monitoring" | "tool" | "console" | "automation" | "binding"
export const rbacSetLabel = (apiGroup: string) => `${apiGroup}/rbac-set`

export const componentLabels = (svc: ServiceName | "console", instance: string): Record<string, string> => ({
  "app.kubernetes.io/name": svc,
  "app.kubernetes.io/instance": instance,
  "app.kubernetes.io/component": svc
})

/** The selector a workload's pods carry (stable: never changes across reconciles). */
export const podSelector = (svc: ServiceName | "console", instance: string): Record<string, string> => ({
  "app.kubernetes.io/name": svc,
  "app.kubernetes.io/instance": instance
})

/** The controller ownerReference to the platform CR, for namespaced children (garbage-collected with it). */
export const ownerReference = (cr: KubeObject) => ({
  apiVersion: cr.apiVersion ?? "",
  kind: cr.kind ?? "",
  name: cr.metadata.name,
  uid: cr.metadata.uid ?? "",
  controller: true,
  blockOwnerDeletion: true
})

/** In-cluster base URL of a service: HTTPS, with a certificate from the platform's issuer (`ServingCerts.ts`). */
export const serviceUrl = (svc: ServiceName, namespace: string): string => `https://${workloadName(svc)}.${namespace}.svc:${apiPorts[svc]}`
