/**
 * The execution engines by name, and which of them the settings in force enable: `job` always, `tekton` with
 * `workflowExecution.tekton.enabled`, `ansible` with `ansible.enabled`. An engine that is not enabled is named in the
 * reason the execution fails with.
 */
import { K8s } from "@kubemend/core/K8s"
import { Effect, Either } from "effect"
import { Cluster } from "../runtime/Cluster.ts"
import type { Engine } from "../clients/Engine.ts"
import type { ExecutionSettings } from "../remediation/ExecutionConfig.ts"
import { makeAnsibleEngine } from "./AnsibleEngine.ts"
import { makeJobEngine } from "./JobEngine.ts"
import { makeTektonEngine } from "./TektonEngine.ts"

export class Engines extends Effect.Service<Engines>()("@kubemend/operator/ExecutionEngines", {
  effect: Effect.gen(function* () {
    const cluster = yield* Cluster
    const k8s = yield* K8s
    const job = makeJobEngine(cluster, k8s)
    const all: Readonly<Record<string, Engine>> = { job, tekton: makeTektonEngine(cluster), ansible: makeAnsibleEngine(cluster, k8s.namespace) }

    /** The engine for a new run, or why it cannot run. */
    const enabled = (name: string, settings: ExecutionSettings): Either.Either<Engine, string> => {
      const engine = all[name]
      if (name === "tekton" && !settings.tektonEnabled) {
        return Either.left("execution engine tekton is not enabled (workflowExecution.tekton.enabled is false)")
      }
      if (name === "ansible" && !settings.ansible.enabled) {
        return Either.left("execution engine ansible is not enabled (ansible.enabled is false)")
      }
      return engine === undefined ? Either.left(`execution engine ${name} is not supported`) : Either.right(engine)
    }

    /** The engine a started run used (the job engine for runs that predate the field). */
    const byName = (name: string): Engine => all[name] ?? job

    /** After an execution is deleted: what it started in the workflow namespace goes too. */
    const removeOrphans = (weName: string, settings: ExecutionSettings) =>
      Effect.gen(function* () {
        const selector = `${k8s.apiGroup}/workflow-execution=${weName.slice(0, 63)}`
        const jobs = yield* cluster.list({ apiVersion: "batch/v1", kind: "Job", namespace: settings.workflowNamespace, labelSelector: selector })
        for (const j of jobs.items) yield* cluster.remove({ apiVersion: "batch/v1", kind: "Job", name: j.metadata.name, namespace: settings.workflowNamespace })
        if (!settings.tektonEnabled) return
        const runs = yield* cluster.list({ apiVersion: "tekton.dev/v1", kind: "PipelineRun", namespace: settings.workflowNamespace, labelSelector: selector })
        for (const pr of runs.items) {
          yield* cluster.remove({ apiVersion: "tekton.dev/v1", kind: "PipelineRun", name: pr.metadata.name, namespace: settings.workflowNamespace })
        }
      })

    return { enabled, byName, removeOrphans } as const
  })
}) {}
