/**
 * The K8s contract: one suite, run against the in-memory layer and against the live layer talking to the dev API
 * server. Each test builds a fresh layer (and server), so faults and state never leak between tests.
 */
import { describe } from "@effect/vitest"
import { Effect } from "effect"
import { clusterCases } from "./ContractCluster.ts"
import { crudCases } from "./ContractCrud.ts"
import { faultCases } from "./ContractFaults.ts"
import type { Using } from "./ContractKit.ts"
import { watchCases } from "./ContractWatch.ts"
import type { MakeLayer } from "./Harness.ts"

export { rr } from "./ContractKit.ts"

export const k8sContract = (name: string, makeLayer: MakeLayer) =>
  describe(`K8s contract: ${name}`, () => {
    const using: Using = (options = {}) => (body) => Effect.scoped(body).pipe(Effect.provide(makeLayer(options)))
    crudCases(using)
    watchCases(using)
    faultCases(using)
    clusterCases(using)
  })
