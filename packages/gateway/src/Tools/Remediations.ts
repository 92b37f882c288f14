/**
 * Cluster tools on RemediationRequests: list, get, cancel. The gateway acts with its own identity in the
 * controller namespace (injected by the K8s layer); callers pass plain RR names.
 */
import { Clock, Effect, Schema } from "effect"
import { canCancel } from "@kubemend/core/domain/Phases"
import { K8s, type KubeObject } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"
import { defineTool } from "../Mcp/Tool.ts"
import { phaseOf } from "../Status/Frames.ts"
import { compact, idOrName, k8sFailure, KindName, optional, record, ResourceName, specOf, statusOf, str, Text } from "./Common.ts"
import { storyOf } from "./RemediationStory.ts"

/** The summary every RR tool shows: `id` is the name other tools take as `rr_id`. */
export const rrView = (rr: KubeObject) => {
  const spec = specOf(rr)
  const target = record(spec.targetResource)
  const kind = str(target.kind) ?? ""
  const name = str(target.name) ?? ""
  const ns = str(target.namespace)
  return {
    id: rr.metadata.name,
    name,
    // The spec's phase names: an original controller's `Executing` shows as `Running`.
    phase: phaseOf(rr),
    kind,
    target: ns === undefined ? `${kind}/${name}` : `${ns}/${kind}/${name}`
  }
}

/** A list row: the summary plus what a console's list shows (severity, age, outcome, block). */
const rrListItem = (rr: KubeObject) => {
  const status = statusOf(rr)
  return compact({
    ...rrView(rr),
    severity: str(specOf(rr).severity),
    created_at: rr.metadata.creationTimestamp,
    outcome: str(status.outcome),
    block_reason: str(status.blockReason),
    blocked_until: str(status.blockedUntil)
  })
}

const rrDetail = (rr: KubeObject) => {
  const spec = specOf(rr)
  const status = statusOf(rr)
  return compact({
    ...rrView(rr),
    signal_name: str(spec.signalName),
    severity: str(spec.severity),
    created_at: rr.metadata.creationTimestamp,
    outcome: str(status.outcome),
    message: str(status.message),
    block_reason: str(status.blockReason),
    block_message: str(status.blockMessage),
    blocked_until: str(status.blockedUntil),
    deduplication: status.deduplication,
    ai_analysis: str(record(status.aiAnalysisRef).name),
    failure_reason: str(status.failureReason)
  })
}

export const RemediationRef = Schema.Struct({ rr_id: optional(ResourceName), name: optional(ResourceName) })

export const remediationTools = Effect.gen(function* () {
  const k8s = yield* K8s

  const getRr = (id: string) => k8s.getCr("remediationrequests", id).pipe(Effect.mapError(k8sFailure(`remediation request ${id}`)))

  /**
   * Cancels on what was read: the patch carries its resourceVersion, so a request that became terminal meanwhile
   * (Completed by the lifecycle, cancelled by someone else) is never rewritten; the re-read answers its phase. A
   * change that left it active is cancelled again on the fresh read. Answers the phase it was cancelled from.
   */
  const cancel = (id: string, user: string, attempt = 1): Effect.Effect<string, ToolError> =>
    Effect.gen(function* () {
      const rr = yield* getRr(id)
      const phase = str(statusOf(rr).overallPhase) ?? "Pending"
      if (!canCancel(phase)) {
        const by = str(statusOf(rr).lastModifiedBy)
        return yield* new ToolError({
          message: `remediation ${id} is already ${phase}${phase === "Cancelled" && by !== undefined ? ` (by ${by})` : ""} and cannot be cancelled`,
          code: "terminal_phase"
        })
      }
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const written = yield* k8s.patchCrStatus("remediationrequests", id, {
        overallPhase: "Cancelled",
        message: `cancelled by ${user}`,
        completedAt: now,
        lastModifiedAt: now,
        lastModifiedBy: user
      }, { resourceVersion: rr.metadata.resourceVersion }).pipe(
        Effect.as(true),
        Effect.catchTag("K8sConflict", () => Effect.succeed(false)),
        Effect.mapError(k8sFailure(`remediation request ${id}`))
      )
      if (written) return phase
      if (attempt >= 3) return yield* new ToolError({ message: `remediation ${id} keeps changing, please retry`, code: "conflict" })
      return yield* cancel(id, user, attempt + 1)
    })

  return [
    defineTool({
      name: "list_remediations",
      description:
        "List active and recent remediations. Optional filters: phase (status.overallPhase; Executing is accepted for Running), kind and name of the target resource.",
      input: Schema.Struct({ phase: optional(Text(64)), kind: optional(KindName), name: optional(Text(253)) }),
      listField: "remediations",
      run: (input) =>
        Effect.gen(function* () {
          const list = yield* k8s.listCr("remediationrequests").pipe(Effect.mapError(k8sFailure("remediation requests")))
          // The original console filters by `Executing`, the spec's `Running`.
          const requested = (input.phase ?? "").trim().toLowerCase()
          const wanted = requested === "executing" ? "running" : requested
          const remediations = list.items
            .map(rrListItem)
            .filter((r) =>
              (wanted === "" || r.phase.toLowerCase() === wanted) &&
              (input.kind === undefined || r.kind.toLowerCase() === input.kind.toLowerCase()) &&
              (input.name === undefined || input.name === "" || r.name === input.name)
            )
            .sort((a, b) => a.id.localeCompare(b.id))
          return { remediations, count: remediations.length }
        })
    }),
    defineTool({
      name: "get_remediation",
      description:
        "Get details of a specific remediation by rr_id (or its alias name), with its analysis's root cause and selected workflow, its execution and its effectiveness scores once they exist.",
      input: RemediationRef,
      run: (input) =>
        Effect.gen(function* () {
          const rr = yield* getRr(yield* idOrName(input, input.rr_id, "rr_id"))
          return { ...rrDetail(rr), ...(yield* storyOf(k8s, rr)) }
        })
    }),
    defineTool({
      name: "cancel_remediation",
      description: "Cancel an active remediation (refused once it is Completed, Failed or Cancelled).",
      input: RemediationRef,
      run: (input, ctx) =>
        Effect.gen(function* () {
          const id = yield* idOrName(input, input.rr_id, "rr_id")
          const phase = yield* cancel(id, ctx.caller.principal.user)
          return { status: "Cancelled", message: `remediation ${id} cancelled (was ${phase})`, rr_id: id }
        })
    })
  ]
})
