/**
 * One running execution per target, and a cooldown after a workflow completed on it (the orchestrator's routing
 * checks the same before it creates an execution; this is the controller's own guard, decided under a lock so two
 * workers never start two runs on one target). Also the target's spec hash before the run.
 */
import type { TargetResource } from "@kubemend/core/domain/Meta"
import type { K8sService } from "@kubemend/core/K8s"
import { specHash } from "@kubemend/core/SpecHash"
import { Duration, Effect, Option } from "effect"
import { describeTarget, load, loadAll, millisOf, type WorkflowExecution } from "../remediation/Objects.ts"
import { targetOf } from "../remediation/Routing.ts"

export type Hold =
  | { readonly _tag: "Free" }
  | { readonly _tag: "Busy"; readonly by: string }
  | { readonly _tag: "CoolingDown"; readonly until: number; readonly after: string }

/** Whether `we` may start on its target now. */
export const holdOn = (k8s: K8sService, we: WorkflowExecution, now: number, cooldown: Duration.Duration) =>
  Effect.map(loadAll(k8s, "workflowexecutions"), (all): Hold => {
    const others = all.filter((o) => o.metadata.name !== we.metadata.name && o.spec.targetResource === we.spec.targetResource)
    const running = others.find((o) => o.status?.phase === "Running")
    if (running !== undefined) return { _tag: "Busy", by: running.metadata.name }
    const recent = others
      .filter((o) => o.status?.phase === "Completed" && o.spec.workflowRef.workflowId === we.spec.workflowRef.workflowId)
      .map((o) => ({ name: o.metadata.name, until: Option.getOrElse(millisOf(o.status?.completionTime), () => 0) + Duration.toMillis(cooldown) }))
      .filter((o) => now < o.until)
      .sort((a, b) => b.until - a.until)[0]
    return recent === undefined ? { _tag: "Free" } : { _tag: "CoolingDown", until: recent.until, after: recent.name }
  })

/** `namespace/Kind/name` (or `Kind/name`) back into a target; the request's structured target is preferred. */
const parseTarget = (text: string): TargetResource | undefined => {
  const parts = text.split("/")
  if (parts.length === 3) return { kind: parts[1]!, name: parts[2]!, namespace: parts[0]! }
  if (parts.length === 2) return { kind: parts[0]!, name: parts[1]! }
  return undefined
}

/** The target, from the execution's request when it still exists. */
export const targetOfExecution = (k8s: K8sService, we: WorkflowExecution) =>
  Effect.map(
    Effect.orElseSucceed(load(k8s, "remediationrequests", we.spec.remediationRequestRef.name ?? ""), () => Option.none()),
    (rr) => Option.match(rr, { onNone: () => parseTarget(we.spec.targetResource), onSome: targetOf })
  )

/** The target's spec hash now; None when the target cannot be read (gone, or a kind without a spec). */
export const targetSpecHash = (k8s: K8sService, target: TargetResource | undefined) =>
  target === undefined
    ? Effect.succeed(Option.none<string>())
    : k8s.getResource({
      kind: target.kind,
      name: target.name,
      namespace: target.namespace ?? "",
      ...(target.apiVersion === undefined ? {} : { apiVersion: target.apiVersion })
    }).pipe(
      Effect.map((o) => Option.some(specHash(o))),
      Effect.catchAll((e) => Effect.as(Effect.logWarning(`spec hash of ${describeTarget(target)} not captured: ${e._tag}`), Option.none<string>()))
    )
