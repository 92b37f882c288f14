/**
 * The `ansible` engine: the workflow's AWX/AAP job template (`engineConfig.jobTemplateName` in `ansible.organizationID`,
 * or `engineConfig.jobTemplateID`) launched with the parameters as `extra_vars`, then its job polled: `successful`
 * completes, `failed`/`error`/`canceled` fail with the job's explanation and the redacted tail of its stdout.
 * Stopping cancels the AWX job. The execution's `executionRef` is the AWX job id.
 */
import { scrubCredentials } from "@kubemend/core/Credentials"
import { Effect } from "effect"
import type { ClusterService } from "../runtime/Cluster.ts"
import { awxCall, awxConnection, type AwxConnection } from "../clients/Awx.ts"
import { type Engine, EngineRejected, EngineUnavailable, type Observation, type RunContext } from "../clients/Engine.ts"

const unavailable = (what: string, status: number, body: unknown) =>
  new EngineUnavailable({ engine: "ansible", message: `${what}: AWX answered ${status} ${JSON.stringify(body).slice(0, 300)}` })

const refused = (what: string, status: number, body: unknown) =>
  new EngineRejected({
    reason: status === 401 || status === 403 ? "Forbidden" : "ConfigurationError",
    message: `${what}: AWX refused it (${status}): ${JSON.stringify(body).slice(0, 300)}`
  })

const templateId = (conn: AwxConnection, engineConfig: Record<string, unknown>) =>
  Effect.gen(function* () {
    if (typeof engineConfig["jobTemplateID"] === "number") return engineConfig["jobTemplateID"]
    const name = engineConfig["jobTemplateName"]
    if (typeof name !== "string" || name === "") {
      return yield* new EngineRejected({ reason: "ConfigurationError", message: "the workflow's engineConfig names no jobTemplateName (or jobTemplateID)" })
    }
    const found = yield* awxCall(conn, "GET", `/api/v2/job_templates/?name=${encodeURIComponent(name)}&organization=${conn.organizationID}`)
    if (found.status >= 500) return yield* unavailable("job template lookup", found.status, found.body)
    if (found.status !== 200) return yield* refused("job template lookup", found.status, found.body)
    const id = found.body?.results?.[0]?.id
    if (typeof id !== "number") {
      return yield* new EngineRejected({ reason: "ConfigurationError", message: `no job template named ${name} in AWX organization ${conn.organizationID}` })
    }
    return id
  })

export const makeAnsibleEngine = (cluster: ClusterService, namespace: string): Engine => {
  const connect = (run: RunContext) => awxConnection(cluster, namespace, run.settings.ansible, run.settings.requestTimeout)

  const stdoutTail = (conn: AwxConnection, id: string, lines: number) =>
    awxCall(conn, "GET", `/api/v2/jobs/${id}/stdout/?format=txt`).pipe(
      Effect.map((a) =>
        a.status === 200 && typeof a.body === "string" ? scrubCredentials(a.body.trimEnd().split("\n").slice(-lines).join("\n"))[0] : undefined
      ),
      Effect.orElseSucceed(() => undefined)
    )

  return {
    name: "ansible",
    start: (run) =>
      Effect.gen(function* () {
        const conn = yield* connect(run)
        const engineConfig = (run.workflow.engineConfig ?? run.we.spec.workflowRef.engineConfig ?? {}) as Record<string, unknown>
        const id = yield* templateId(conn, engineConfig)
        const launched = yield* awxCall(conn, "POST", `/api/v2/job_templates/${id}/launch/`, {
          extra_vars: { ...run.parameters, ACTION_TYPE: run.workflow.actionType, kubemend_workflow_execution: run.we.metadata.name }
        })
        if (launched.status >= 500) return yield* unavailable("launch", launched.status, launched.body)
        if (launched.status !== 201 && launched.status !== 200) return yield* refused(`launch of job template ${id}`, launched.status, launched.body)
        const job = launched.body?.job ?? launched.body?.id
        if (typeof job !== "number") return yield* unavailable("launch", launched.status, launched.body)
        return String(job)
      }),
    observe: (run, id) =>
      Effect.gen(function* () {
        const conn = yield* connect(run)
        const got = yield* awxCall(conn, "GET", `/api/v2/jobs/${id}/`)
        if (got.status === 404) return { _tag: "Gone" } satisfies Observation
        if (got.status !== 200) return yield* unavailable(`job ${id}`, got.status, got.body)
        const status = String(got.body?.status ?? "")
        if (status === "successful") {
          return { _tag: "Succeeded", reason: "successful", message: `AWX job ${id} successful` } satisfies Observation
        }
        if (status === "failed" || status === "error" || status === "canceled") {
          const tail = yield* stdoutTail(conn, id, run.settings.logTailLines)
          const explanation = String(got.body?.job_explanation ?? "")
          return {
            _tag: "Failed",
            reason: status === "canceled" ? "Unknown" : "TaskFailed",
            engineReason: status,
            message: `AWX job ${id} ${status}${explanation === "" ? "" : `: ${explanation}`}`,
            taskName: String(got.body?.name ?? `job ${id}`),
            ...(tail === undefined || tail === "" ? {} : { logTail: tail }),
            wasExecutionFailure: status !== "error"
          } satisfies Observation
        }
        return { _tag: "Running", message: `AWX job ${id} ${status}` } satisfies Observation
      }),
    cancel: (run, id) =>
      Effect.gen(function* () {
        const conn = yield* connect(run)
        const answer = yield* awxCall(conn, "POST", `/api/v2/jobs/${id}/cancel/`)
        // 405: the job already finished and cannot be cancelled.
        if (answer.status >= 500) return yield* unavailable(`cancel of job ${id}`, answer.status, answer.body)
      })
  }
}
