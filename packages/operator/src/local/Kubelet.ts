/**
 * The dev API server has no Job or Deployment controllers, so the local platform plays their part: the migration
 * Job succeeds (storage migrates itself when it starts) and a service's Deployment reports ready while its child
 * process answers `/readyz`. The operator then reads the world exactly as it would in a cluster.
 */
import type { DevKube } from "@kubemend/core/devkit/kube/index"
import { Duration, Effect, Schedule } from "effect"
import { namespace } from "./Platform.ts"

const readyOf = async (url: string) => {
  try {
    return (await fetch(url)).status === 200
  } catch {
    return false
  }
}

export const runLocalKubelet = (kube: DevKube, readyz: Readonly<Record<string, string>>) =>
  Effect.promise(async () => {
    for (const job of kube.list("batch/v1", "Job", namespace)) {
      const status = (job["status"] ?? {}) as Record<string, unknown>
      if (status["succeeded"] !== 1) await kube.put({ ...job, status: { ...status, succeeded: 1, completionTime: new Date().toISOString() } })
    }
    for (const deployment of kube.list("apps/v1", "Deployment", namespace)) {
      const service = deployment.metadata.name.replace(/^kubemend-/, "")
      const url = readyz[service]
      if (url === undefined) continue
      const ready = (await readyOf(url)) ? 1 : 0
      const status = (deployment["status"] ?? {}) as Record<string, unknown>
      const generation = deployment.metadata["generation"] ?? 1
      if (status["readyReplicas"] === ready && status["observedGeneration"] === generation) continue
      await kube.put({
        ...deployment,
        status: { ...status, observedGeneration: generation, replicas: 1, updatedReplicas: 1, readyReplicas: ready, availableReplicas: ready }
      })
    }
  }).pipe(Effect.repeat(Schedule.spaced(Duration.seconds(1))), Effect.forkScoped)
