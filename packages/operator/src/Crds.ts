/**
 * CustomResourceDefinitions generated from the domain schemas (never kept by hand): the platform CR with its CEL
 * rules, and every remediation CR the platform and its lifecycle controllers read or write. Effect's JSON Schema is
 * turned into a structural schema (no `$schema`/`$id`/titles/descriptions, no `additionalProperties: false`, which
 * the API server rejects next to `properties`; unknown fields are pruned instead).
 */
import type { KubeObject } from "@kubemend/core/K8s"
import * as Domain from "@kubemend/core/domain/index"
import { JSONSchema, type Schema } from "effect"
import * as YAML from "yaml"

type Json = Record<string, unknown>

const dropped = new Set(["$schema", "$id", "title", "description"])

/** A JSON Schema node as an OpenAPI v3 structural schema node. */
export const structural = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(structural)
  if (typeof node !== "object" || node === null) return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (dropped.has(key)) continue
    if (key === "additionalProperties" && value === false) continue
    if (key === "required" && Array.isArray(value) && value.length === 0) continue
    if (key === "properties") {
      // An empty `properties` next to `additionalProperties` (records) is not allowed in a structural schema.
      if (Object.keys(value as Json).length === 0) continue
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, structural(v)]))
      continue
    }
    // JSON Schema's numeric exclusive bounds are OpenAPI v3's `minimum`/`maximum` plus a boolean flag.
    if ((key === "exclusiveMinimum" || key === "exclusiveMaximum") && typeof value === "number") {
      out[key === "exclusiveMinimum" ? "minimum" : "maximum"] = value
      out[key] = true
      continue
    }
    // `default` and `enum` are values, not schemas: kept as they are.
    out[key] = key === "default" || key === "enum" ? value : structural(value)
  }
  return out
}

/** Adds `x-kubernetes-validations` at a dotted path under the root (`spec.agent.llm`, `[]` = each item). */
const addRule = (root: Json, path: string, rule: { readonly rule: string; readonly message: string }) => {
  let node = root
  for (const part of path.split(".")) {
    const props = node["properties"] as Json | undefined
    const next = props?.[part.replace("[]", "")] as Json | undefined
    if (next === undefined) throw new Error(`crdgen: no schema at ${path}`)
    node = part.endsWith("[]") ? (next["items"] as Json) : next
  }
  const rules = (node["x-kubernetes-validations"] as Array<unknown> | undefined) ?? []
  node["x-kubernetes-validations"] = [...rules, { rule: rule.rule, message: rule.message }]
}

interface CrdInput {
  readonly kind: string
  readonly plural: string
  readonly schema: Schema.Schema.AnyNoContext
  readonly shortNames?: ReadonlyArray<string>
  readonly phasePath?: string
  readonly rules?: ReadonlyArray<{ readonly path: string; readonly rule: string; readonly message: string }>
}

const crd = (apiGroup: string, input: CrdInput): KubeObject => {
  const resource = JSONSchema.make(input.schema) as unknown as Json
  const props = resource["properties"] as Json
  const root: Json = {
    type: "object",
    required: ["spec"],
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: structural(props["spec"]),
      status: structural(props["status"])
    }
  }
  for (const r of input.rules ?? []) addRule(root, r.path, r)
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${input.plural}.${apiGroup}` },
    spec: {
      group: apiGroup,
      scope: "Namespaced",
      names: {
        kind: input.kind,
        listKind: `${input.kind}List`,
        plural: input.plural,
        singular: input.kind.toLowerCase(),
        ...(input.shortNames === undefined ? {} : { shortNames: [...input.shortNames] })
      },
      versions: [{
        name: Domain.CrVersion,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          ...(input.phasePath === undefined ? [] : [{ name: "Phase", type: "string", jsonPath: input.phasePath }]),
          { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }
        ],
        schema: { openAPIV3Schema: root }
      }]
    }
  }
}

/** Every CRD of the platform, the platform CR first. */
export const renderCrds = (apiGroup: string = Domain.DefaultApiGroup): ReadonlyArray<KubeObject> => [
  crd(apiGroup, {
    kind: Domain.PlatformKind,
    plural: Domain.PlatformPlural,
    schema: Domain.Platform,
    shortNames: ["km"],
    phasePath: ".status.phase",
    rules: Domain.PlatformCelRules
  }),
  crd(apiGroup, { kind: Domain.RRKind, plural: Domain.RRPlural, schema: Domain.RemediationRequest, shortNames: ["rr"], phasePath: ".status.overallPhase" }),
  crd(apiGroup, { kind: Domain.RARKind, plural: Domain.RARPlural, schema: Domain.RemediationApprovalRequest, shortNames: ["rar"] }),
  crd(apiGroup, { kind: Domain.AIAnalysisKind, plural: Domain.AIAnalysisPlural, schema: Domain.AIAnalysis, shortNames: ["aia"], phasePath: ".status.phase" }),
  crd(apiGroup, { kind: Domain.InvestigationSessionKind, plural: Domain.InvestigationSessionPlural, schema: Domain.InvestigationSession }),
  crd(apiGroup, {
    kind: Domain.WorkflowExecutionKind,
    plural: Domain.WorkflowExecutionPlural,
    schema: Domain.WorkflowExecution,
    shortNames: ["wfe"],
    phasePath: ".status.phase"
  }),
  // The remaining children of an RR the lifecycle controllers create (SignalProcessing, assessment, notification).
  crd(apiGroup, {
    kind: Domain.SignalProcessingKind,
    plural: Domain.SignalProcessingPlural,
    schema: Domain.SignalProcessingResource,
    shortNames: ["sp"],
    phasePath: ".status.phase"
  }),
  crd(apiGroup, {
    kind: Domain.EffectivenessAssessmentKind,
    plural: Domain.EffectivenessAssessmentPlural,
    schema: Domain.EffectivenessAssessment,
    shortNames: ["ea"],
    phasePath: ".status.phase"
  }),
  crd(apiGroup, {
    kind: Domain.NotificationRequestKind,
    plural: Domain.NotificationRequestPlural,
    schema: Domain.NotificationRequest,
    shortNames: ["nr"],
    phasePath: ".status.phase"
  }),
  // The catalog as resources a platform user applies (the catalog controller registers them in storage).
  crd(apiGroup, {
    kind: Domain.RemediationWorkflowKind,
    plural: Domain.RemediationWorkflowPlural,
    schema: Domain.RemediationWorkflowResource,
    shortNames: ["rw"],
    phasePath: ".status.catalogStatus"
  }),
  crd(apiGroup, {
    kind: Domain.ActionTypeKind,
    plural: Domain.ActionTypePlural,
    schema: Domain.ActionTypeResource,
    shortNames: ["at"],
    phasePath: ".status.catalogStatus"
  })
]

/** File name of a CRD under `deploy/crds/` (controller-gen's `<group>_<plural>.yaml`). */
export const crdFileName = (o: KubeObject): string => {
  const spec = o.spec as { group: string; names: { plural: string } }
  return `${spec.group}_${spec.names.plural}.yaml`
}

export const crdYaml = (o: KubeObject): string =>
  `# Generated by packages/operator/src/crdgen.ts from the domain schemas. Do not edit.\n---\n${YAML.stringify(o, { lineWidth: 0 })}`
