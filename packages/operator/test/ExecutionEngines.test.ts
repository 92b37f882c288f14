/**
 * The `tekton` and `ansible` engines against the dev API server (serving tekton.dev/v1 PipelineRuns from their CRD,
 * as a cluster with Tekton installed does) and a fake AWX over HTTPS written here: the PipelineRun created from the
 * bundle and read back through its Succeeded condition, deleted on cancellation; the AWX job template launched with
 * the token and CA from Secrets, polled to success or failure (stdout tail redacted), cancelled; reachability.
 */
import { describe, expect, it } from "@effect/vitest"
import { generateTls } from "@kubemend/devkit/kube/Tls"
import { Duration, Effect } from "effect"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import { awxReachability } from "../src/clients/Awx.ts"
import { execution, namespace, remediationRequest, workflowDoc, workflows, world } from "./ExecutionHarness.ts"

const pipelineRunCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "pipelineruns.tekton.dev" },
  spec: {
    group: "tekton.dev",
    scope: "Namespaced",
    names: { plural: "pipelineruns", singular: "pipelinerun", kind: "PipelineRun", shortNames: ["pr"] },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      subresources: { status: {} },
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
    }]
  }
}

type Obj = Record<string, any>

describe("workflow execution: tekton engine", () => {
  it.scoped("a PipelineRun from the bundle; its Succeeded condition completes or fails the execution; cancellation deletes it", () =>
    Effect.gen(function* () {
      const w = yield* world({ tektonEnabled: true }, [pipelineRunCrd])
      const id = yield* w.register(workflowDoc({ name: "rollback-pipeline", engine: "tekton", extra: "    engineConfig:\n      pipelineName: rollback\n" }))
      const pr = (name: string) => w.kube.get("tekton.dev/v1", "PipelineRun", name, workflows) as Obj | undefined
      const succeeded = (name: string, status: "True" | "False", reason: string, message: string) => {
        const run = pr(name)!
        w.kube.put({
          ...run,
          status: { conditions: [{ type: "Succeeded", status, reason, message }], childReferences: [{ name: `${name}-rollback`, kind: "TaskRun" }] }
        })
      }

      yield* w.create(remediationRequest("rr-t", "checkout"))
      yield* w.create(execution("we-t", "rr-t", "checkout", id))
      yield* w.reconcile("we-t")
      expect(pr("we-t")).toMatchObject({
        metadata: { labels: { "kubemend.io/workflow-execution": "we-t", "kubemend.io/remediation-request": "rr-t" } },
        spec: {
          pipelineRef: {
            resolver: "bundles",
            params: [
              { name: "bundle", value: `ghcr.io/kubemend/rollback-pipeline@sha256:${"ab".repeat(32)}` },
              { name: "name", value: "rollback" },
              { name: "kind", value: "pipeline" }
            ]
          },
          params: expect.arrayContaining([{ name: "TARGET_NAME", value: "checkout" }, { name: "ACTION_TYPE", value: "RollbackDeployment" }]),
          taskRunTemplate: { serviceAccountName: "rollback-runner" },
          timeouts: { pipeline: "10m" }
        }
      })
      expect(w.we("we-t")!.status).toMatchObject({ phase: "Running", executionEngine: "tekton", executionRef: { name: "we-t" } })
      succeeded("we-t", "True", "Succeeded", "Tasks Completed: 1 (Failed: 0, Cancelled 0), Skipped: 0")
      yield* w.reconcile("we-t")
      expect(w.we("we-t")!.status).toMatchObject({
        phase: "Completed",
        executionStatus: { status: "True", reason: "Succeeded", completedTasks: 1, totalTasks: 1 }
      })

      yield* w.create(execution("we-t2", "rr-t2", "cart", id))
      yield* w.reconcile("we-t2")
      succeeded("we-t2", "False", "Failed", "Tasks Completed: 1 (Failed: 1, Cancelled 0)")
      yield* w.reconcile("we-t2")
      expect(w.we("we-t2")!.status).toMatchObject({
        phase: "Failed",
        failureDetails: { reason: "TaskFailed", wasExecutionFailure: true },
        executionStatus: { status: "False", reason: "Failed" }
      })

      w.kube.delete("tekton.dev/v1", "PipelineRun", "we-t2", workflows)
      yield* w.create(execution("we-t3", "rr-t3", "cart", id))
      yield* w.reconcile("we-t3")
      expect(pr("we-t3")).toBeDefined()
      const we = w.we("we-t3")!
      w.kube.put({ ...we, status: { ...we.status, phase: "Failed", failureReason: "parent remediation Cancelled" } })
      yield* w.reconcile("we-t3")
      expect(pr("we-t3")).toBeUndefined()
    }), { timeout: 90_000 })
})

