/**
 * From a RemediationWorkflow custom resource (YAML or JSON text) to the catalog's fields, its content hash and its
 * deterministic id. Shared by the storage service and `Storage.layerMemory` so both give the same ids.
 *
 * - `contentHash` = hex SHA-256 of the canonical JSON (sorted keys) of `{apiVersion, kind, metadata: {name}, spec}`:
 *   comments, key order and other metadata do not change it, any change of the spec does.
 * - `workflowId` = UUIDv5(namespace `6ba7b810-9dad-51d0-80b7-00c04fd430c8`, contentHash), as the original does.
 */
import { Either, ParseResult, Schema } from "effect"
import { createHash } from "node:crypto"
import { v5 } from "uuid"
import * as Yaml from "yaml"
import { canonicalJson } from "../CanonicalJson.ts"
import { MandatoryLabels, StructuredDescription } from "./Catalog.ts"

export { canonicalJson }

export const WorkflowIdNamespace = "6ba7b810-9dad-51d0-80b7-00c04fd430c8"

/** RFC 9562 version-5 UUID of `name` in `namespace`. */
export const uuidV5 = (name: string, namespace: string = WorkflowIdNamespace): string => v5(name, namespace)

const Parameter = Schema.Struct({ name: Schema.String }, { key: Schema.String, value: Schema.Unknown })

/**
 * The RemediationWorkflow CRD declares `customLabels` as `map[string]string`; the catalog stores
 * `map[string][]string` (the original's record). A string is one value; a list is kept for API callers that send it.
 */
const CustomLabelValues = Schema.Union(
  Schema.transform(Schema.String, Schema.Array(Schema.String), {
    strict: true,
    decode: (value) => [value],
    encode: (values) => values.join(",")
  }),
  Schema.Array(Schema.String)
)

const WorkflowResource = Schema.Struct({
  apiVersion: Schema.String,
  kind: Schema.Literal("RemediationWorkflow"),
  metadata: Schema.Struct({ name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)) }),
  spec: Schema.Struct({
    version: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(50)),
    actionType: Schema.String.pipe(Schema.minLength(1)),
    description: StructuredDescription,
    labels: MandatoryLabels,
    schemaVersion: Schema.optional(Schema.String),
    displayName: Schema.optional(Schema.String),
    customLabels: Schema.optional(Schema.Record({ key: Schema.String, value: CustomLabelValues })),
    detectedLabels: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    parameters: Schema.optional(Schema.Array(Parameter)),
    execution: Schema.optional(
      Schema.Struct({
        engine: Schema.optional(Schema.Literal("tekton", "job", "ansible")),
        bundle: Schema.optional(Schema.String),
        bundleDigest: Schema.optional(Schema.String),
        serviceAccountName: Schema.optional(Schema.String),
        engineConfig: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
      })
    ),
    maintainers: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, email: Schema.String })))
  })
})

/** The catalog fields a registration derives from the resource. */
export interface ParsedWorkflow {
  readonly workflowId: string
  readonly contentHash: string
  readonly workflowName: string
  readonly version: string
  readonly actionType: string
  readonly schemaVersion: string
  readonly name: string
  readonly description: StructuredDescription
  readonly labels: MandatoryLabels
  readonly customLabels?: Readonly<Record<string, ReadonlyArray<string>>>
  readonly detectedLabels?: Readonly<Record<string, unknown>>
  readonly parameters?: Readonly<Record<string, unknown>>
  readonly executionEngine: string
  readonly executionBundle?: string
  readonly executionBundleDigest?: string
  readonly serviceAccountName?: string
  readonly engineConfig?: Readonly<Record<string, unknown>>
  readonly maintainer?: string
  readonly owner?: string
}

