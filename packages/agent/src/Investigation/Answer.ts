/**
 * The model's final answer: a JSON object in its last message (fenced or bare). Parsing is lenient about where the
 * JSON sits and strict about what it says, so a malformed answer gets a precise correction.
 */
import { Either, ParseResult, Schema } from "effect"
import { HumanReviewReason } from "@kubemend/core/domain/AIAnalysis"

const optional = <S extends Schema.Schema.All>(s: S) => Schema.optionalWith(s, { exact: true })
const Confidence = Schema.Number.pipe(Schema.between(0, 1))
const Params = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const ProposedWorkflow = Schema.Struct({
  workflow_id: Schema.String.pipe(Schema.minLength(1)),
  parameters: optional(Params),
  rationale: optional(Schema.String),
  confidence: optional(Confidence)
})
export type ProposedWorkflow = typeof ProposedWorkflow.Type

/** The resource the analysis says to remediate (the workflow phase's discovery and parameters follow it). */
export const RemediationTarget = Schema.Struct({
  kind: Schema.String.pipe(Schema.pattern(/^[A-Za-z][A-Za-z0-9]{0,62}$/)),
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(253)),
  namespace: optional(Schema.String),
  api_version: optional(Schema.String)
})

export const FinalAnswer = Schema.Struct({
  root_cause: optional(Schema.String),
  summary: optional(Schema.String),
  analysis: optional(Schema.String),
  root_cause_analysis: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  confidence: optional(Confidence),
  severity: optional(Schema.String),
  contributing_factors: optional(Schema.Array(Schema.String)),
  investigation_outcome: optional(Schema.String),
  actionable: optional(Schema.Boolean),
  selected_workflow: optional(Schema.NullOr(ProposedWorkflow)),
  alternative_workflows: optional(
    Schema.Array(Schema.Struct({ workflow_id: Schema.String, rationale: optional(Schema.String), confidence: optional(Confidence) }))
  ),
  needs_human_review: optional(Schema.Boolean),
  human_review_reason: optional(HumanReviewReason),
  remediation_target: optional(RemediationTarget)
})
export type FinalAnswer = typeof FinalAnswer.Type

/** What the system prompt asks for, also repeated in corrections. */
export const answerFormat = `{
  "root_cause": "one or two sentences naming the root cause",
  "confidence": 0.0-1.0,
  "severity": "critical | high | warning | info",
  "contributing_factors": ["..."],
  "investigation_outcome": "workflow_selected | resolved | no_action_needed | inconclusive",
  "actionable": true | false,
  "selected_workflow": { "workflow_id": "<id from the catalog>", "parameters": { ... }, "rationale": "..." } | null,
  "alternative_workflows": [{ "workflow_id": "...", "rationale": "...", "confidence": 0.0-1.0 }]
}`

const fenced = /```(?:json)?\s*([\s\S]*?)```/i

const jsonText = (text: string): string | undefined => {
  const block = fenced.exec(text)?.[1]
  if (block !== undefined && block.trim().startsWith("{")) return block.trim()
  const start = text.indexOf("{")
  const end = text.lastIndexOf("}")
  return start >= 0 && end > start ? text.slice(start, end + 1) : undefined
}

const decode = Schema.decodeUnknownEither(FinalAnswer, { errors: "all" })

/** The root-cause phase's answer: the analysis and the resource to remediate, without a workflow. */
export const rcaFormat = `{
  "root_cause": "one or two sentences naming the root cause",
  "confidence": 0.0-1.0,
  "severity": "critical | high | warning | info",
  "contributing_factors": ["..."],
  "investigation_outcome": "actionable | resolved | no_action_needed | inconclusive",
  "actionable": true | false,
  "remediation_target": { "kind": "...", "name": "...", "namespace": "...", "api_version": "..." }
}`

/** The workflow-selection phase's answer. */
export const selectionFormat = `{
  "selected_workflow": { "workflow_id": "<id from list_workflows>", "parameters": { ... }, "rationale": "...", "confidence": 0.0-1.0 } | null,
  "alternative_workflows": [{ "workflow_id": "...", "rationale": "...", "confidence": 0.0-1.0 }],
  "needs_human_review": true | false,
  "human_review_reason": "no_matching_workflows | low_confidence | ..."
}`

/**
 * The parsed answer, or a message telling the model what to fix. In the workflow phase `base` is the root-cause
 * answer: the selection is laid over it, so it need not repeat the analysis.
 */
export const parseAnswer = (text: string, base?: FinalAnswer): Either.Either<FinalAnswer, string> => {
  const raw = jsonText(text)
  if (raw === undefined) return Either.left("your final answer must be a JSON object")
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch (e) {
    return Either.left(`your final answer is not valid JSON (${(e as Error).message})`)
  }
  return Either.flatMap(
    Either.mapLeft(decode(value), (e) => `your final answer does not match the format: ${ParseResult.TreeFormatter.formatErrorSync(e)}`),
    (own) => {
      const answer = base === undefined ? own : { ...base, ...own }
      return rootCauseOf(answer) === "" ? Either.left("your final answer must state the root_cause") : Either.right(answer)
    }
  )
}

export const rootCauseOf = (answer: FinalAnswer): string => {
  const fromRca = answer.root_cause_analysis?.["summary"]
  return (answer.root_cause ?? (typeof fromRca === "string" ? fromRca : undefined) ?? answer.summary ?? "").trim()
}
