/**
 * An autonomous investigation from incident to IncidentResponse: the tool loop, then the final answer checked
 * (format, workflow in the catalog, parameters against the workflow's schema) with corrections sent back to the
 * model, then owner resolution, detected labels and the alignment verdict. Audit events close every run.
 */
import { Duration, Effect, Either, Exit, Ref } from "effect"
import { message } from "@kubemend/core/Llm"
import type { IncidentResponse } from "@kubemend/core/domain/Incident"
import { AgentConfig } from "../AgentConfig.ts"
import type { InvestigationFailed, Session } from "../Sessions/Session.ts"
import { Alignment } from "./Alignment.ts"
import { answerFormat, type FinalAnswer, parseAnswer, rcaFormat, rootCauseOf, selectionFormat } from "./Answer.ts"
import { Catalog } from "./Catalog.ts"
import { detect } from "./Labels.ts"
import { Loop } from "./Loop.ts"
import { parameterSpecs, selectedParameters, validateParameters } from "./Params.ts"
import { correction, incidentPrompt, rcaSystemPrompt, selectionPrompt, workflowSystemPrompt } from "./Prompt.ts"
import { Audit } from "@kubemend/core/Audit"
import { emit } from "./Report.ts"
import { humanReviewResponse, type ResponseDraft } from "./Result.ts"
import { addWarning, makeRun, type RunState, type TargetRef } from "./Run.ts"
import { Tools } from "./Tools.ts"
import type { HumanReviewReason } from "@kubemend/core/domain/AIAnalysis"
import type { ProposedWorkflow } from "./Answer.ts"
import { K8s } from "@kubemend/core/K8s"

/** `root_cause_analysis.contributing_factors` when the model put them there. */
const factorsOf = (rca: Readonly<Record<string, unknown>> | undefined): Array<string> => {
  const f = rca?.["contributing_factors"]
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === "string") : []
}

type Checked =
  | { readonly _tag: "Valid"; readonly selected: Record<string, unknown> }
  | { readonly _tag: "Invalid"; readonly reason: HumanReviewReason; readonly errors: ReadonlyArray<string>; readonly retry: boolean }

