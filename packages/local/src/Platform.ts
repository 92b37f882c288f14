/**
 * The platform CR the local platform applies: interactive mode and severity triage on, the dev issuer as the JWT
 * provider, the persona groups bound to their roles, the scripted model (or a real one from `LLM_*`), and the
 * Secrets and ConfigMaps it references, so the operator's validation passes exactly as in a cluster.
 */
import { personaGroup, personas } from "@kubemend/core/Personas"
import { defaultPolicies } from "@kubemend/operator/policy/Defaults"

export interface LocalLlm {
  readonly provider: string
  readonly model: string
  readonly endpoint?: string
  readonly apiKey: string
}

export const namespace = "kubemend-system"
export const apiGroup = "kubemend.io"
export const toolPrefix = "svc"
export const audience = "kubemend-gateway"

/** A real provider when `LLM_PROVIDER` is set; the scripted server otherwise. */
export const llmFrom = (env: NodeJS.ProcessEnv, scriptedUrl: string): LocalLlm =>
  env["LLM_PROVIDER"] === undefined
    ? { provider: "openai", model: "scripted-investigator", endpoint: scriptedUrl, apiKey: "local-dev-key" }
    : {
      provider: env["LLM_PROVIDER"],
      model: env["LLM_MODEL"] ?? "gpt-4o",
      ...(env["LLM_ENDPOINT"] === undefined ? {} : { endpoint: env["LLM_ENDPOINT"] }),
      apiKey: env["LLM_API_KEY"] ?? ""
    }

export const platformCr = (issuerUrl: string, llm: LocalLlm, alertsUrl: string) => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "Kubemend",
  metadata: { name: "kubemend", namespace },
  spec: {
    postgresql: { host: "embedded.local", port: 5432, secretName: "pg", sslMode: "require" },
    // Required by the CR schema but never contacted locally: the local platform renders storage with its embedded
    // database, which also keeps the dead-letter queue in a file (RenderContext.deadLetterQueue defaults to "file").
    valkey: { host: "valkey.local", secretName: "valkey" },
    agent: {
      llm: {
        provider: llm.provider,
        model: llm.model,
        credentialsSecretName: "llm",
        ...(llm.endpoint === undefined ? {} : { endpoint: llm.endpoint })
      },
      interactive: {
        enabled: true,
        jwtProviders: [{ name: "dev", issuerURL: issuerUrl, audiences: [audience] }]
      },
      maxTurns: 40
    },
    aiAnalysis: { policy: { configMapName: "approval-policy" }, confidenceThreshold: "0.8" },
    signalProcessing: { policy: { configMapName: "sp-policy" } },
    monitoring: { enabled: true, metricsURL: alertsUrl, alertManagerURL: alertsUrl },
    console: { enabled: true, auth: { secretName: consoleSecretName } },
    apiFrontend: {
      auth: { jwtProviders: [{ name: "dev", issuerURL: issuerUrl, audiences: [audience] }] },
      severityTriage: { enabled: true },
      rbac: {
        sarCacheTTL: "30s",
        roleBindings: personas.map((role) => ({ role, groups: [personaGroup(role)] })),
        consoleAccessGroups: personas.map(personaGroup)
      },
      shutdown: { drainSeconds: 5 }
    }
  }
})

const b64 = (s: string) => Buffer.from(s).toString("base64")

/** The console's OIDC client at the dev issuer, and the Secret the CR names for it (keys as document 3 lists). */
export const consoleSecretName = "console-oidc"
export const consoleSecret = (keys: Readonly<Record<"client-id" | "client-secret" | "cookie-secret", string>>) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: consoleSecretName, namespace },
  data: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, b64(v)]))
})

/** The ServiceAccount Alertmanager posts signals with (`serviceTokens.alertmanager`), and its grant to send. */
export const alertmanagerIdentity = { namespace: "monitoring", name: "alertmanager" } as const

export const alertmanagerObjects = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: alertmanagerIdentity.namespace } },
  { apiVersion: "v1", kind: "ServiceAccount", metadata: { ...alertmanagerIdentity } },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "alertmanager-signal-source" },
    // The operator renders the role itself (`monitoring.enabled`); binding a sender to it is the platform team's call.
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${namespace}-gateway-signal-source` },
    subjects: [{ kind: "ServiceAccount", ...alertmanagerIdentity }]
  }
]

/** What the CR references, present in the controller namespace as a platform team would create it. */
export const referencedObjects = (llm: LocalLlm) => [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
  {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "pg", namespace },
    data: { username: b64("kubemend"), password: b64("local"), database: b64("kubemend") }
  },
  { apiVersion: "v1", kind: "Secret", metadata: { name: "valkey", namespace }, data: { password: b64("local") } },
  { apiVersion: "v1", kind: "Secret", metadata: { name: "llm", namespace }, data: { "api-key": b64(llm.apiKey) } },
  {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "approval-policy", namespace },
    data: { "approval.rego": defaultPolicies["approval.rego"] }
  },
  {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "sp-policy", namespace },
    data: { "policy.rego": defaultPolicies["policy.rego"] }
  }
]
