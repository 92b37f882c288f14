/**
 * Validation of the platform CR for the operator: `decodePlatformSpec` answers a fully defaulted spec or the list
 * of issues (dotted field path + message) that the operator puts into its `Error` condition.
 */
import { Either, Schema } from "effect"
import { formatPath, issuesFromParseError, type ValidationIssue } from "../Issues.ts"
import { Platform, PlatformSpec } from "./Spec.ts"

/**
 * Leaves the spec names as required; when a whole parent block is missing, the issue names these leaves (the
 * operator reports `spec.aiAnalysis.policy.configMapName is required`, not just `spec.aiAnalysis`).
 */
export const RequiredLeaves = [
  "postgresql.host",
  "postgresql.secretName",
  "valkey.host",
  "valkey.secretName",
  "agent.llm.provider",
  "agent.llm.model",
  "agent.llm.credentialsSecretName",
  "aiAnalysis.policy.configMapName",
  "signalProcessing.policy.configMapName"
] as const

/** The original's name of the agent block, accepted on input when `agent` is absent. */
export const LegacyAgentKey = "kubernautAgent"

const decode = Schema.decodeUnknownEither(PlatformSpec)

/**
 * Decodes and validates a platform spec. Unknown fields are ignored. `kubernautAgent` is read as `agent` (issues
 * then name `spec.kubernautAgent…`); having both is an issue.
 */
export const decodePlatformSpec = (
  input: unknown,
  root = "spec"
): Either.Either<PlatformSpec, ReadonlyArray<ValidationIssue>> => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return Either.left([{ path: root, message: "must be an object" }])
  }
  const raw = input as Record<string, unknown>
  const legacy = raw[LegacyAgentKey] !== undefined
  if (legacy && raw.agent !== undefined) {
    return Either.left([
      { path: formatPath(root, [LegacyAgentKey]), message: "set either agent or kubernautAgent, not both" }
    ])
  }
  const normalized = legacy ? { ...raw, agent: raw[LegacyAgentKey] } : raw
  return decode(normalized, { errors: "all", onExcessProperty: "ignore" }).pipe(
    Either.mapLeft((error) => {
      const issues = expandMissingParents(issuesFromParseError(error, root), root)
      return legacy ? issues.map((i) => ({ ...i, path: renameAgent(i.path, root) })) : issues
    })
  )
}

const decodeEnvelope = Schema.decodeUnknownEither(Platform.omit("spec"))

/** Decodes a whole `Kubemend` resource; spec issues are reported as with `decodePlatformSpec`. */
export const decodePlatform = (input: unknown): Either.Either<Platform, ReadonlyArray<ValidationIssue>> => {
  const raw = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {}
  const envelope = decodeEnvelope(input, { errors: "all" })
  const spec = decodePlatformSpec(raw.spec)
  if (Either.isRight(envelope) && Either.isRight(spec)) return Either.right({ ...envelope.right, spec: spec.right })
  return Either.left([
    ...(Either.isLeft(envelope) ? issuesFromParseError(envelope.left) : []),
    ...(Either.isLeft(spec) ? spec.left : [])
  ])
}

const expandMissingParents = (issues: ReadonlyArray<ValidationIssue>, root: string): Array<ValidationIssue> =>
  issues.flatMap((issue) => {
    if (issue.message !== "is required") return [issue]
    const prefix = issue.path + "."
    const leaves = RequiredLeaves.map((l) => `${root}.${l}`).filter((l) => l.startsWith(prefix))
    return leaves.length === 0 ? [issue] : leaves.map((path) => ({ path, message: "is required" }))
  })

const renameAgent = (path: string, root: string): string => {
  const from = `${root}.agent`
  return path === from || path.startsWith(from + ".") || path.startsWith(from + "[")
    ? `${root}.${LegacyAgentKey}${path.slice(from.length)}`
    : path
}

/**
 * The cross-field rules of the Schema filters as CEL, for CRD generation (`x-kubernetes-validations` at `path`;
 * `[]` means "on each item"). JSON Schema alone cannot express them.
 */
export const PlatformCelRules: ReadonlyArray<{ readonly path: string; readonly rule: string; readonly message: string }> = [
  {
    path: "spec.ansible",
    rule: "!has(self.enabled) || !self.enabled || has(self.apiURL)",
    message: "ansible.apiURL is required when ansible.enabled is true"
  },
  {
    path: "spec.console",
    rule: "!has(self.enabled) || !self.enabled || (has(self.auth) && has(self.auth.secretName))",
    message: "console.auth.secretName is required when console.enabled is true"
  },
  {
    path: "spec.agent.llm",
    rule: "!(self.provider in ['openai', 'ollama', 'azure', 'mistral']) || (has(self.endpoint) && self.endpoint != '')",
    message: "llm.endpoint is required for providers openai, ollama, azure and mistral"
  },
  {
    path: "spec.agent.llm.phaseModels",
    rule: "self.all(k, k in ['rca', 'workflow_discovery', 'validation'])",
    message: "phaseModels keys must be one of: rca, workflow_discovery, validation"
  },
  {
    path: "spec.apiFrontend.rbac.roleBindings[]",
    rule: "has(self.role) != has(self.clusterRoleName)",
    message: "set exactly one of role or clusterRoleName"
  },
  {
    path: "spec.apiFrontend.auth.jwtProviders",
    rule: "self.all(p, self.exists_one(q, q.name == p.name))",
    message: "jwtProviders names must be unique"
  },
  {
    path: "spec.agent.interactive.jwtProviders",
    rule: "self.all(p, self.exists_one(q, q.name == p.name))",
    message: "jwtProviders names must be unique"
  },
  {
    path: "spec.apiFrontend.auth.jwtProviders[]",
    rule: "!has(self.jwksURL) || self.jwksURL.startsWith('https://')",
    message: "jwksURL must be an https:// URL"
  },
  {
    path: "spec.agent.interactive.jwtProviders[]",
    rule: "!has(self.jwksURL) || self.jwksURL.startsWith('https://')",
    message: "jwksURL must be an https:// URL"
  },
  {
    path: "spec.apiFrontend",
    rule: "!has(self.externalURL) || self.externalURL.startsWith('https://')",
    message: "apiFrontend.externalURL must be an https:// URL"
  }
]
