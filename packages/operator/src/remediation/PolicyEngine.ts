/**
 * The two policy decisions of the lifecycle, asked of the engine (`OpaClient`):
 * - `classify`: `data.signalprocessing` (policy.rego) gives environment, priority, criticality and whether the
 *   signal is actionable. When the engine cannot answer (or answers without a field), the built-in rule fills in
 *   (the same as the shipped default policy) and the result says `degraded`.
 * - `approval`: `data.approval` (approval.rego) says whether an analysis needs approval. When the engine cannot
 *   answer, or answers without a boolean `require_approval`, the answer is the safe one: approval required,
 *   counted as degraded on `aianalysis_rego_evaluations_total`. Never auto-approval.
 */
import { Context, Effect, Layer, Option } from "effect"
import { LifecycleMetrics } from "./LifecycleMetrics.ts"
import { OpaClient } from "../clients/OpaClient.ts"

export interface Classification {
  readonly environment: string
  readonly priority: string
  readonly criticality: string
  readonly actionable: boolean
  /** The engine did not answer (fully); built-in values were used. */
  readonly degraded: boolean
  readonly degradedReason?: string
}

export interface ApprovalDecision {
  readonly requireApproval: boolean
  readonly reasons: ReadonlyArray<string>
  readonly degraded: boolean
}

export interface PolicyEngineShape {
  readonly classify: (input: ClassifyInput) => Effect.Effect<Classification>
  readonly approval: (input: Record<string, unknown>) => Effect.Effect<ApprovalDecision>
}

export interface ClassifyInput {
  readonly signal: { readonly severity: string; readonly labels?: Readonly<Record<string, string>> | undefined } & Record<string, unknown>
  readonly kubernetesContext?: { readonly namespace?: { readonly labels: Readonly<Record<string, string>> } | undefined } & Record<string, unknown>
  readonly [key: string]: unknown
}

const priorityBySeverity: Readonly<Record<string, string>> = { critical: "P0", high: "P1", warning: "P2", info: "P3" }
const criticalityByPriority: Readonly<Record<string, string>> = { P0: "Critical", P1: "High", P2: "Medium", P3: "Low" }

const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined)

/** What the shipped policy.rego answers, for when the engine cannot. */
export const builtInClassification = (input: ClassifyInput): Omit<Classification, "degraded"> => {
  const labels = input.signal.labels ?? {}
  const ns = input.kubernetesContext?.namespace?.labels ?? {}
  const priority = text(labels["priority"]) ?? text(ns["kubemend.io/priority"]) ?? priorityBySeverity[input.signal.severity] ?? "P2"
  return {
    environment: text(labels["environment"]) ?? text(ns["kubemend.io/environment"]) ?? text(ns["environment"]) ?? "unknown",
    priority,
    criticality: criticalityByPriority[priority] ?? "Medium",
    actionable: true
  }
}

const record = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {})

export class PolicyEngine extends Context.Tag("@kubemend/operator/PolicyEngine")<PolicyEngine, PolicyEngineShape>() {
  static readonly make = Effect.gen(function* () {
    const opa = yield* OpaClient
    const metrics = yield* LifecycleMetrics
    return PolicyEngine.of({
      classify: (input) =>
        opa.evaluate(["signalprocessing"], input).pipe(
          Effect.map((answer) => {
            const fallback = builtInClassification(input)
            const r = record(Option.getOrUndefined(answer))
            const environment = text(r["environment"])
            const priority = text(r["priority"])
            const criticality = text(r["criticality"])
            const actionable = typeof r["actionable"] === "boolean" ? r["actionable"] : undefined
            const missing = [environment, priority, criticality, actionable].some((x) => x === undefined)
            return {
              environment: environment ?? fallback.environment,
              priority: priority ?? fallback.priority,
              criticality: criticality ?? fallback.criticality,
              actionable: actionable ?? fallback.actionable,
              degraded: missing,
              ...(missing ? { degradedReason: "policy.rego left environment, priority, criticality or actionable undefined" } : {})
            } satisfies Classification
          }),
          Effect.catchTag("PolicyUnavailable", (e) =>
            Effect.succeed({ ...builtInClassification(input), degraded: true, degradedReason: `policy engine unavailable: ${e.detail}` }))
        ),
      approval: (input) =>
        opa.evaluate(["approval"], input).pipe(
          Effect.map((answer): ApprovalDecision => {
            const r = record(Option.getOrUndefined(answer))
            const reasons = Array.isArray(r["reasons"]) ? r["reasons"].filter((x): x is string => typeof x === "string") : []
            return typeof r["require_approval"] === "boolean"
              ? { requireApproval: r["require_approval"], reasons, degraded: false }
              : { requireApproval: true, reasons: ["approval.rego left require_approval undefined; approval is required"], degraded: true }
          }),
          Effect.catchTag("PolicyUnavailable", (e) =>
            Effect.succeed({ requireApproval: true, reasons: [`policy engine unavailable (${e.detail}); approval is required`], degraded: true })),
          Effect.tap((d) =>
            metrics.regoEvaluation(d.requireApproval ? "RequireApproval" : "AutoApprove", d.degraded)
          )
        )
    })
  })

  static readonly layer = Layer.effect(PolicyEngine, PolicyEngine.make)
}
