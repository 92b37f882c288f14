/**
 * The platform's `AnsibleReady` condition from a real check: with `ansible.enabled`, the AWX/AAP API at `apiURL` is
 * called with the token (and over the CA) the CR's Secrets hold; only an accepted token makes it True.
 */
import { Duration, Effect } from "effect"
import type { ClusterService } from "../runtime/Cluster.ts"
import type { ConditionInput } from "./Status.ts"
import { awxConnection, awxReachability } from "../clients/Awx.ts"
import { applyExecutionSpec, ExecutionConfig } from "../remediation/ExecutionConfig.ts"

export const ansibleReady = (cluster: ClusterService, namespace: string, spec: unknown): Effect.Effect<ConditionInput> => {
  const ansible = applyExecutionSpec(ExecutionConfig.defaults, spec).ansible
  if (!ansible.enabled) return Effect.succeed({ type: "AnsibleReady", status: "False", reason: "Disabled", message: "ansible.enabled is false" })
  return awxConnection(cluster, namespace, ansible, Duration.seconds(5)).pipe(
    Effect.flatMap(awxReachability),
    Effect.map((r): ConditionInput =>
      r._tag === "Reachable"
        ? {
          type: "AnsibleReady",
          status: "True",
          reason: "Reachable",
          message: `${ansible.apiURL ?? ""} accepts the token${r.user === "" ? "" : ` (as ${r.user})`}`
        }
        : { type: "AnsibleReady", status: "False", reason: r._tag, message: r.message }
    ),
    Effect.catchAll((e) => Effect.succeed<ConditionInput>({ type: "AnsibleReady", status: "False", reason: "Unreachable", message: e.message }))
  )
}
