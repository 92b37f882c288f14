/** K8s contract: CR CRUD, status subresource semantics, label selectors. */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { K8s } from "../../src/K8s.ts"
import { names, plural, rr, type Using } from "./ContractKit.ts"
import { K8sHarness, namespace } from "./Harness.ts"

export const crudCases = (using: Using) => {
  const env = using()

  it.live("CRUD with status subresource semantics", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const created = yield* k8s.createCr(plural, rr("a", { app: "x" }, { status: { phase: "Forged" } }))
      expect(created.metadata.namespace).toBe(namespace)
      expect(created.metadata.resourceVersion).toBeTypeOf("string")
      expect(created.metadata.uid).toBeTypeOf("string")
      expect(created.status).toBeUndefined()
      expect((yield* Effect.flip(k8s.createCr(plural, rr("a"))))._tag).toBe("K8sConflict")

      const got = yield* k8s.getCr(plural, "a")
      expect(got.spec).toEqual({ signalName: "a" })

      const patched = yield* k8s.patchCr(plural, "a", { spec: { severity: "high" }, status: { phase: "Hacked" } })
      expect(patched.spec).toEqual({ signalName: "a", severity: "high" })
      expect(patched.status).toBeUndefined()

      const withStatus = yield* k8s.patchCrStatus(plural, "a", { phase: "Processing" })
      expect(withStatus.status).toEqual({ phase: "Processing" })
      expect(withStatus.spec).toEqual({ signalName: "a", severity: "high" })

      const relabelled = yield* k8s.patchCr(plural, "a", { metadata: { labels: { b: "y" } } })
      expect(relabelled.metadata.labels).toEqual({ app: "x", b: "y" })
      expect(relabelled.status).toEqual({ phase: "Processing" })

      // A patch carrying a stale resourceVersion is a lost race the caller must see (not retried as-is).
      const harness = yield* K8sHarness
      const before = yield* harness.count("patch", plural)
      const stale = yield* Effect.flip(
        k8s.patchCr(plural, "a", { metadata: { resourceVersion: created.metadata.resourceVersion }, spec: { x: 1 } })
      )
      expect(stale._tag).toBe("K8sConflict")
      expect(yield* harness.count("patch", plural)).toBe(before + 1)
      const current = yield* k8s.getCr(plural, "a")
      const fresh = yield* k8s.patchCr(plural, "a", {
        metadata: { resourceVersion: current.metadata.resourceVersion },
        spec: { severity: "low" }
      })
      expect(fresh.spec).toEqual({ signalName: "a", severity: "low" })

      yield* k8s.deleteCr(plural, "a")
      expect((yield* Effect.flip(k8s.getCr(plural, "a")))._tag).toBe("K8sNotFound")
      expect((yield* Effect.flip(k8s.deleteCr(plural, "a")))._tag).toBe("K8sNotFound")
      expect((yield* Effect.flip(k8s.patchCr(plural, "a", { spec: {} })))._tag).toBe("K8sNotFound")
      expect((yield* Effect.flip(k8s.patchCrStatus(plural, "a", {})))._tag).toBe("K8sNotFound")
    })))

  it.live("lists with label selectors", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      yield* k8s.createCr(plural, rr("a", { app: "x", tier: "1" }))
      yield* k8s.createCr(plural, rr("b", { app: "x" }))
      yield* k8s.createCr(plural, rr("c", { app: "y" }))
      const all = yield* k8s.listCr(plural)
      expect(names(all.items)).toEqual(["a", "b", "c"])
      expect(all.resourceVersion).not.toBe("")
      expect(names((yield* k8s.listCr(plural, { labelSelector: "app=x" })).items)).toEqual(["a", "b"])
      expect(names((yield* k8s.listCr(plural, { labelSelector: "app=x,tier" })).items)).toEqual(["a"])
      expect(names((yield* k8s.listCr(plural, { labelSelector: "app in (x,y)" })).items)).toEqual(["a", "b", "c"])
      expect(names((yield* k8s.listCr(plural, { labelSelector: "app!=x" })).items)).toEqual(["c"])
      expect(names((yield* k8s.listCr(plural, { fieldSelector: "metadata.name=b" })).items)).toEqual(["b"])
    })))
}