export class Investigator extends Effect.Service<Investigator>()("@kubemend/agent/Investigator", {
  effect: Effect.gen(function* () {
    const config = yield* AgentConfig
    const loop = yield* Loop
    const tools = yield* Tools
    const catalog = yield* Catalog
    const alignment = yield* Alignment
    const k8s = yield* K8s
    const audit = yield* Audit

    /** The incident resource's top owner, when the run has no remediation target yet. */
    const ensureTarget = (run: RunState) =>
      Effect.gen(function* () {
        if (run.remediationTarget !== undefined) return
        const r = run.session.request
        const chain = yield* Effect.option(tools.ownerChain({
          kind: r.resource_kind,
          name: r.resource_name,
          namespace: r.resource_namespace,
          ...(r.resource_api_version === "" ? {} : { apiVersion: r.resource_api_version })
        }))
        if (chain._tag === "Some") {
          run.ownerChain = chain.value
          run.remediationTarget = chain.value[chain.value.length - 1]
        }
      })

    const checkWorkflow = (run: RunState, proposed: ProposedWorkflow) =>
      Effect.gen(function* () {
        const attempt = run.validations.length + 1
        const at = new Date(yield* Effect.clockWith((c) => c.currentTimeMillis)).toISOString()
        const record = (errors: ReadonlyArray<string>) =>
          run.validations.push({ attempt, workflow_id: proposed.workflow_id, is_valid: errors.length === 0, errors, timestamp: at })
        const found = yield* Effect.either(catalog.getWorkflow(proposed.workflow_id))
        if (Either.isLeft(found)) {
          const notFound = found.left._tag === "WorkflowNotFound"
          const errors = [
            notFound
              ? `workflow ${proposed.workflow_id} is not in the catalog; select a workflow_id returned by list_workflows`
              : `the workflow catalog is unavailable (${found.left._tag === "CatalogUnavailable" ? found.left.message : ""})`
          ]
          record(errors)
          return { _tag: "Invalid", reason: "workflow_not_found", errors, retry: notFound } satisfies Checked as Checked
        }
        const w = found.right
        const specs = parameterSpecs(w.parameters)
        yield* ensureTarget(run)
        const parameters = selectedParameters(specs, proposed.parameters ?? {}, run.remediationTarget)
        const errors = validateParameters(specs, parameters)
        record(errors)
        if (errors.length > 0) return { _tag: "Invalid", reason: "parameter_validation_failed", errors, retry: true } as Checked
        return {
          _tag: "Valid",
          selected: {
            workflow_id: w.workflowId,
            name: w.workflowName,
            workflow_name: w.workflowName,
            action_type: w.actionType,
            version: w.version,
            ...(w.executionBundle === undefined ? {} : { execution_bundle: w.executionBundle }),
            execution_engine: w.executionEngine,
            ...(proposed.confidence === undefined ? {} : { confidence: proposed.confidence }),
            ...(proposed.rationale === undefined ? {} : { rationale: proposed.rationale }),
            parameters
          }
        } as Checked
      })

    const draftOf = (run: RunState, answer: FinalAnswer, selected: Record<string, unknown> | undefined, at: Date): ResponseDraft => {
      const rootCause = rootCauseOf(answer)
      const actionable = answer.actionable ?? selected !== undefined
      const review = answer.needs_human_review === true || (actionable && selected === undefined)
      if (answer.confidence === undefined) addWarning(run, "the model gave no confidence; 0 assumed")
      return {
        incident_id: run.session.request.incident_id,
        analysis: answer.analysis ?? rootCause,
        root_cause_analysis: {
          ...answer.root_cause_analysis,
          summary: rootCause,
          ...(answer.severity === undefined ? {} : { severity: answer.severity }),
          contributing_factors: answer.contributing_factors ?? factorsOf(answer.root_cause_analysis)
        },
        root_cause: rootCause,
        confidence: answer.confidence ?? 0,
        timestamp: at.toISOString(),
        investigation_outcome: answer.investigation_outcome ??
          (selected !== undefined ? "workflow_selected" : actionable ? "inconclusive" : "no_action_needed"),
        actionable,
        is_actionable: actionable,
        selected_workflow: selected ?? null,
        needs_human_review: review,
        human_review_reason: review
          ? answer.human_review_reason ?? (actionable && selected === undefined ? "no_matching_workflows" : "investigation_inconclusive")
          : null,
        warnings: run.warnings,
        alternative_workflows: (answer.alternative_workflows ?? []).map((a) => ({
          workflow_id: a.workflow_id,
          confidence: a.confidence ?? 0,
          rationale: a.rationale ?? ""
        })),
        validation_attempts_history: run.validations,
        detected_labels: null,
        alignment_verdict: null
      }
    }

    const now = () => Effect.map(Effect.clockWith((c) => c.currentTimeMillis), (t) => new Date(t))

    type Answered = { readonly _tag: "Answer"; readonly answer: FinalAnswer } | { readonly _tag: "Draft"; readonly draft: ResponseDraft }

    /** Turns until a parsable answer (format corrections sent), or a human-review draft when the run escalates. */
    const answerOf = (run: RunState, base: FinalAnswer | undefined, format: string): Effect.Effect<Answered, InvestigationFailed> =>
      Effect.gen(function* () {
        const request = run.session.request
        let formatErrors = 0
        while (true) {
          const outcome = run.escalation !== undefined
            ? ({ _tag: "Escalated", escalation: run.escalation } as const)
            : yield* loop.untilAnswer(run, config.maxTurns)
          if (outcome._tag === "Escalated") {
            return { _tag: "Draft", draft: humanReviewResponse(request, outcome.escalation.reason, outcome.escalation.summary, run.warnings, yield* now()) }
          }
          const parsed = parseAnswer(outcome.text, base)
          if (Either.isRight(parsed)) return { _tag: "Answer", answer: parsed.right }
          if (++formatErrors > config.answerFormatRetries) {
            addWarning(run, `unusable final answer: ${parsed.left}`)
            return {
              _tag: "Draft",
              draft: humanReviewResponse(request, "llm_parsing_error", outcome.text.trim() || "the model gave no usable answer", run.warnings, yield* now())
            }
          }
          run.messages.push(message.user(correction(parsed.left, format)))
        }
      })

    /** The analysis' remediation target, completed from the cluster (apiVersion; no namespace when cluster-scoped). */
    const targetOf = (run: RunState, t: NonNullable<FinalAnswer["remediation_target"]>) =>
      Effect.gen(function* () {
        const namespace = t.namespace ?? run.session.request.resource_namespace
        const found = yield* Effect.option(k8s.getResource({
          kind: t.kind,
          name: t.name,
          namespace,
          ...(t.api_version === undefined ? {} : { apiVersion: t.api_version })
        }))
        if (found._tag === "None") return { kind: t.kind, name: t.name, namespace, ...(t.api_version === undefined ? {} : { apiVersion: t.api_version }) }
        const o = found.value
        return {
          kind: o.kind ?? t.kind,
          name: t.name,
          ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }),
          ...(o.apiVersion === undefined ? {} : { apiVersion: o.apiVersion })
        } satisfies TargetRef as TargetRef
      })

    const wantsWorkflow = (a: FinalAnswer) =>
      a.selected_workflow === undefined && a.actionable !== false && a.needs_human_review !== true &&
      !["resolved", "no_action_needed", "inconclusive"].includes(a.investigation_outcome ?? "")

    /** Phase two: a fresh conversation with the selection tools (and the workflow_discovery model, when set). */
    const startSelection = (run: RunState, rca: FinalAnswer) =>
      Effect.gen(function* () {
        yield* ensureTarget(run)
        run.messages.length = 0
        run.messages.push(message.system(workflowSystemPrompt), message.user(selectionPrompt(run.session.request, rca, run.remediationTarget)))
        run.toolset = "workflow"
        yield* loop.setPhase(run, "workflow_discovery")
      })

    /** Root cause, then (when a remediation is wanted) workflow selection, then validation with corrections. */
    const decide = (run: RunState): Effect.Effect<ResponseDraft, InvestigationFailed> =>
      Effect.gen(function* () {
        const first = yield* answerOf(run, undefined, rcaFormat)
        if (first._tag === "Draft") return first.draft
        let answer = first.answer
        if (answer.remediation_target !== undefined) run.remediationTarget = yield* targetOf(run, answer.remediation_target)
        let base: FinalAnswer | undefined
        let format = answerFormat
        if (wantsWorkflow(answer)) {
          // The selection decides the outcome (workflow_selected or not), so the analysis' own outcome is dropped.
          const { investigation_outcome: _outcome, ...analysis } = answer
          base = analysis
          format = selectionFormat
          yield* startSelection(run, analysis)
          const second = yield* answerOf(run, base, format)
          if (second._tag === "Draft") return second.draft
          answer = second.answer
        }
        while (true) {
          if (answer.selected_workflow === undefined || answer.selected_workflow === null) {
            return draftOf(run, answer, undefined, yield* now())
          }
          yield* loop.setPhase(run, "validation")
          const checked = yield* checkWorkflow(run, answer.selected_workflow)
          if (checked._tag === "Valid") return draftOf(run, answer, checked.selected, yield* now())
          if (!checked.retry || run.validations.length >= config.parameterValidationAttempts) {
            for (const e of checked.errors) addWarning(run, e)
            const draft = draftOf(run, { ...answer, selected_workflow: null, actionable: true }, undefined, yield* now())
            return { ...draft, needs_human_review: true, human_review_reason: checked.reason }
          }
          run.messages.push(message.user(correction(
            `the selected workflow ${answer.selected_workflow.workflow_id} is not valid: ${checked.errors.join("; ")}`,
            format
          )))
          const next = yield* answerOf(run, base, format)
          if (next._tag === "Draft") return next.draft
          answer = next.answer
        }
      })

    /** Owner resolution (when the model did not do it), detected labels and the verdict. */
    const finalize = (run: RunState, draft: ResponseDraft) =>
      Effect.gen(function* () {
        yield* ensureTarget(run)
        const target = run.remediationTarget
        if (target !== undefined) {
          draft.root_cause_analysis = { ...draft.root_cause_analysis, remediation_target: target }
          const labels = yield* detect(k8s, target, run.ownerChain).pipe(
            Effect.timeout(Duration.seconds(10)),
            Effect.option
          )
          if (labels._tag === "Some") draft.detected_labels = labels.value
        }
        if (alignment.enabled) draft.alignment_verdict = alignment.verdict(run)
        return draft as IncidentResponse
      })

    const report = (run: RunState, exit: Exit.Exit<IncidentResponse, InvestigationFailed>) =>
      Effect.gen(function* () {
        const s = yield* Ref.get(run.session.state)
        const r = run.session.request
        const base = { correlationId: r.remediation_id, namespace: r.resource_namespace }
        const outcome = Exit.isSuccess(exit) ? "success" as const : "failure" as const
        yield* emit(audit, {
          ...base,
          type: "alignment_verdict",
          action: "alignment_checked",
          outcome: "success",
          data: { session_id: run.session.id, incident_id: r.incident_id, ...alignment.verdict(run) }
        })
        yield* emit(audit, {
          ...base,
          type: "response.complete",
          action: "response_complete",
          outcome,
          data: {
            session_id: run.session.id,
            incident_id: r.incident_id,
            total_prompt_tokens: s.promptTokens,
            total_completion_tokens: s.completionTokens,
            turns: run.turns,
            tool_calls: run.totalToolCalls,
            ...(Exit.isSuccess(exit)
              ? { needs_human_review: exit.value.needs_human_review, investigation_outcome: exit.value.investigation_outcome }
              : {})
          }
        })
      })

    const investigate = (session: Session): Effect.Effect<IncidentResponse, InvestigationFailed> =>
      Effect.suspend(() => {
        const prompt = incidentPrompt(session.request)
        const run = makeRun(session, [message.system(rcaSystemPrompt), message.user(prompt)])
        run.toolset = "rca"
        return Effect.gen(function* () {
          yield* alignment.review(run, { kind: "signal_input", content: prompt })
          return yield* finalize(run, yield* decide(run))
        }).pipe(Effect.onExit((exit) => report(run, exit)))
      }).pipe(Effect.withSpan("Investigator.investigate", { attributes: { session_id: session.id } }))

    return { investigate, report } as const
  })
}) {}
