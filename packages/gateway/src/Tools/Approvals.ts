/**
 * Approval tools on RemediationApprovalRequests: list (lower-case `decision` filter matched to the PascalCase
 * status, an empty decision being pending), get, and `svc_approve`, which writes the caller's decision to the
 * status subresource of a Pending RAR and audits it (`user.decision`). A workflow override names a RemediationWorkflow
 * (a catalog id is accepted from older clients and written as the name); one the catalog cannot run is refused
 * before anything is written.
 */
import { Clock, Duration, Effect, Option, Schema } from "effect"
import { formatGoDuration } from "@kubemend/core/Config"
import type { DependencyUnavailable } from "@kubemend/core/Errors"
import { rarDecision } from "@kubemend/core/domain/ApprovalRequest"
import { K8s, type KubeObject } from "@kubemend/core/K8s"
import { resolveWorkflowOverride, type WorkflowCatalog } from "@kubemend/core/WorkflowOverride"
import { ToolError } from "@kubemend/core/ToolError"
import { Breakers } from "../Breakers.ts"
import { GatewayAudit } from "../GatewayAudit.ts"
import { GatewayStorage, type StorageFailure } from "../GatewayStorage.ts"
import { defineTool } from "../Mcp/Tool.ts"
import {
  compact,
  idOrName,
  inControllerNamespace,
  k8sFailure,
  num,
  optional,
  QualifiedName,
  record,
  ResourceName,
  specOf,
  statusOf,
  str,
  Text
} from "./Common.ts"

/** Fresh reads a decision is tried on before the caller is asked to retry. */
const maxDecisionAttempts = 3

const decisionFilters = ["pending", "approved", "rejected", "expired"] as const

/** Time left before `requiredBy` (Go duration), `0s` once it passed. */
const remaining = (requiredBy: string | undefined, now: number) => {
  const at = requiredBy === undefined ? NaN : Date.parse(requiredBy)
  if (Number.isNaN(at)) return { time_remaining: "", expired: false }
  const left = Math.max(0, at - now)
  return { time_remaining: formatGoDuration(Duration.millis(Math.floor(left / 1000) * 1000)), expired: left === 0 }
}

const rarSummary = (rar: KubeObject, now: number) => {
  const spec = specOf(rar)
  const status = statusOf(rar)
  const decision = rarDecision(status as { decision?: string })
  const left = remaining(str(spec.requiredBy), now)
  return {
    name: rar.metadata.name,
    namespace: rar.metadata.namespace ?? "",
    decision,
    remediation_request: str(record(spec.remediationRequestRef).name) ?? "",
    confidence: num(spec.confidence) ?? 0,
    confidence_level: str(spec.confidenceLevel) ?? "",
    time_remaining: decision === "Pending" ? left.time_remaining : "",
    required_by: str(spec.requiredBy) ?? "",
    expired: decision === "Expired" || status.expired === true || (decision === "Pending" && left.expired)
  }
}

const rarDetail = (rar: KubeObject, now: number) => {
  const spec = specOf(rar)
  const status = statusOf(rar)
  const wf = record(spec.recommendedWorkflow)
  const items = (u: unknown) => (Array.isArray(u) ? u.map(record) : [])
  return compact({
    ...rarSummary(rar, now),
    ai_analysis: str(record(spec.aiAnalysisRef).name) ?? "",
    investigation_summary: str(spec.investigationSummary) ?? "",
    why_approval_required: str(spec.whyApprovalRequired) ?? str(spec.reason) ?? "",
    recommended_workflow: { name: str(wf.workflowName) ?? str(wf.workflowId) ?? "", version: str(wf.version) ?? "" },
    recommended_actions: items(spec.recommendedActions).map((a) => ({ action: str(a.action) ?? "", rationale: str(a.rationale) ?? "" })),
    evidence_collected: Array.isArray(spec.evidenceCollected) ? spec.evidenceCollected.filter((e) => typeof e === "string") : [],
    alternatives_considered: items(spec.alternativesConsidered).map((a) => ({
      approach: str(a.approach) ?? "",
      pros_cons: str(a.prosCons) ?? ""
    })),
    decided_by: str(status.decidedBy),
    decided_at: str(status.decidedAt),
    decision_message: str(status.decisionMessage)
  })
}

