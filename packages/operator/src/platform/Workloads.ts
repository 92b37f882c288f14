/**
 * The namespaced objects of each service: ServiceAccount, ConfigMap holding the service's config file, Deployment
 * (probes on the health port, metrics port, drain-aware grace period, config hash on the pod template so a config
 * change rolls the pods) and Service; the console's set when enabled. All owned by the platform CR.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { createHash } from "node:crypto"
import * as YAML from "yaml"
import {
  apiPorts,
  componentLabels,
  configHashAnnotation,
  configKey,
  consoleConfigKey,
  consolePort,
  healthPort,
  metricsPort,
  ownerLabels,
  ownerReference,
  paths,
  podSelector,
  type ServiceName,
  deployedServices,
  workloadName
} from "./Names.ts"
import { exportKeyDir, exportKeyFileName, exportKeySecretName } from "./ExportKey.ts"
import { gatewayValkeySecrets, type ServiceConfigs, storageValkeySecrets } from "./RenderConfig.ts"
import { serviceCommand } from "./ServiceCommand.ts"
import { caVolume, type CertificateIssuer, serviceAnnotations, tlsVolume } from "./ServingCerts.ts"
import { availabilityObjects, deploymentAvailability } from "./Availability.ts"

export interface WorkloadContext {
  readonly cr: KubeObject
  readonly apiGroup: string
  /** Release image of the services (spec.image.overrides wins per component). */
  readonly image: string
  readonly configs: ServiceConfigs
  readonly consoleConfig?: Record<string, unknown>
  /** Who issues the services' serving certificates (default the operator's own CA). */
  readonly certificates?: CertificateIssuer
}

export const toYaml = (config: Record<string, unknown>): string => YAML.stringify(config, { sortMapEntries: false })

/** Content hash of a config file: changes exactly when the file's content changes. */
export const configHash = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 32)

/** Extra seconds past the drain so the process can close listeners and flush after in-flight work ends. */
const graceMargin = 10

interface Mount {
  readonly volume: Record<string, unknown>
  readonly mount: Record<string, unknown>
}

const secretMount = (name: string, secretName: string, mountPath: string, items?: ReadonlyArray<[string, string]>): Mount => ({
  volume: {
    name,
    secret: { secretName, ...(items ? { items: items.map(([key, path]) => ({ key, path })) } : {}) }
  },
  mount: { name, mountPath, readOnly: true }
})

const serviceMounts = (svc: ServiceName, spec: PlatformSpec): ReadonlyArray<Mount> => {
  const llm = spec.agent.llm
  // The gateway's A2A loop talks to the same model as the agent: both mount its key.
  const credentials = secretMount("llm-credentials", llm.credentialsSecretName, `${paths.secretsDir}/llm`, [["api-key", "api-key"]])
  if (svc === "gateway") return [credentials, ...valkeyMounts(gatewayValkeySecrets(spec))]
  if (svc === "signals") return []
  if (svc === "agent") {
    return [
      credentials,
      ...(llm.runtimeConfigMapName === undefined ? [] : [{
        volume: { name: "llm-runtime", configMap: { name: llm.runtimeConfigMapName, items: [{ key: "llm-runtime.yaml", path: "llm-runtime.yaml" }] } },
        mount: { name: "llm-runtime", mountPath: paths.runtimeDir, readOnly: true }
      }])
    ]
  }
  return [
    secretMount("postgresql", spec.postgresql.secretName, paths.postgresDir, [["username", "username"], ["password", "password"], ["database", "database"]]),
    { volume: { name: "data", emptyDir: {} }, mount: { name: "data", mountPath: paths.dataDir } },
    secretMount("export-signing-key", exportKeySecretName, exportKeyDir, [[exportKeyFileName, exportKeyFileName]]),
    ...valkeyMounts(storageValkeySecrets(spec))
  ]
}

const valkeyMounts = (secrets: ReturnType<typeof storageValkeySecrets>) =>
  secrets.mounts.map((m) => secretMount(m.name, m.secretName, m.mountPath, m.keys.map((k) => [k, k])))

const fromSecret = (env: string, secret: string, key: string) => ({ name: env, valueFrom: { secretKeyRef: { name: secret, key } } })

