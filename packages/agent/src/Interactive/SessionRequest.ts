/**
 * The RemediationRequest an interactive selection needs when its session has none yet (an investigation started on
 * the agent directly): made through core's one constructor (door `agent-interactive`). A request another door has in
 * progress on the same target (a signal's, the gateway's) is named to the user instead of making a second one.
 */
import { Clock, Data, Effect } from "effect"
import { inProgressOn, newRemediationRequest } from "@kubemend/core/domain/NewRemediationRequest"
import type { TargetResource } from "@kubemend/core/domain/Meta"
import type { K8sService } from "@kubemend/core/K8s"

/** A request is already in progress on the target (the message names it and its door). */
export class RequestInProgress extends Data.TaggedError("RequestInProgress")<{ readonly message: string; readonly name: string }> {}

export interface SessionAsk {
  /** The name the session reserved for its request. */
  readonly rr: string
  readonly sessionId: string
  readonly signalName: string
  readonly severity: string
  readonly user: string
}

/** Creates the session's request on `target`, or finds that a concurrent call already did. */
export const requestForSession = (k8s: K8sService, ask: SessionAsk, target: TargetResource) =>
  Effect.gen(function* () {
    const other = inProgressOn((yield* k8s.listCr("remediationrequests")).items, target)
    if (other !== undefined && other.metadata.name !== ask.rr) {
      const door = other.metadata.labels?.[`${k8s.apiGroup}/source`] ?? "another door"
      return yield* new RequestInProgress({
        name: other.metadata.name,
        message: `remediation ${other.metadata.name} (from ${door}) is already in progress on ${target.kind}/${target.name}; ` +
          "decide on it, or select again after it ends"
      })
    }
    const now = new Date(yield* Clock.currentTimeMillis).toISOString()
    yield* k8s.createCr(
      "remediationrequests",
      newRemediationRequest({
        apiGroup: k8s.apiGroup,
        name: ask.rr,
        door: "agent-interactive",
        signalName: ask.signalName,
        target,
        receivedAt: now,
        severity: ask.severity,
        signalType: "interactive",
        signalSource: "agent-interactive",
        description: `created by ${ask.user} in an interactive investigation`,
        labels: { [`${k8s.apiGroup}/interactive-session`]: ask.sessionId }
      })
    ).pipe(Effect.catchTag("K8sConflict", () => Effect.void))
  })
