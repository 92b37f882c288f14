/**
 * The ineffective chain of a signal fingerprint (block reason `IneffectiveChain`): the finished RRs on the fingerprint,
 * newest first, inside `ineffectiveTimeWindow`, that did not fix it for good. An RR counts when its assessment found
 * the remediation ineffective, or when it was `Remediated` yet the signal came back (this RR exists). An undetermined
 * assessment (the target drifted or vanished) neither counts nor breaks the chain; anything else ends it.
 *
 * The verdict is read from the EA's `RemediationEffective` condition, which the monitor writes when it finishes.
 */
import type { K8sService } from "@kubemend/core/K8s"
import { Effect, Option } from "effect"
import type { RemediationRequest } from "./Objects.ts"
import { millisOf } from "./Objects.ts"
import type { Verdict } from "./Verdict.ts"

export const effectiveCondition = "RemediationEffective"

const verdictReasons: Record<string, Verdict> = {
  Effective: "effective",
  Ineffective: "ineffective",
  Undetermined: "undetermined",
  Expired: "expired"
}

export const conditionReason: Record<Verdict, string> = {
  effective: "Effective",
  ineffective: "Ineffective",
  undetermined: "Undetermined",
  expired: "Expired"
}

/** The verdict an EA's status records, if it finished. */
export const verdictOfStatus = (status: unknown): Verdict | undefined => {
  const conditions = (status as { conditions?: ReadonlyArray<{ type?: string; reason?: string }> } | undefined)?.conditions ?? []
  const c = conditions.find((x) => x.type === effectiveCondition)
  return c?.reason === undefined ? undefined : verdictReasons[c.reason]
}

/** What the assessment found, for messages: its reason and the condition's message. */
export const detailOfStatus = (status: unknown): string => {
  const s = status as { assessmentReason?: string; message?: string; conditions?: ReadonlyArray<{ type?: string; message?: string }> } | undefined
  const c = s?.conditions?.find((x) => x.type === effectiveCondition)
  return `${s?.assessmentReason ?? "assessed"}: ${c?.message ?? s?.message ?? ""}`
}

/** Verdicts by RR name (the EA's `spec.correlationID`). */
export const loadVerdicts = (k8s: K8sService) =>
  Effect.map(k8s.listCr("effectivenessassessments"), (list) => {
    const byRr = new Map<string, Verdict>()
    for (const ea of list.items) {
      const rr = (ea.spec as { correlationID?: unknown } | undefined)?.correlationID
      const verdict = verdictOfStatus(ea.status)
      if (typeof rr === "string" && verdict !== undefined) byRr.set(rr, verdict)
    }
    return byRr
  })

/** Length of the chain in `past` (finished RRs on the fingerprint, newest first) that ended at or after `since`. */
export const chainLength = (past: ReadonlyArray<RemediationRequest>, verdicts: ReadonlyMap<string, Verdict>, since: number) => {
  let length = 0
  for (const o of past) {
    const ended = Option.getOrElse(millisOf(o.status?.completedAt ?? o.metadata.creationTimestamp), () => 0)
    if (ended < since) break
    const verdict = verdicts.get(o.metadata.name)
    if (verdict === "undetermined") continue
    if (verdict === "ineffective" || o.status?.outcome === "Remediated") length++
    else break
  }
  return length
}
