import { describe, expect, it } from "@effect/vitest"
import type { KubeObject } from "@kubemend/core/K8s"
import { podHealth } from "../src/effectiveness/Health.ts"

const remediatedAt = Date.parse("2026-01-01T12:00:00Z")

const pod = (
  name: string,
  o: { created?: string; ready?: boolean; restarts?: number; lastTerminated?: { reason: string; finishedAt: string }; waiting?: string; phase?: string } = {}
): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, creationTimestamp: o.created ?? "2026-01-01T11:00:00Z" },
  status: {
    phase: o.phase ?? "Running",
    conditions: [{ type: "Ready", status: o.ready === false ? "False" : "True" }],
    containerStatuses: [{
      name: "app",
      restartCount: o.restarts ?? 0,
      ...(o.lastTerminated === undefined ? {} : { lastState: { terminated: o.lastTerminated } }),
      state: o.waiting === undefined ? { running: {} } : { waiting: { reason: o.waiting } }
    }]
  }
})

describe("health component", () => {
  it("all desired replicas ready and no restarts since the remediation: 1.0", () => {
    const h = podHealth([pod("a"), pod("b", { restarts: 9 })], 2, remediatedAt)
    expect(h).toMatchObject({ score: 1, checks: { ready_replicas: 2, total_replicas: 2, readiness_pass: true, restart_delta: 0 } })
  })

  it("counts the restarts of a pod created after the remediation, and one for an older pod's later termination", () => {
    const h = podHealth(
      [
        pod("new", { created: "2026-01-01T12:01:00Z", restarts: 2 }),
        pod("old", { restarts: 14, lastTerminated: { reason: "OOMKilled", finishedAt: "2026-01-01T12:05:00Z" } })
      ],
      2,
      remediatedAt
    )
    expect(h.checks).toMatchObject({ restart_delta: 3, oom_killed: true })
    expect(h.score).toBe(0.5)
    expect(h.details).toContain("OOMKilled since the remediation")
  })

  it("a crash loop, no running pod, or pending pods", () => {
    expect(podHealth([pod("a", { ready: false, waiting: "CrashLoopBackOff" })], 1, remediatedAt)).toMatchObject({ score: 0, checks: { crash_loops: true } })
    expect(podHealth([], 3, remediatedAt)).toMatchObject({ score: 0, checks: { pod_running: false }, details: "0 of 3 replicas ready; no pods" })
    expect(podHealth([pod("a"), pod("b", { phase: "Pending", ready: false })], 2, remediatedAt)).toMatchObject({ score: 0.5, checks: { pending_count: 1 } })
  })
})
