import { assert, describe, it } from "@effect/vitest"
import {
  allToolNames,
  consoleGroups,
  consoleRoleName,
  devkitRbacSpec,
  personaGroup,
  personas,
  personaUser,
  renderRbac,
  toolName,
  toolsFor,
  toolTable
} from "../src/Personas.ts"

describe("Personas", () => {
  it("has the 23 MCP tools of document 1 and the A2A internal tools", () => {
    const mcp = toolTable.filter((t) => t.surface === "mcp")
    assert.strictEqual(mcp.length, 23)
    assert.strictEqual(new Set(mcp.map((t) => toolName("svc", t))).size, 23)
    assert.isTrue(mcp.every((t) => toolName("svc", t).startsWith("svc_")))
    const a2a = toolTable.filter((t) => t.surface === "a2a").map((t) => toolName("svc", t)).sort()
    assert.deepStrictEqual(a2a, [
      "cluster_get",
      "cluster_list",
      "cluster_list_events",
      "get_alert_details",
      "list_alerts",
      "svc_check_existing_remediation",
      "svc_investigate_alert",
      "svc_remediate"
    ])
    assert.strictEqual(allToolNames("svc").length, 31)
    assert.include(allToolNames("kubernaut"), "kubernaut_list_remediations")
    assert.include(allToolNames(""), "list_remediations")
  })

  it("follows document 1's Personas column", () => {
    assert.deepStrictEqual(toolsFor("remediation-approver", "svc"), [
      "svc_approve",
      "svc_await_session",
      "svc_get_approval_request",
      "svc_get_remediation",
      "svc_list_approval_requests",
      "svc_list_remediations",
      "svc_watch"
    ])
    assert.deepStrictEqual(toolsFor("l3-audit", "svc"), [
      "svc_get_audit_trail",
      "svc_get_effectiveness",
      "svc_get_remediation",
      "svc_get_remediation_history",
      "svc_list_remediations",
      "svc_list_workflows"
    ])
    assert.deepStrictEqual(toolsFor("cicd", "svc"), [
      "svc_await_session",
      "svc_get_remediation",
      "svc_list_remediations",
      "svc_watch"
    ])
    assert.deepStrictEqual(toolsFor("observability", "svc"), [
      "svc_await_session",
      "svc_get_effectiveness",
      "svc_get_remediation",
      "svc_list_remediations",
      "svc_list_workflows",
      "svc_watch"
    ])
    assert.notInclude(toolsFor("ai-orchestrator", "svc"), "svc_approve")
    assert.include(toolsFor("ai-orchestrator", "svc"), "cluster_get")
    assert.include(toolsFor("sre", "svc"), "svc_list_alerts")
    assert.include(toolsFor("sre", "svc"), "list_alerts")
    // SRE has every MCP tool except the three approval tools
    const sreMcp = toolTable.filter((t) => t.surface === "mcp" && t.personas.includes("sre"))
    assert.strictEqual(sreMcp.length, 20)
  })

  it("renders tool-<persona> ClusterRoles, a console ClusterRole and the bindings", () => {
    const rbac = renderRbac(devkitRbacSpec({ apiGroup: "kubemend.io", toolPrefix: "svc" }))
    assert.deepStrictEqual(rbac.clusterRoles.map((r) => r.metadata.name), [
      ...personas.map((p) => `tool-${p}`),
      consoleRoleName
    ])
    const approver = rbac.clusterRoles.find((r) => r.metadata.name === "tool-remediation-approver")!
    assert.deepStrictEqual(approver.rules, [{
      apiGroups: ["kubemend.io"],
      resources: ["tools"],
      verbs: ["use"],
      resourceNames: toolsFor("remediation-approver", "svc")
    }])
    const consoleRole = rbac.clusterRoles.find((r) => r.metadata.name === consoleRoleName)!
    assert.deepStrictEqual(consoleRole.rules, [{ apiGroups: ["kubemend.io"], resources: ["console"], verbs: ["use"] }])

    const sreBinding = rbac.clusterRoleBindings.find((b) => b.metadata.name === "tool-sre-0")!
    assert.strictEqual(sreBinding.roleRef.name, "tool-sre")
    assert.deepStrictEqual(sreBinding.subjects, [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "kubemend-sre" }])
    const consoleBinding = rbac.clusterRoleBindings.find((b) => b.metadata.name === consoleRoleName)!
    assert.deepStrictEqual(consoleBinding.subjects.map((s) => s.name), personas.map(personaGroup).sort())
    // the no-console group is bound to the sre tools but not to the console
    assert.isTrue(rbac.clusterRoleBindings.some((b) => b.roleRef.name === "tool-sre" && b.subjects.some((s) => s.name === "kubemend-no-console")))
    assert.strictEqual(personaUser("no-console"), "no-console-user")
  })

  it("console groups: unset = union of roleBindings, a list narrows, empty denies everyone", () => {
    const roleBindings = [{ role: "sre" as const, groups: ["b", "a"] }, { clusterRoleName: "custom", groups: ["c", "a"] }]
    assert.deepStrictEqual(consoleGroups({ roleBindings }), ["a", "b", "c"])
    assert.deepStrictEqual(consoleGroups({ roleBindings, consoleAccessGroups: ["c"] }), ["c"])
    assert.deepStrictEqual(consoleGroups({ roleBindings, consoleAccessGroups: [] }), [])
    const rbac = renderRbac({ apiGroup: "g", toolPrefix: "svc", roleBindings, consoleAccessGroups: [] })
    assert.deepStrictEqual(rbac.clusterRoleBindings.find((b) => b.metadata.name === consoleRoleName)!.subjects, [])
    assert.strictEqual(rbac.clusterRoleBindings.find((b) => b.metadata.name === "custom-1")!.roleRef.name, "custom")
  })
})
