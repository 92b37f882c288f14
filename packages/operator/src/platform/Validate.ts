/**
 * Validation in reconcile of what the CRD schema cannot see: the spec rules of document 3 (through core's
 * `decodePlatformSpec`, which names each field) and the references into the cluster — Secrets and ConfigMaps with
 * the keys the services read, custom ClusterRoles that exist and grant `use` on `tools`, and the agent's additional
 * ClusterRoles. Every problem is one issue with the dotted path of the field that names the reference.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { K8sUnavailable } from "@kubemend/core/K8s"
import type { ValidationIssue } from "@kubemend/core/domain/Issues"
import type { PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { Effect, Option } from "effect"
import type { ClusterService } from "../runtime/Cluster.ts"

interface Reference {
  readonly path: string
  readonly kind: "Secret" | "ConfigMap"
  readonly name: string
  readonly keys: ReadonlyArray<string>
}

/** Every Secret and ConfigMap the spec points at, with the keys the services need from it. */
export const references = (spec: PlatformSpec): ReadonlyArray<Reference> => {
  const refs: Array<Reference> = [
    { path: "spec.postgresql.secretName", kind: "Secret", name: spec.postgresql.secretName, keys: ["username", "password", "database"] },
    { path: "spec.valkey.secretName", kind: "Secret", name: spec.valkey.secretName, keys: ["password"] },
    { path: "spec.agent.llm.credentialsSecretName", kind: "Secret", name: spec.agent.llm.credentialsSecretName, keys: ["api-key"] },
    { path: "spec.aiAnalysis.policy.configMapName", kind: "ConfigMap", name: spec.aiAnalysis.policy.configMapName, keys: ["approval.rego"] },
    { path: "spec.signalProcessing.policy.configMapName", kind: "ConfigMap", name: spec.signalProcessing.policy.configMapName, keys: ["policy.rego"] }
  ]
  const llm = spec.agent.llm
  if (llm.runtimeConfigMapName !== undefined) {
    refs.push({ path: "spec.agent.llm.runtimeConfigMapName", kind: "ConfigMap", name: llm.runtimeConfigMapName, keys: ["llm-runtime.yaml"] })
  }
  if (llm.oauth2?.enabled === true && llm.oauth2.credentialsSecretRef !== undefined) {
    refs.push({
      path: "spec.agent.llm.oauth2.credentialsSecretRef",
      kind: "Secret",
      name: llm.oauth2.credentialsSecretRef,
      keys: ["client-id", "client-secret"]
    })
  }
  const alignment = spec.agent.alignmentCheck.llm?.credentialsSecretName
  if (alignment !== undefined) {
    refs.push({ path: "spec.agent.alignmentCheck.llm.credentialsSecretName", kind: "Secret", name: alignment, keys: ["api-key"] })
  }
  if (spec.console.enabled && spec.console.auth?.secretName !== undefined) {
    refs.push({
      path: "spec.console.auth.secretName",
      kind: "Secret",
      name: spec.console.auth.secretName,
      keys: ["client-id", "client-secret", "cookie-secret"]
    })
  }
  if (spec.ansible.enabled) {
    const { tokenSecretRef: token, caCertSecretRef: ca } = spec.ansible
    if (token !== undefined) refs.push({ path: "spec.ansible.tokenSecretRef.name", kind: "Secret", name: token.name, keys: [token.key] })
    if (ca !== undefined) refs.push({ path: "spec.ansible.caCertSecretRef.name", kind: "Secret", name: ca.name, keys: [ca.key] })
  }
  return refs
}

/** Rules of the spec that need no cluster but are not schema rules either. */
const specRules = (spec: PlatformSpec): Array<ValidationIssue> => {
  const issues: Array<ValidationIssue> = []
  const oauth = spec.agent.llm.oauth2
  if (oauth?.enabled === true) {
    if (oauth.tokenURL === undefined) issues.push({ path: "spec.agent.llm.oauth2.tokenURL", message: "is required when oauth2.enabled is true" })
    if (oauth.credentialsSecretRef === undefined) {
      issues.push({ path: "spec.agent.llm.oauth2.credentialsSecretRef", message: "is required when oauth2.enabled is true" })
    }
  }
  return issues
}

