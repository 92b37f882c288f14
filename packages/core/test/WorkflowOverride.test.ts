/** What an override resolves to in core's in-memory catalog (the storage API's ids and version rules). */
import { assert, describe, it } from "@effect/vitest"
import { makeMemory } from "@kubemend/core/Storage/Memory"
import { resolveWorkflowOverride, storageCatalog, WorkflowOverrideRefused } from "@kubemend/core/WorkflowOverride"
import { Effect, Either } from "effect"

const doc = (name: string, version = "1.0.0") =>
  `apiVersion: kubemend.io/v1alpha1
kind: RemediationWorkflow
metadata:
  name: "${name}"
spec:
  version: "${version}"
  actionType: ScaleReplicas
  description: { what: Scale, whenToUse: load }
  labels: { severity: ["*"], component: ["*"], environment: ["*"], priority: "*" }
  parameters:
    - { name: TARGET_NAME, type: string, required: true, description: the Deployment }
`

const catalog = Effect.gen(function* () {
  const storage = yield* makeMemory({ actionTypes: [{ name: "ScaleReplicas", description: { what: "Scale", whenToUse: "load" } }] })
  const register = (content: string) => Effect.map(storage.registerWorkflow({ content }), (r) => r.workflow)
  return { storage, register, resolve: (value: string) => Effect.either(resolveWorkflowOverride(storageCatalog(storage), value)) }
})

const refusal = <A, E extends { readonly _tag: string }>(r: Either.Either<A, E>) =>
  Either.match(r, {
    onLeft: (e) => (e instanceof WorkflowOverrideRefused ? [e.reason, e.message] : [e._tag, ""]),
    onRight: () => ["resolved", ""]
  })

describe("workflow override resolution", () => {
  it.effect("a name is its latest version; an id (any case) its entry; neither is unknown", () =>
    Effect.gen(function* () {
      const { register, resolve } = yield* catalog
      const v1 = yield* register(doc("scale-out"))
      const v2 = yield* register(doc("scale-out", "2.0.0"))
      assert.strictEqual(Either.getOrThrow(yield* resolve("scale-out")).workflowId, v2.workflowId)
      assert.strictEqual(Either.getOrThrow(yield* resolve(v1.workflowId.toUpperCase())).version, "1.0.0")
      assert.deepStrictEqual(refusal(yield* resolve("scale-in")), [
        "UnknownWorkflow",
        `workflow override "scale-in" names no RemediationWorkflow in the catalog`
      ])
      assert.deepStrictEqual(refusal(yield* resolve("00000000-0000-5000-8000-000000000000"))[0], "UnknownWorkflow")
    }))

  it.effect("a disabled latest version is refused even when an older version is still active", () =>
    Effect.gen(function* () {
      const { register, resolve, storage } = yield* catalog
      yield* register(doc("scale-out"))
      const v2 = yield* register(doc("scale-out", "2.0.0"))
      yield* storage.disableWorkflow(v2.workflowId, "RemediationWorkflow deleted")
      assert.deepStrictEqual(refusal(yield* resolve("scale-out")), [
        "WorkflowNotActive",
        `workflow override "scale-out": RemediationWorkflow scale-out 2.0.0 is Disabled in the catalog`
      ])
    }))

  it.effect("a value that is one workflow's name and another's id is refused as ambiguous", () =>
    Effect.gen(function* () {
      const { register, resolve } = yield* catalog
      const target = yield* register(doc("scale-out"))
      yield* register(doc(target.workflowId))
      assert.deepStrictEqual(refusal(yield* resolve(target.workflowId)), [
        "AmbiguousWorkflow",
        `workflow override "${target.workflowId}" is both a RemediationWorkflow's name and the catalog id of scale-out`
      ])
    }))
})