/** Secret values a service reads from its environment (never written into a ConfigMap). */
const serviceEnv = (svc: ServiceName, spec: PlatformSpec): ReadonlyArray<Record<string, unknown>> => {
  // Storage reads the Valkey password (its dead-letter queue) from the environment.
  if (svc === "storage") return storageValkeySecrets(spec).env
  if (svc === "signals") return []
  const prefix = svc === "agent" ? "AGENT" : "GATEWAY"
  const oauth = spec.agent.llm.oauth2
  const oauthEnv = oauth?.enabled === true && oauth.credentialsSecretRef !== undefined
    ? [
      fromSecret(`${prefix}_LLM_OAUTH2_CLIENT_ID`, oauth.credentialsSecretRef, "client-id"),
      fromSecret(`${prefix}_LLM_OAUTH2_CLIENT_SECRET`, oauth.credentialsSecretRef, "client-secret")
    ]
    : []
  const alignment = spec.agent.alignmentCheck.llm?.credentialsSecretName
  const alignmentEnv = svc === "agent" && alignment !== undefined
    ? [fromSecret("AGENT_ALIGNMENT_CHECK_LLM_API_KEY", alignment, "api-key")]
    : []
  // The gateway's shared state: the Valkey password from the CR's Secret.
  const valkeyEnv = svc === "gateway" ? gatewayValkeySecrets(spec).env : []
  return [...oauthEnv, ...alignmentEnv, ...valkeyEnv]
}

const drainSeconds = (svc: ServiceName, spec: PlatformSpec): number =>
  svc === "gateway" ? spec.apiFrontend.shutdown.drainSeconds : svc === "agent" ? spec.agent.shutdown.drainSeconds : 15

const resourcesOf = (svc: ServiceName | "console", spec: PlatformSpec) =>
  svc === "gateway" ?
    spec.apiFrontend.resources
    : svc === "agent" ?
    spec.agent.resources
    : svc === "storage" ?
    spec.dataStorage.resources
    : svc === "signals" ?
    spec.gateway.resources
    : spec.console.resources

const containerSecurity = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] }
}

const podSecurity = { runAsNonRoot: true, runAsUser: 10001, fsGroup: 10001, seccompProfile: { type: "RuntimeDefault" } }

/** The three ready-made pieces of any workload here. */
const meta = (ctx: WorkloadContext, svc: ServiceName | "console") => ({
  name: workloadName(svc),
  namespace: ctx.cr.metadata.namespace ?? "",
  labels: { ...ownerLabels(ctx.apiGroup, ctx.cr.metadata.namespace ?? "", ctx.cr.metadata.name), ...componentLabels(svc, ctx.cr.metadata.name) },
  ownerReferences: [ownerReference(ctx.cr)]
})

interface PodShape {
  readonly svc: ServiceName | "console"
  readonly image: string
  readonly command: ReadonlyArray<string>
  readonly configKey: string
  readonly configText: string
  readonly ports: ReadonlyArray<Record<string, unknown>>
  readonly probePort: number
  readonly grace: number
  readonly mounts: ReadonlyArray<Mount>
  readonly env: ReadonlyArray<Record<string, unknown>>
}

const deployment = (ctx: WorkloadContext, spec: PlatformSpec, p: PodShape): KubeObject => {
  const selector = podSelector(p.svc, ctx.cr.metadata.name)
  const probe = (path: string, period: number) => ({ httpGet: { path, port: p.probePort }, periodSeconds: period, failureThreshold: 3 })
  const mounts = [
    { volume: { name: "config", configMap: { name: workloadName(p.svc) } }, mount: { name: "config", mountPath: paths.configDir, readOnly: true } },
    { volume: { name: "tmp", emptyDir: {} }, mount: { name: "tmp", mountPath: "/tmp" } },
    ...p.mounts
  ]
  const resources = resourcesOf(p.svc, spec)
  const availability = deploymentAvailability(spec, p.svc, ctx.cr.metadata.name)
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(ctx, p.svc),
    spec: {
      ...availability.replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels: { ...selector, ...componentLabels(p.svc, ctx.cr.metadata.name) },
          annotations: { [configHashAnnotation(ctx.apiGroup)]: configHash(p.configText) }
        },
        spec: {
          serviceAccountName: workloadName(p.svc),
          terminationGracePeriodSeconds: p.grace,
          securityContext: podSecurity,
          ...availability.pod,
          ...(spec.image.pullSecrets === undefined ? {} : { imagePullSecrets: spec.image.pullSecrets.map((s) => ({ name: s.name })) }),
          containers: [{
            name: p.svc,
            image: p.image,
            imagePullPolicy: spec.image.pullPolicy,
            ...(p.command.length === 0 ? {} : { command: p.command }),
            env: [{ name: "CONFIG_FILE", value: `${paths.configDir}/${p.configKey}` }, ...p.env],
            ports: p.ports,
            readinessProbe: probe("/readyz", 5),
            livenessProbe: { ...probe("/healthz", 10), initialDelaySeconds: 10 },
            ...(resources === undefined ? {} : { resources }),
            securityContext: containerSecurity,
            volumeMounts: mounts.map((m) => m.mount)
          }],
          volumes: mounts.map((m) => m.volume)
        }
      }
    }
  }
}

