/**
 * Status pieces rebuilt from the world: each Deployment's readiness, the platform phase they add up to, conditions
 * that keep their `lastTransitionTime` while their status stays, and the merge patch that turns the stored status
 * into the new one (removed fields sent as null).
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { PlatformConditionType, PlatformPhase, PlatformStatus, ServiceStatus } from "@kubemend/core/domain/Platform/index"
import type { RenderedClusterRbac } from "./Rbac.ts"

export interface DeploymentReadiness extends ServiceStatus {
  /** The Deployment controller has not yet seen the current spec, or is still replacing pods. */
  readonly rollingOut: boolean
}

/** Readiness of one Deployment as `kubectl rollout status` sees it. */
export const deploymentReadiness = (name: string, deployment: KubeObject | undefined): DeploymentReadiness => {
  if (deployment === undefined) return { name, ready: false, readyReplicas: 0, desiredReplicas: 1, rollingOut: true }
  const spec = (deployment.spec ?? {}) as { replicas?: number }
  const status = (deployment.status ?? {}) as { observedGeneration?: number; replicas?: number; readyReplicas?: number; updatedReplicas?: number }
  // Under a HorizontalPodAutoscaler the spec leaves replicas to it: the Deployment's current count is desired.
  const desired = spec.replicas ?? status.replicas ?? 1
  const ready = status.readyReplicas ?? 0
  const observed = (status.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 1)
  const updated = status.updatedReplicas ?? ready
  const rollingOut = !observed || updated < desired
  return { name, ready: !rollingOut && ready >= desired, readyReplicas: ready, desiredReplicas: desired, rollingOut }
}

/** Running when every service is ready; Deploying while a rollout is in progress; Degraded when rolled out but not ready. */
export const servicesPhase = (services: ReadonlyArray<DeploymentReadiness>): PlatformPhase =>
  services.every((s) => s.ready) ? "Running" : services.some((s) => !s.ready && s.rollingOut) ? "Deploying" : "Degraded"

export const toServiceStatus = ({ rollingOut: _, ...s }: DeploymentReadiness): ServiceStatus => s

export interface ConditionInput {
  readonly type: PlatformConditionType
  readonly status: "True" | "False" | "Unknown"
  readonly reason: string
  readonly message: string
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** JSON merge patch from `from` to `to` (nested objects recurse, arrays and scalars replace, removed keys -> null). */
export const mergePatchOf = (from: Record<string, unknown>, to: Record<string, unknown>): Record<string, unknown> => {
  const patch: Record<string, unknown> = {}
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null
  for (const [key, value] of Object.entries(to)) {
    const old = from[key]
    if (isRecord(old) && isRecord(value)) {
      const sub = mergePatchOf(old, value)
      if (Object.keys(sub).length > 0) patch[key] = sub
    } else if (JSON.stringify(old) !== JSON.stringify(value)) patch[key] = value
  }
  return patch
}

/** The stored status as a plain record (absent -> empty). */
export const storedStatus = (cr: KubeObject): PlatformStatus & Record<string, unknown> =>
  (isRecord(cr.status) ? cr.status : {}) as PlatformStatus & Record<string, unknown>

/** Conditions read off the applied world: deployments, RBAC, tool bindings, automation (checked by the caller), additional roles. */
export const worldConditions = (
  rbac: RenderedClusterRbac,
  readiness: ReadonlyArray<DeploymentReadiness>,
  ansible: ConditionInput
): ReadonlyArray<ConditionInput> => {
  const phase = servicesPhase(readiness)
  const notReady = readiness.filter((s) => !s.ready).map((s) => s.name)
  return [
    {
      type: "ServicesDeployed",
      status: notReady.length === 0 ? "True" : "False",
      reason: phase === "Running" ? "AllReady" : phase === "Deploying" ? "RollingOut" : "NotReady",
      message: notReady.length === 0 ? "every Deployment is ready" : `not ready: ${notReady.join(", ")}`
    },
    {
      type: "RBACProvisioned",
      status: "True",
      reason: "Applied",
      message: `${rbac.clusterRoles.length} ClusterRoles, ${rbac.clusterRoleBindings.length} ClusterRoleBindings, ${rbac.roleBindings.length} RoleBindings`
    },
    rbac.toolBindingNames.length > 0
      ? { type: "ToolRBACBound", status: "True", reason: "Bound", message: `${rbac.toolBindingNames.length} role bindings` }
      : { type: "ToolRBACBound", status: "False", reason: "NoRoleBindings", message: "apiFrontend.rbac.roleBindings is empty: no group may use tools" },
    ansible,
    rbac.additionalRoles.length > 0
      ? { type: "AdditionalRBACBound", status: "True", reason: "Bound", message: rbac.additionalRoles.join(", ") }
      : { type: "AdditionalRBACBound", status: "False", reason: "NoneRequested", message: "no additionalClusterRoleBindings" }
  ]
}
