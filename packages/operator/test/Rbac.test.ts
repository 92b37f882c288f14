import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { apiGroup, crName, namespace, platformApiVersion, spec, world } from "./PlatformHarness.ts"

const setLabel = `${apiGroup}/rbac-set`
const countBySet = (roles: ReadonlyArray<{ metadata: { labels?: Record<string, string> } }>) => {
  const counts: Record<string, number> = {}
  for (const r of roles) {
    const set = r.metadata.labels?.[setLabel] ?? "none"
    counts[set] = (counts[set] ?? 0) + 1
  }
  return counts
}

describe("platform RBAC", () => {
  it.live("ClusterRoles: 14 baseline, +2 with monitoring, +6 tool roles, +1 automation with ansible", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle(spec((s) => {
        s.monitoring = { enabled: false }
      }))
      expect(countBySet(w.clusterRoles())).toEqual({ baseline: 14, tool: 6, console: 1 })
      expect(
        w.clusterRoles().filter((r) => r.metadata.labels?.[setLabel] === "baseline")
          .every((r) => r.metadata.name.startsWith(`${namespace}-`))
      ).toBe(true)
      expect(w.clusterRoles().filter((r) => r.metadata.labels?.[setLabel] === "tool").map((r) => r.metadata.name).sort()).toEqual(
        ["tool-ai-orchestrator", "tool-cicd", "tool-l3-audit", "tool-observability", "tool-remediation-approver", "tool-sre"].map((r) => `${namespace}-${r}`)
      )

      w.updateSpec(spec((s) => {
        // Nothing listens there: the automation role is rendered, but AnsibleReady reports the failed check.
        s.ansible = { enabled: true, apiURL: "https://127.0.0.1:1", tokenSecretRef: { name: "ansible-token" } }
      }))
      yield* w.reconcile
      expect(countBySet(w.clusterRoles())).toEqual({ baseline: 14, monitoring: 2, tool: 6, console: 1, automation: 1 })
      expect(w.kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", `${namespace}-alertmanager-view`)).toBeDefined()
      expect(w.kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", `${namespace}-gateway-signal-source`)).toBeDefined()
      expect(w.condition("AnsibleReady")).toMatchObject({ status: "False", reason: "Unreachable" })

      w.updateSpec(spec((s) => {
        s.monitoring = { enabled: false }
      }))
      yield* w.reconcile
      expect(countBySet(w.clusterRoles())).toEqual({ baseline: 14, tool: 6, console: 1 })
      expect(w.condition("AnsibleReady")).toMatchObject({ status: "False" })
    })))

  it.live("the agent's role lists leases; tool roles grant use on their tools", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle()
      const investigator = w.kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", `${namespace}-agent-investigator`) as any
      expect(investigator.rules.some((r: any) => r.apiGroups.includes("coordination.k8s.io") && r.resources.includes("leases") && r.verbs.includes("list")))
        .toBe(true)
      const binding = w.kube.get("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", `${namespace}-agent-investigator-agent`) as any
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "kubemend-agent", namespace }])
      const sre = w.kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", `${namespace}-tool-sre`) as any
      expect(sre.rules[0]).toMatchObject({ apiGroups: [apiGroup], resources: ["tools"], verbs: ["use"] })
      expect(sre.rules[0].resourceNames).toContain("svc_list_remediations")
    })))

  it.live("binds roleBindings groups, console groups as configured, and the agent's additional ClusterRoles", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      w.kube.seed([{
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "custom-tools" },
        rules: [{ apiGroups: [apiGroup], resources: ["tools"], verbs: ["use"] }]
      }, { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "view" }, rules: [] }])
      const binding = (name: string) => w.kube.get("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", name) as any
      const groups = (name: string) => binding(name).subjects.map((s: any) => s.name)

      yield* w.settle(spec((s) => {
        s.apiFrontend.rbac.roleBindings = [
          { role: "sre", groups: ["sre-team"] },
          { clusterRoleName: "custom-tools", groups: ["bots", "ci"] }
        ]
        s.agent.additionalClusterRoleBindings = ["view"]
      }))
      expect(binding(`${namespace}-tool-sre-0`).roleRef.name).toBe(`${namespace}-tool-sre`)
      expect(groups(`${namespace}-tool-sre-0`)).toEqual(["sre-team"])
      expect(binding(`${namespace}-custom-tools-1`).roleRef.name).toBe("custom-tools")
      // consoleAccessGroups unset: the union of the roleBindings groups.
      expect(groups(`${namespace}-console-access`)).toEqual(["bots", "ci", "sre-team"])
      expect(binding(`${namespace}-agent-additional-view`).subjects).toEqual([{ kind: "ServiceAccount", name: "kubemend-agent", namespace }])
      expect(w.status().boundToolRoleBindings).toEqual([`${namespace}-tool-sre-0`, `${namespace}-custom-tools-1`])
      expect(w.status().boundAdditionalClusterRoles).toEqual(["view"])
      expect(w.condition("ToolRBACBound")).toMatchObject({ status: "True" })
      expect(w.condition("AdditionalRBACBound")).toMatchObject({ status: "True" })

      // An explicit list narrows; an explicit empty list denies everyone; a removed roleBinding is unbound.
      w.updateSpec(spec((s) => {
        s.apiFrontend.rbac.roleBindings = [{ role: "sre", groups: ["sre-team"] }]
        s.apiFrontend.rbac.consoleAccessGroups = ["ops"]
      }))
      yield* w.reconcile
      expect(groups(`${namespace}-console-access`)).toEqual(["ops"])
      expect(binding(`${namespace}-custom-tools-1`)).toBeUndefined()
      expect(binding(`${namespace}-agent-additional-view`)).toBeUndefined()
      expect(w.status().boundAdditionalClusterRoles).toEqual([])

      w.updateSpec(spec((s) => {
        s.apiFrontend.rbac.consoleAccessGroups = []
      }))
      yield* w.reconcile
      expect(binding(`${namespace}-console-access`).subjects).toEqual([])
    })))

  it.live("deleting the CR removes its cluster-scoped RBAC through the finalizer", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle(spec((s) => {
        s.ansible = { enabled: true, apiURL: "https://aap.example.com" }
      }))
      expect(w.clusterRoles().length).toBe(24)
      expect(w.clusterRoleBindings().length).toBeGreaterThan(5)
      expect(w.kube.delete(platformApiVersion, "Kubemend", crName, namespace)).toBe(false)
      expect(w.cr()?.metadata.deletionTimestamp).toBeDefined()
      expect(yield* w.reconcile).toEqual({})
      expect(w.clusterRoles()).toEqual([])
      expect(w.clusterRoleBindings()).toEqual([])
      expect(w.cr()).toBeUndefined()
    })))
})