export const approvalTools = Effect.gen(function* () {
  const k8s = yield* K8s
  const audit = yield* GatewayAudit
  const storage = yield* GatewayStorage
  const { storage: breaker } = yield* Breakers

  const fromStorage = <A>(e: Effect.Effect<A, StorageFailure>) => breaker.run(e, (f) => f.kind === "unavailable")

  /**
   * The active catalog an approver may pick an override from (the approver persona has no `list_workflows`): the
   * latest version of each RemediationWorkflow, whose `name` is what an override names. Storage being down leaves
   * it out rather than failing the request's details.
   */
  const catalog = fromStorage(storage.listWorkflows({ status: "Active", limit: 1000 })).pipe(
    Effect.map((res) =>
      res.workflows.filter((w) => w.isLatestVersion !== false).map((w) => ({
        id: w.workflowId,
        name: w.workflowName,
        version: w.version,
        action_type: w.actionType,
        description: w.description.what
      }))
    ),
    Effect.orElseSucceed(() => undefined)
  )

  const workflows: WorkflowCatalog<StorageFailure | DependencyUnavailable> = {
    named: (name) => Effect.map(fromStorage(storage.listWorkflows({ workflow_name: name, limit: 1000 })), (r) => r.workflows),
    byId: (id) =>
      fromStorage(storage.getWorkflow(id)).pipe(
        Effect.map(Option.some),
        Effect.catchIf((f) => f._tag === "StorageFailure" && f.kind === "not_found", () => Effect.succeed(Option.none()))
      )
  }

  /** The catalog entry an override names, checked before the decision is written. */
  const overrideOf = (value: string) =>
    resolveWorkflowOverride(workflows, value).pipe(
      Effect.mapError((e) =>
        e._tag === "WorkflowOverrideRefused"
          ? new ToolError({ message: e.message, code: "unknown_workflow" })
          : new ToolError({ message: `the workflow catalog cannot be read to check override "${value}", please retry`, code: "storage_unavailable" })
      )
    )

  const getRar = (id: string) => k8s.getCr("remediationapprovalrequests", id).pipe(Effect.mapError(k8sFailure(`approval request ${id}`)))

  /**
   * Writes a decision on what was read: the patch carries the resourceVersion it saw, so of two approvers racing
   * exactly one writes. The other re-reads and is told the truth (decided by whom, or expired); a change that left
   * the request Pending is decided again on the fresh read.
   */
  const decide = (name: string, status: (now: number) => Record<string, unknown>, attempt = 1): Effect.Effect<ReturnType<typeof rarSummary>, ToolError> =>
    Effect.gen(function* () {
      const rar = yield* getRar(name)
      const now = yield* Clock.currentTimeMillis
      const current = rarSummary(rar, now)
      if (current.decision !== "Pending") {
        const by = str(statusOf(rar).decidedBy)
        return yield* new ToolError({
          message: `approval request ${name} is already ${current.decision}${by === undefined ? "" : ` by ${by}`}`,
          code: "already_decided"
        })
      }
      if (current.expired) return yield* new ToolError({ message: `approval request ${name} has expired`, code: "expired" })
      const written = yield* k8s.patchCrStatus("remediationapprovalrequests", name, status(now), { resourceVersion: rar.metadata.resourceVersion }).pipe(
        Effect.as(true),
        Effect.catchTag("K8sConflict", () => Effect.succeed(false)),
        Effect.mapError(k8sFailure(`approval request ${name}`))
      )
      if (written) return current
      if (attempt >= maxDecisionAttempts) {
        return yield* new ToolError({ message: `approval request ${name} keeps changing, please retry`, code: "conflict" })
      }
      return yield* decide(name, status, attempt + 1)
    })

  return [
    defineTool({
      name: "list_approval_requests",
      description: "List remediation approval requests, optionally filtered by decision: pending, approved, rejected or expired (empty means all).",
      input: Schema.Struct({ decision: optional(Text(32)) }),
      listField: "approval_requests",
      run: (input) =>
        Effect.gen(function* () {
          const filter = (input.decision ?? "").trim().toLowerCase()
          if (filter !== "" && !(decisionFilters as ReadonlyArray<string>).includes(filter)) {
            return yield* new ToolError({
              message: `decision must be one of ${decisionFilters.join(", ")} (or empty for all)`,
              code: "invalid_arguments"
            })
          }
          const now = yield* Clock.currentTimeMillis
          const list = yield* k8s.listCr("remediationapprovalrequests").pipe(Effect.mapError(k8sFailure("approval requests")))
          const approval_requests = list.items
            .map((rar) => rarSummary(rar, now))
            .filter((r) => filter === "" || r.decision.toLowerCase() === filter)
            .sort((a, b) => a.required_by.localeCompare(b.required_by) || a.name.localeCompare(b.name))
          return { approval_requests, count: approval_requests.length }
        })
    }),
    defineTool({
      name: "get_approval_request",
      description:
        "Get full details of a specific remediation approval request by rar_id (or its alias name), with the active workflows of the catalog an approval may override the recommendation with.",
      input: Schema.Struct({ rar_id: optional(QualifiedName), name: optional(QualifiedName) }),
      run: (input) =>
        Effect.gen(function* () {
          const id = yield* idOrName(input, input.rar_id, "rar_id")
          const rar = yield* getRar(yield* inControllerNamespace(id, k8s.namespace, "approval request"))
          return compact({ ...rarDetail(rar, yield* Clock.currentTimeMillis), workflow_catalog: yield* catalog })
        })
    }),
    defineTool({
      name: "approve",
      description: "Decide a pending remediation approval request: decision Approved or Rejected, an optional reason and an optional workflow override.",
      input: Schema.Struct({
        rar_name: QualifiedName,
        decision: Text(32),
        reason: optional(Text(4096)),
        workflow_override: optional(ResourceName)
      }),
      run: (qualified, ctx) =>
        Effect.gen(function* () {
          const input = { ...qualified, rar_name: yield* inControllerNamespace(qualified.rar_name, k8s.namespace, "approval request") }
          if (input.decision !== "Approved" && input.decision !== "Rejected") {
            return yield* new ToolError({ message: "decision must be Approved or Rejected", code: "invalid_arguments" })
          }
          if (input.workflow_override !== undefined && input.decision !== "Approved") {
            return yield* new ToolError({ message: "a workflow override goes with decision Approved only", code: "invalid_arguments" })
          }
          const override = input.workflow_override === undefined ? undefined : yield* overrideOf(input.workflow_override)
          const user = ctx.caller.principal.user
          const current = yield* decide(input.rar_name, (now) =>
            compact({
              decision: input.decision,
              decidedBy: user,
              decidedAt: new Date(now).toISOString(),
              decidedVia: "mcp",
              decisionMessage: input.reason,
              // The name, also when an older client sent the catalog id: the CRD's contract.
              workflowOverride: override === undefined
                ? undefined
                : { workflowName: override.workflowName, rationale: `User override via ${ctx.tool}` }
            }))
          yield* audit.emit({
            type: "user.decision",
            outcome: "success",
            userId: user,
            clientIp: ctx.caller.clientIp,
            correlationId: current.remediation_request || input.rar_name,
            data: compact({
              session_id: ctx.sessionId ?? "",
              decision: input.decision,
              workflow_id: override?.workflowId,
              workflow_name: override?.workflowName,
              rar_name: input.rar_name,
              reason: input.reason
            })
          })
          return {
            status: input.decision,
            message: `approval request ${input.rar_name} ${input.decision.toLowerCase()} by ${user}`
          }
        })
    })
  ]
})
