/**
 * The workflow an approval leaves the RR with: the recommendation, or the catalog entry the override names (by
 * RemediationWorkflow name; a catalog id from older clients too). Without storage no workflow runs at all, so the
 * override is carried as given.
 */
import type { RemediationWorkflow } from "@kubemend/core/StorageApi"
import { resolveWorkflowOverride } from "@kubemend/core/WorkflowOverride"
import { Effect } from "effect"
import type { RemediationApprovalRequest } from "../remediation/Objects.ts"
import type { Env } from "../remediation/Transition.ts"

/** The recommended workflow, as the RR's `selectedWorkflowRef`. */
const recommended = (rar: RemediationApprovalRequest) => {
  const w = rar.spec.recommendedWorkflow
  return {
    workflowId: w.workflowId,
    ...(w.version === "" ? {} : { version: w.version }),
    ...(w.workflowName === undefined ? {} : { workflowName: w.workflowName }),
    ...(w.executionBundle === undefined ? {} : { executionBundle: w.executionBundle })
  }
}

const refOf = (w: RemediationWorkflow) => ({
  workflowId: w.workflowId,
  version: w.version,
  workflowName: w.workflowName,
  ...(w.executionBundle === undefined ? {} : { executionBundle: w.executionBundle }),
  ...(w.executionBundleDigest === undefined ? {} : { executionBundleDigest: w.executionBundleDigest })
})

/** The RR's `selectedWorkflowRef` after an approval; fails when the override names nothing the catalog can run. */
export const approvedWorkflow = (env: Env, rar: RemediationApprovalRequest) => {
  const override = rar.status?.workflowOverride?.workflowName
  if (override === undefined || override === "") return Effect.succeed(recommended(rar))
  if (env.catalog === undefined) return Effect.succeed({ workflowId: override, workflowName: override })
  return Effect.map(resolveWorkflowOverride(env.catalog, override), refOf)
}
