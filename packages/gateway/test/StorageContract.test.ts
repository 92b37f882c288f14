/**
 * The Storage contract (core `Storage`), run against the real storage service (child process on embedded
 * PostgreSQL, reached over HTTP with a ServiceAccount token) and the memory Storage alike: audit events written in
 * batches of 1..1000, idempotent by id, chained and verified per correlation id, queried by correlation id; workflows
 * registered by content (201, the same content 200, changed content under the same version 409) once their action
 * type exists, discovered by labels, and a context that does not match answers not found.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { NodeHttpClient } from "@effect/platform-node"
import { Storage } from "@kubemend/core/Storage"
import { Infra, InfraLive } from "./support/Harness.ts"
import { namespace } from "./support/Seed.ts"
import { grantStorageClient, startStorage } from "./support/StorageProcess.ts"

const event = (correlation: string, n: number) => ({
  version: "1.0",
  event_type: "apifrontend.tool.executed",
  event_timestamp: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
  event_category: "apifrontend" as const,
  event_action: "executed",
  event_outcome: "success" as const,
  correlation_id: correlation,
  actor_type: "user",
  actor_id: "sre-user",
  event_data: { step: n }
})

const workflowYaml = (version: string, what = "Scales up") => `
apiVersion: kubemend.io/v1alpha1
kind: RemediationWorkflow
metadata: { name: contract-scale-up }
spec:
  version: "${version}"
  actionType: ContractScale
  description: { what: ${what}, whenToUse: CPU saturation }
  labels: { severity: [critical], component: ["*"], environment: [production], priority: P1 }
`

const contract = (name: string, storage: Layer.Layer<Storage, never, Infra>) =>
  layer(InfraLive, { excludeTestServices: true, timeout: "120 seconds" })(`storage contract: ${name}`, (it) => {
    it.layer(storage)((it) => {
      it.effect("audit events: batches, idempotent ids, a verified chain, queries by correlation id", () =>
        Effect.gen(function* () {
          const s = yield* Storage
          assert.strictEqual((yield* Effect.flip(s.writeEvents([])))._tag, "ValidationError")
          const written = yield* s.writeEvents([event("rr-contract-1", 1), event("rr-contract-1", 2)])
          assert.strictEqual(written.eventIds.length, 2)
          assert.isFalse(written.queued)
          // The same event id again is not a second event.
          yield* s.writeEvents([{ ...event("rr-contract-1", 1), event_id: written.eventIds[0]! }])
          const page = yield* s.queryEvents({ correlation_id: "rr-contract-1" })
          assert.strictEqual(page.pagination.total, 2)
          assert.sameMembers(page.data.map((e) => (e.event_data as { step: number }).step), [1, 2])
          assert.isTrue((yield* s.verifyChain("rr-contract-1")).is_valid)
          assert.strictEqual((yield* s.queryEvents({ correlation_id: "rr-contract-none" })).pagination.total, 0)
        }))

      it.effect("workflows: registered by content once the action type exists, 409 on changed content, discovered by labels", () =>
        Effect.gen(function* () {
          const s = yield* Storage
          assert.strictEqual((yield* Effect.flip(s.registerWorkflow({ content: workflowYaml("1.0.0") })))._tag, "ValidationError")
          yield* s.registerActionType({ name: "ContractScale", description: { what: "Scale", whenToUse: "Load" }, registeredBy: "contract" })
          const created = yield* s.registerWorkflow({ content: workflowYaml("1.0.0") })
          assert.isTrue(created.created)
          assert.isFalse((yield* s.registerWorkflow({ content: workflowYaml("1.0.0") })).created)
          assert.strictEqual((yield* Effect.flip(s.registerWorkflow({ content: workflowYaml("1.0.0", "Scales more") })))._tag, "ContentIntegrityViolation")
          assert.strictEqual((yield* s.getWorkflow(created.workflow.workflowId)).workflowId, created.workflow.workflowId)
          const actions = yield* s.listActions({ severity: "critical", environment: "production" })
          assert.deepInclude(actions.actionTypes.map((a) => [a.actionType, a.workflowCount]), ["ContractScale", 1])
          assert.notInclude(yield* Effect.map(s.listActions({ environment: "staging" }), (r) => r.actionTypes.map((a) => a.actionType)), "ContractScale")
          assert.strictEqual((yield* Effect.flip(s.getWorkflow(created.workflow.workflowId, { priority: "P3" })))._tag, "NotFound")
          assert.strictEqual((yield* Effect.flip(s.getWorkflow("00000000-0000-5000-8000-000000000000")))._tag, "NotFound")
        }))
    })
  })

/** The real service, with a ServiceAccount token its TokenReview accepts and the storage-client grant. */
const live = Layer.unwrapScoped(Effect.gen(function* () {
  const { kube } = yield* Infra
  const service = yield* startStorage(kube, namespace)
  grantStorageClient(kube, namespace, "contract")
  const token = kube.registerServiceAccountToken(namespace, "contract")
  return Storage.layer({ baseUrl: service.url, token: Redacted.make(token), retries: 0 }).pipe(Layer.provide(NodeHttpClient.layerUndici))
}))

describe.sequential("storage contract", () => {
  contract("the memory Storage", Storage.layerMemory())
  contract("the storage service", live)
})
