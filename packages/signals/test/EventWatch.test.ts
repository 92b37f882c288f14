/** Warning events watched through the dev API server's watch (all namespaces), filtered by the reason allow-list. */
import { describe, expect, it } from "@effect/vitest"
import type { DevKube } from "@kubemend/devkit/kube/index"
import { Effect } from "effect"
import { SignalsConfig } from "../src/SignalsConfig.ts"
import { startKube, startSignals } from "./Harness.ts"

const event = (name: string, reason: string, type = "Warning") => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace: "shop" },
  involvedObject: { kind: "Pod", name: "checkout-7d9f-abcde", namespace: "shop", apiVersion: "v1" },
  reason,
  message: `${reason} happened`,
  type,
  count: 1,
  firstTimestamp: "2026-11-26T01:00:00Z"
})

const requests = (kube: DevKube) => kube.list("kubemend.io/v1alpha1", "RemediationRequest", "kubemend-system")

const until = (check: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50))
    if (!check()) throw new Error("condition not reached")
  })

describe("Kubernetes event watch", () => {
  it.scopedLive("an allowed Warning event becomes a request; its repeats fold into it; Normal and other reasons do not", () =>
    Effect.gen(function* () {
      const { kube } = yield* startKube
      yield* startSignals(kube, { events: { ...SignalsConfig.defaults.events, enabled: true } })
      kube.put(event("checkout.normal", "Pulled", "Normal"))
      kube.put(event("checkout.pulled", "FailedPull"))
      kube.put(event("checkout.oom", "OOMKilling"))
      yield* until(() => requests(kube).length === 1)
      const rr = requests(kube)[0]!
      expect(rr.spec).toMatchObject({
        signalName: "OOMKilling",
        severity: "high",
        signalSource: "kubernetes",
        targetResource: { kind: "Deployment", name: "checkout" }
      })
      // The kubelet counting a repeat (MODIFIED) is the same remediation.
      kube.put({ ...event("checkout.oom", "OOMKilling"), count: 2 })
      yield* until(() => ((requests(kube)[0] as any).status?.deduplication?.occurrenceCount ?? 0) === 2)
      expect(requests(kube)).toHaveLength(1)
    }))
})