interface FakeAwx {
  readonly url: string
  readonly caPem: string
  readonly launches: Array<{ readonly template: string; readonly auth: string | undefined; readonly body: Obj }>
  readonly cancels: Array<string>
  readonly jobs: Map<string, { status: string; stdout: string; explanation?: string }>
}

/** AWX's v2 API as the engine uses it: me, job template lookup, launch, job, stdout, cancel. */
const fakeAwx = Effect.gen(function* () {
  const tls = yield* Effect.promise(() => generateTls(["127.0.0.1"]))
  const state = { launches: [] as FakeAwx["launches"], cancels: [] as Array<string>, jobs: new Map() as FakeAwx["jobs"], next: 77 }
  const server = yield* Effect.acquireRelease(
    Effect.async<Https.Server>((resume) => {
      const s = Https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
        let body = ""
        req.on("data", (c) => (body += c))
        req.on("end", () => {
          const send = (status: number, payload: unknown, type = "application/json") => {
            res.writeHead(status, { "content-type": type })
            res.end(typeof payload === "string" ? payload : JSON.stringify(payload))
          }
          if (req.headers.authorization !== "Bearer awx-token") return send(401, { detail: "Authentication credentials were not provided." })
          const url = new URL(req.url ?? "/", "https://awx")
          const path = url.pathname
          if (req.method === "GET" && path === "/api/v2/me/") return send(200, { count: 1, results: [{ username: "kubemend" }] })
          if (req.method === "GET" && path === "/api/v2/job_templates/") {
            const found = url.searchParams.get("name") === "restart-service" && url.searchParams.get("organization") === "3"
            return send(200, { count: found ? 1 : 0, results: found ? [{ id: 12, name: "restart-service" }] : [] })
          }
          let m = /^\/api\/v2\/job_templates\/(\d+)\/launch\/$/.exec(path)
          if (req.method === "POST" && m !== null) {
            const job = String(state.next++)
            state.launches.push({ template: m[1]!, auth: req.headers.authorization, body: JSON.parse(body) })
            state.jobs.set(job, { status: "pending", stdout: "" })
            return send(201, { job: Number(job), id: Number(job), status: "pending" })
          }
          m = /^\/api\/v2\/jobs\/(\d+)\/(stdout\/|cancel\/)?$/.exec(path)
          const job = m === null ? undefined : state.jobs.get(m[1]!)
          if (m === null || job === undefined) return send(404, { detail: "Not found." })
          if (m[2] === "stdout/") return send(200, job.stdout, "text/plain")
          if (m[2] === "cancel/" && req.method === "POST") {
            state.cancels.push(m[1]!)
            job.status = "canceled"
            return send(202, {})
          }
          return send(200, { id: Number(m[1]), name: "restart-service", status: job.status, job_explanation: job.explanation ?? "" })
        })
      })
      s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
    }),
    (s) =>
      Effect.async<void>((resume) => {
        s.close(() => resume(Effect.void))
        s.closeAllConnections()
      })
  )
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caPem: tls.caPem, ...state } satisfies FakeAwx
})

const secret = (name: string, key: string, value: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace },
  data: { [key]: Buffer.from(value).toString("base64") }
})