const objectsFor = (
  ctx: WorkloadContext,
  svc: ServiceName | "console",
  key: string,
  text: string,
  pod: PodShape,
  servicePorts: ReadonlyArray<Record<string, unknown>>,
  spec: PlatformSpec
): ReadonlyArray<KubeObject> => [
  { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(ctx, svc) },
  { apiVersion: "v1", kind: "ConfigMap", metadata: meta(ctx, svc), data: { [key]: text } },
  deployment(ctx, spec, pod),
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { ...meta(ctx, svc), ...(svc === "console" ? {} : serviceAnnotations(svc, ctx.certificates ?? "operator")) },
    spec: {
      type: "ClusterIP",
      selector: podSelector(svc, ctx.cr.metadata.name),
      ports: servicePorts,
      // MCP sessions, A2A tasks and rate limits live in each gateway process, investigation sessions in each agent
      // process: keep a client on one pod (the analysis controller polls the agent replica it submitted to).
      ...(svc === "gateway" || svc === "agent" ? { sessionAffinity: "ClientIP" } : {})
    }
  },
  ...availabilityObjects(spec, svc, meta(ctx, svc), ctx.cr.metadata.name)
]

/**
 * ServiceAccount, ConfigMap, Deployment, Service (and PodDisruptionBudget, HorizontalPodAutoscaler as enabled) for
 * each service and the console when enabled, in apply order.
 */
export const renderWorkloads = (spec: PlatformSpec, ctx: WorkloadContext): ReadonlyArray<KubeObject> => {
  const imageOf = (c: ServiceName | "console", fallback: string) => spec.image.overrides?.[c] ?? fallback
  const perService = deployedServices(spec).flatMap((svc) => {
    const text = toYaml(ctx.configs[svc])
    const ports = [
      { name: "api", containerPort: apiPorts[svc], protocol: "TCP" },
      { name: "health", containerPort: healthPort, protocol: "TCP" },
      { name: "metrics", containerPort: metricsPort, protocol: "TCP" }
    ]
    return objectsFor(ctx, svc, configKey, text, {
      svc,
      image: imageOf(svc, ctx.image),
      command: serviceCommand(svc),
      configKey,
      configText: text,
      ports,
      probePort: healthPort,
      grace: drainSeconds(svc, spec) + graceMargin,
      mounts: [...serviceMounts(svc, spec), tlsVolume(svc, ctx.certificates ?? "operator")],
      env: serviceEnv(svc, spec)
    }, [
      { name: "api", port: apiPorts[svc], targetPort: "api", protocol: "TCP" },
      { name: "metrics", port: metricsPort, targetPort: "metrics", protocol: "TCP" }
    ], spec)
  })
  if (!spec.console.enabled || ctx.consoleConfig === undefined) return perService
  const text = toYaml(ctx.consoleConfig)
  // The console runs from the same image as every service, with the same health and metrics listeners.
  return [
    ...perService,
    ...objectsFor(ctx, "console", consoleConfigKey, text, {
      svc: "console",
      image: imageOf("console", ctx.image),
      command: serviceCommand("console"),
      configKey: consoleConfigKey,
      configText: text,
      ports: [
        { name: "http", containerPort: consolePort, protocol: "TCP" },
        { name: "health", containerPort: healthPort, protocol: "TCP" },
        { name: "metrics", containerPort: metricsPort, protocol: "TCP" }
      ],
      probePort: healthPort,
      grace: spec.apiFrontend.shutdown.drainSeconds + graceMargin,
      // The platform CA, so its calls to the gateway verify the gateway's certificate (`tls.caFile`).
      mounts: [secretMount("console-auth", spec.console.auth?.secretName ?? "", paths.consoleSecretDir), caVolume(ctx.certificates ?? "operator")],
      env: []
    }, [
      { name: "http", port: consolePort, targetPort: "http", protocol: "TCP" },
      { name: "metrics", port: metricsPort, targetPort: "metrics", protocol: "TCP" }
    ], spec)
  ]
}
