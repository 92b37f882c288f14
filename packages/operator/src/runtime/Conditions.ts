/**
 * Kubernetes status conditions as every controller writes them: one per type, in a stable order, and a
 * `lastTransitionTime` that moves only when the condition's status does.
 */
import type { Condition } from "@kubemend/core/domain/Meta"

/** A condition as a reconcile computes it (the time and generation are added on merge). */
export interface ConditionUpdate {
  readonly type: string
  readonly status: "True" | "False" | "Unknown"
  readonly reason: string
  readonly message: string
}

/** Conditions in a stable order; `lastTransitionTime` changes only when a condition's status changes. */
export const mergeConditions = (
  previous: ReadonlyArray<Condition> | undefined,
  next: ReadonlyArray<ConditionUpdate>,
  now: string,
  generation: number | undefined
): ReadonlyArray<Condition> => {
  const byType = new Map((previous ?? []).map((c) => [c.type, c]))
  const updated = new Map(byType)
  for (const c of next) {
    const old = byType.get(c.type)
    updated.set(c.type, {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: old !== undefined && old.status === c.status && old.lastTransitionTime !== undefined ? old.lastTransitionTime : now,
      ...(generation === undefined ? {} : { observedGeneration: generation })
    })
  }
  return [...updated.values()].sort((a, b) => a.type.localeCompare(b.type))
}