interface RoleRule {
  readonly apiGroups?: ReadonlyArray<string>
  readonly resources?: ReadonlyArray<string>
  readonly verbs?: ReadonlyArray<string>
}

/** Whether a ClusterRole's rules grant verb `use` on `tools` in the platform's group (wildcards honoured). */
export const grantsToolUse = (role: KubeObject, apiGroup: string): boolean => {
  const rules = (role as { rules?: ReadonlyArray<RoleRule> }).rules ?? []
  const has = (list: ReadonlyArray<string> | undefined, v: string) => (list ?? []).includes(v) || (list ?? []).includes("*")
  return rules.some((r) => has(r.apiGroups, apiGroup) && has(r.resources, "tools") && has(r.verbs, "use"))
}

const keysOf = (o: KubeObject): ReadonlySet<string> => {
  const data = o as { data?: Record<string, unknown>; stringData?: Record<string, unknown>; binaryData?: Record<string, unknown> }
  return new Set([...Object.keys(data.data ?? {}), ...Object.keys(data.stringData ?? {}), ...Object.keys(data.binaryData ?? {})])
}

/** The issues of a decoded spec against the cluster: empty when every reference resolves. */
export const validateReferences = (
  cluster: ClusterService,
  spec: PlatformSpec,
  ctx: { readonly namespace: string; readonly apiGroup: string }
): Effect.Effect<ReadonlyArray<ValidationIssue>, K8sUnavailable> =>
  Effect.gen(function* () {
    const referenceIssues = Effect.forEach(references(spec), (ref) =>
      cluster.get({ apiVersion: "v1", kind: ref.kind, name: ref.name, namespace: ctx.namespace }).pipe(
        Effect.map((found): ReadonlyArray<ValidationIssue> => {
          if (Option.isNone(found)) {
            return [{ path: ref.path, message: `${ref.kind} "${ref.name}" not found in namespace "${ctx.namespace}"` }]
          }
          const keys = keysOf(found.value)
          const missing = ref.keys.filter((k) =>
            !keys.has(k)
          )
          return missing.length === 0
            ? []
            : [{ path: ref.path, message: `${ref.kind} "${ref.name}" has no key ${missing.map((k) => `"${k}"`).join(", ")}` }]
        })
      ), { concurrency: 8 })
    const clusterRole = (name: string) =>
      cluster.get({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name })
    const customRoles = Effect.forEach(spec.apiFrontend.rbac.roleBindings, (binding, i) => {
      if (!("clusterRoleName" in binding)) return Effect.succeed([])
      const path = `spec.apiFrontend.rbac.roleBindings[${i}].clusterRoleName`
      return clusterRole(binding.clusterRoleName).pipe(Effect.map((role): ReadonlyArray<ValidationIssue> =>
        Option.isNone(role)
          ? [{ path, message: `ClusterRole "${binding.clusterRoleName}" not found` }]
          : grantsToolUse(role.value, ctx.apiGroup)
          ? []
          : [{ path, message: `ClusterRole "${binding.clusterRoleName}" does not grant "use" on "tools" in ${ctx.apiGroup}` }]
      ))
    }, { concurrency: 8 })
    const additional = Effect.forEach(spec.agent.additionalClusterRoleBindings ?? [], (name, i) =>
      clusterRole(name).pipe(Effect.map((role): ReadonlyArray<ValidationIssue> =>
        Option.isNone(role) ? [{ path: `spec.agent.additionalClusterRoleBindings[${i}]`, message: `ClusterRole "${name}" not found` }] : []
      )), { concurrency: 8 })
    const found = yield* Effect.all([referenceIssues, customRoles, additional], { concurrency: 3 })
    const issues = [...specRules(spec), ...found.flat(2)]
    return issues
  })