/** Parses and validates; `Left` carries a sentence for a 400 `validation-error`. */
export const parseWorkflowContent = (content: string): Either.Either<ParsedWorkflow, string> => {
  let document: unknown
  try {
    document = Yaml.parse(content)
  } catch (e) {
    return Either.left(`content is not valid YAML: ${e instanceof Error ? e.message : String(e)}`)
  }
  const decoded = Schema.decodeUnknownEither(WorkflowResource)(document)
  if (Either.isLeft(decoded)) {
    return Either.left(`content is not a valid RemediationWorkflow: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
  }
  const r = decoded.right
  const raw = document as { apiVersion: string; kind: string; spec: unknown }
  const contentHash = createHash("sha256")
    .update(canonicalJson({ apiVersion: raw.apiVersion, kind: raw.kind, metadata: { name: r.metadata.name }, spec: raw.spec }))
    .digest("hex")
  const s = r.spec
  const maintainer = s.maintainers?.[0]
  return Either.right({
    workflowId: uuidV5(contentHash),
    contentHash,
    workflowName: r.metadata.name,
    version: s.version,
    actionType: s.actionType,
    schemaVersion: s.schemaVersion ?? "1.0",
    name: s.displayName ?? r.metadata.name,
    description: s.description,
    labels: s.labels,
    ...(s.customLabels === undefined ? {} : { customLabels: s.customLabels }),
    ...(s.detectedLabels === undefined ? {} : { detectedLabels: s.detectedLabels }),
    // `{ parameters: [...] }`, the JSON shape the original catalog stores and the agent reads.
    ...(s.parameters === undefined ? {} : { parameters: { parameters: s.parameters } }),
    executionEngine: s.execution?.engine ?? "job",
    ...(s.execution?.bundle === undefined ? {} : { executionBundle: s.execution.bundle }),
    ...(s.execution?.bundleDigest === undefined ? {} : { executionBundleDigest: s.execution.bundleDigest }),
    ...(s.execution?.serviceAccountName === undefined ? {} : { serviceAccountName: s.execution.serviceAccountName }),
    ...(s.execution?.engineConfig === undefined ? {} : { engineConfig: s.execution.engineConfig }),
    ...(maintainer === undefined ? {} : { maintainer: maintainer.email, owner: maintainer.name })
  })
}

/**
 * True when the labels accept `value` for `key`: compared case-insensitively (a signal from `Production` finds a
 * workflow labelled `production`), `*` on the workflow side matches anything. A component is the signal's
 * `group/version/Kind`; a workflow may name it so or by the kind alone (`Deployment`, `deployment`).
 */
export const labelMatches = (labels: MandatoryLabels, key: "severity" | "component" | "environment" | "priority", value: string) => {
  const declared = (key === "priority" ? [labels.priority] : labels[key]).map((d) => d.toLowerCase())
  const wanted = value.toLowerCase()
  const kind = key === "component" ? wanted.slice(wanted.lastIndexOf("/") + 1) : wanted
  return declared.some((d) => d === "*" || d === wanted || d === kind)
}

/** The signal's custom labels (`{"constraint":["cost-constrained"]}`), as the discovery query carries them. */
export const parseCustomLabels = (json: string | undefined): Record<string, ReadonlyArray<string>> | undefined => {
  if (json === undefined || json === "") return undefined
  try {
    const parsed = JSON.parse(json) as unknown
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, (Array.isArray(v) ? v : [v]).map(String)]))
  } catch {
    return undefined
  }
}

/**
 * A workflow's custom labels are conditions on the signal: each key it declares must be among the signal's custom
 * labels with a shared value (case-insensitive; `*` accepts any value or none). Keys only the signal carries do not
 * exclude a workflow, so generic workflows stay visible to labelled signals.
 */
export const customLabelsMatch = (
  declared: Readonly<Record<string, ReadonlyArray<string> | string>> | undefined,
  signal: Readonly<Record<string, ReadonlyArray<string>>>
) =>
  Object.entries(declared ?? {}).every(([key, raw]) => {
    const wanted = (typeof raw === "string" ? [raw] : raw).map((v) => v.toLowerCase())
    const have = (signal[key] ?? []).map((v) => v.toLowerCase())
    return wanted.includes("*") || wanted.some((v) => have.includes(v))
  })
