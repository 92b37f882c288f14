/**
 * The policy engine of a platform: Open Policy Agent as `kubemend-opa` (ServiceAccount, Deployment, Service on
 * 8181), serving its REST API over HTTPS with the serving certificate the operator issues it like every service's
 * (ServingCerts.ts, mounted at `paths.tlsDir`; OPA re-reads the files hourly), with no policies of its own. The
 * operator's policy sync loads it with policy.rego and approval.rego from the ConfigMaps the CR names, reloads them
 * when they change and refills an OPA that restarted; evaluations go to `/v1/data/signalprocessing` and
 * `/v1/data/approval`, verifying OPA's certificate against the platform CA. Health and Prometheus metrics stay plain
 * HTTP on the diagnostic port 8282 (document 3; OPA would make an address without a scheme HTTPS once it has a
 * certificate, so both addresses name theirs). The image is `spec.image.overrides.opa`, else the pinned release.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { ownerLabels, ownerReference, paths } from "./Names.ts"
import { type CertificateIssuer, serviceAnnotations, tlsVolume } from "./ServingCerts.ts"

export const opaName = "kubemend-opa"
export const opaPort = 8181
export const opaDiagnosticPort = 8282
/** OPA 1.22.3, the static build (no libc), which runs as a non-root user. */
export const opaImage = "openpolicyagent/opa:1.22.3-static"

export const opaPodSelector = (instance: string) => ({ "app.kubernetes.io/name": "opa", "app.kubernetes.io/instance": instance })

export interface OpaContext {
  readonly cr: KubeObject
  readonly apiGroup: string
  /** Who issues its serving certificate (default the operator's own CA). */
  readonly certificates?: CertificateIssuer
}

export const renderOpa = (spec: PlatformSpec, ctx: OpaContext): ReadonlyArray<KubeObject> => {
  const namespace = ctx.cr.metadata.namespace ?? ""
  const instance = ctx.cr.metadata.name
  const selector = opaPodSelector(instance)
  const metadata = {
    name: opaName,
    namespace,
    labels: { ...ownerLabels(ctx.apiGroup, namespace, instance), ...selector, "app.kubernetes.io/component": "policy-engine" },
    ownerReferences: [ownerReference(ctx.cr)]
  }
  const tls = tlsVolume("opa", ctx.certificates ?? "operator")
  const probe = (period: number) => ({ httpGet: { path: "/health", port: opaDiagnosticPort }, periodSeconds: period, failureThreshold: 3 })
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata, automountServiceAccountToken: false } as KubeObject,
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata,
      spec: {
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: metadata.labels },
          spec: {
            serviceAccountName: opaName,
            automountServiceAccountToken: false,
            securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } },
            ...(spec.image.pullSecrets === undefined ? {} : { imagePullSecrets: spec.image.pullSecrets.map((s) => ({ name: s.name })) }),
            containers: [{
              name: "opa",
              image: spec.image.overrides?.["opa"] ?? opaImage,
              imagePullPolicy: spec.image.pullPolicy,
              args: [
                "run",
                "--server",
                `--addr=https://0.0.0.0:${opaPort}`,
                `--diagnostic-addr=http://0.0.0.0:${opaDiagnosticPort}`,
                `--tls-cert-file=${paths.tlsDir}/tls.crt`,
                `--tls-private-key-file=${paths.tlsDir}/tls.key`,
                // Polling, not file events: the kubelet swaps a projected volume's files by symlink.
                "--tls-cert-refresh-period=1h",
                "--log-format=json",
                "--disable-telemetry"
              ],
              ports: [
                { name: "https", containerPort: opaPort, protocol: "TCP" },
                { name: "diagnostic", containerPort: opaDiagnosticPort, protocol: "TCP" }
              ],
              readinessProbe: probe(5),
              livenessProbe: { ...probe(10), initialDelaySeconds: 5 },
              resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
              volumeMounts: [tls.mount]
            }],
            volumes: [tls.volume]
          }
        }
      }
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { ...metadata, ...serviceAnnotations("opa", ctx.certificates ?? "operator") },
      spec: {
        type: "ClusterIP",
        selector,
        ports: [
          { name: "https", port: opaPort, targetPort: "https", protocol: "TCP" },
          { name: "metrics", port: opaDiagnosticPort, targetPort: "diagnostic", protocol: "TCP" }
        ]
      }
    }
  ]
}
