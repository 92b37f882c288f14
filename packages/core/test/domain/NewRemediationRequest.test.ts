import { describe, expect, it } from "vitest"
import { inProgressOn, labelValue, newRemediationRequest, sameTarget, signalFingerprint } from "../../src/domain/NewRemediationRequest.ts"

const checkout = { apiVersion: "apps/v1", kind: "Deployment", name: "checkout", namespace: "shop" }
const rr = (name: string, target: object, phase?: string, created = "2026-12-01T10:00:00Z") => ({
  metadata: { name, creationTimestamp: created },
  spec: { targetResource: target },
  ...(phase === undefined ? {} : { status: { overallPhase: phase } })
})

describe("core's one RemediationRequest constructor", () => {
  it("fingerprints the signal name and the target, as the signals service always has (stored requests keep matching)", () => {
    // Pinned: requests stored before keep their fingerprint, so their history and duplicates still line up.
    expect(signalFingerprint("KubePodCrashLooping", checkout)).toMatch(/^5a361b05e484f2ee[a-f0-9]{48}$/)
    expect(signalFingerprint("KubePodCrashLooping", { ...checkout, apiVersion: "apps/v2" })).toBe(signalFingerprint("KubePodCrashLooping", checkout))
    expect(signalFingerprint("HighLatency", checkout)).not.toBe(signalFingerprint("KubePodCrashLooping", checkout))
  })

  it("writes the same labels and spec for every door; no undefined field reaches the API", () => {
    const made = newRemediationRequest({
      apiGroup: "kubemend.io",
      name: "rr-1",
      door: "a2a",
      signalName: "Disk filling / 92%",
      target: { kind: "Node", name: "worker-1" },
      receivedAt: "2026-12-01T10:00:00.000Z",
      signalType: "alert",
      signalSource: "gateway",
      description: undefined
    })
    expect(made.metadata.labels).toEqual({
      "kubemend.io/signal-fingerprint": made.spec.signalFingerprint.slice(0, 63),
      "kubemend.io/signal": "Disk_filling___92",
      "kubemend.io/source": "a2a"
    })
    expect(made.spec).toEqual({
      signalName: "Disk filling / 92%",
      signalFingerprint: signalFingerprint("Disk filling / 92%", { kind: "Node", name: "worker-1" }),
      severity: "unknown",
      signalType: "alert",
      signalSource: "gateway",
      targetType: "kubernetes",
      targetResource: { kind: "Node", name: "worker-1" },
      firingTime: "2026-12-01T10:00:00.000Z",
      receivedTime: "2026-12-01T10:00:00.000Z"
    })
    expect(labelValue("--a b--")).toBe("a_b")
  })

  it("recognises a request in progress on the target: kinds case-insensitively, the oldest first, ended ones never", () => {
    expect(sameTarget(checkout, { kind: "deployment", name: "checkout", namespace: "shop" })).toBe(true)
    expect(sameTarget(checkout, { ...checkout, namespace: "other" })).toBe(false)
    const requests = [
      rr("done", checkout, "Completed", "2026-12-01T08:00:00Z"),
      rr("newer", checkout, "Analyzing", "2026-12-01T11:00:00Z"),
      rr("older", checkout, undefined, "2026-12-01T09:00:00Z"),
      rr("elsewhere", { ...checkout, name: "cart" }, "Pending", "2026-12-01T07:00:00Z")
    ]
    expect(inProgressOn(requests, checkout)?.metadata.name).toBe("older")
    expect(inProgressOn(requests.slice(0, 1), checkout)).toBeUndefined()
  })
})