describe("workflow execution: ansible engine", () => {
  it.scoped(
    "launches the job template with the Secret's token over the Secret's CA, polls it, fails with a redacted stdout tail, cancels",
    () =>
      Effect.gen(function* () {
        const awx = yield* fakeAwx
        const ansible = {
          enabled: true,
          apiURL: awx.url,
          organizationID: 3,
          tokenSecretRef: { name: "awx", key: "token" },
          caCertSecretRef: { name: "awx-ca", key: "ca.crt" }
        }
        const w = yield* world({ ansible }, [secret("awx", "token", "awx-token"), secret("awx-ca", "ca.crt", awx.caPem)])
        const id = yield* w.register(
          workflowDoc({ name: "restart-service", engine: "ansible", extra: "    engineConfig:\n      jobTemplateName: restart-service\n" })
        )

        yield* w.create(execution("we-a", "rr-a", "checkout", id))
        yield* w.reconcile("we-a")
        expect(awx.launches).toEqual([{
          template: "12",
          auth: "Bearer awx-token",
          body: {
            extra_vars: {
              TARGET_NAME: "checkout",
              TARGET_NAMESPACE: "shop",
              TO_REVISION: "1",
              ACTION_TYPE: "RollbackDeployment",
              kubemend_workflow_execution: "we-a"
            }
          }
        }])
        expect(w.we("we-a")!.status).toMatchObject({ phase: "Running", executionEngine: "ansible", executionRef: { name: "77" } })
        awx.jobs.get("77")!.status = "running"
        yield* w.reconcile("we-a")
        expect(w.we("we-a")!.status!["phase"]).toBe("Running")
        awx.jobs.get("77")!.status = "successful"
        yield* w.reconcile("we-a")
        expect(w.we("we-a")!.status).toMatchObject({ phase: "Completed", executionStatus: { status: "True", reason: "successful" } })

        yield* w.create(execution("we-b", "rr-b", "cart", id))
        yield* w.reconcile("we-b")
        Object.assign(awx.jobs.get("78")!, {
          status: "failed",
          explanation: "",
          stdout: "TASK [restart] ***\nfatal: [web1]: FAILED! login token=s3cr3t-value refused\nPLAY RECAP"
        })
        yield* w.reconcile("we-b")
        const failed = w.we("we-b")!.status!
        expect(failed).toMatchObject({
          phase: "Failed",
          failureDetails: { reason: "TaskFailed", wasExecutionFailure: true },
          executionStatus: { reason: "failed" }
        })
        expect(failed["failureDetails"].logTail).toContain("FAILED!")
        expect(failed["failureDetails"].logTail).not.toContain("s3cr3t-value")

        yield* w.create(execution("we-c", "rr-c", "cart", id))
        yield* w.reconcile("we-c")
        const we = w.we("we-c")!
        w.kube.put({ ...we, status: { ...we.status, phase: "Failed", failureReason: "parent remediation Cancelled" } })
        yield* w.reconcile("we-c")
        expect(awx.cancels).toEqual(["79"])

        const missing = yield* w.register(workflowDoc({ name: "no-template", engine: "ansible", extra: "    engineConfig:\n      jobTemplateName: nope\n" }))
        yield* w.create(execution("we-d", "rr-d", "cart", missing))
        yield* w.reconcile("we-d")
        expect(w.we("we-d")!.status).toMatchObject({ phase: "Failed", failureDetails: { reason: "ConfigurationError" } })
        expect(w.we("we-d")!.status!["failureReason"]).toBe("no job template named nope in AWX organization 3")
      }),
    { timeout: 90_000 }
  )

  it.scoped("reachability: the token accepted over the CA is Reachable; a wrong token Unauthorized; no CA Unreachable", () =>
    Effect.gen(function* () {
      const awx = yield* fakeAwx
      const conn = { baseUrl: awx.url, token: "awx-token", ca: awx.caPem, organizationID: 1, timeout: Duration.seconds(5) }
      expect(yield* awxReachability(conn)).toEqual({ _tag: "Reachable", user: "kubemend" })
      expect((yield* awxReachability({ ...conn, token: "wrong" }))._tag).toBe("Unauthorized")
      expect((yield* awxReachability({ ...conn, ca: undefined }))._tag).toBe("Unreachable")
    }))
})
