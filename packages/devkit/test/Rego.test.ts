/**
 * The in-process Rego subset: what the shipped policies use evaluates as OPA would, and what it does not support is
 * refused when loaded (or evaluated) instead of being ignored.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { RegoEvalError, RegoPolicies, RegoSyntaxError } from "../src/Rego.ts"

const policyDir = Path.resolve(import.meta.dirname, "..", "..", "operator", "policies")
const shipped = (file: string) => Fs.readFileSync(Path.join(policyDir, file), "utf8")

const load = (modules: Record<string, string>) => {
  const p = new RegoPolicies()
  for (const [id, text] of Object.entries(modules)) p.put(id, text)
  return p
}

describe("Rego subset", () => {
  it("the shipped classification: alert labels, then namespace labels, then severity", () => {
    const p = load({ "policy.rego": shipped("policy.rego") })
    const context = (ns: Record<string, string>, workload: Record<string, string> = {}) => ({
      namespace: { name: "shop", labels: ns },
      workload: { kind: "Deployment", name: "checkout", labels: workload }
    })
    expect(p.evaluate(["signalprocessing"], { signal: { severity: "critical", labels: {} }, kubernetesContext: context({}) })).toMatchObject({
      environment: "unknown",
      priority: "P0",
      criticality: "Critical",
      actionable: true
    })
    expect(p.evaluate(["signalprocessing"], {
      signal: { severity: "warning", labels: { environment: "staging" } },
      kubernetesContext: context({ environment: "production", "kubemend.io/priority": "P1" }, { "kubemend.io/criticality": "Low" })
    })).toMatchObject({ environment: "staging", priority: "P1", criticality: "Low" })
    expect(
      p.evaluate(["signalprocessing", "environment"], { signal: { severity: "info", labels: {} }, kubernetesContext: context({ environment: "production" }) })
    ).toBe("production")
    // Unknown severity, no labels: the defaults.
    expect(p.evaluate(["signalprocessing"], { signal: { severity: "odd" } })).toMatchObject({ environment: "unknown", priority: "P2", criticality: "Medium" })
  })

  it("the shipped approval: threshold and human review, with reasons", () => {
    const p = load({ "approval.rego": shipped("approval.rego") })
    expect(p.evaluate(["approval"], { confidence: 0.9, threshold: 0.8 })).toEqual({ require_approval: false, reasons: [] })
    expect(p.evaluate(["approval"], { confidence: 0.5, threshold: 0.8 })).toEqual({
      require_approval: true,
      reasons: ["confidence 0.5 is below the auto-approval threshold 0.8"]
    })
    expect(p.evaluate(["approval", "require_approval"], { confidence: 0.95, threshold: 0.8, needsHumanReview: true, humanReviewReason: "low_confidence" }))
      .toBe(true)
  })

  it("iteration, some-in, not, comprehensions, sets and partial objects", () => {
    const p = load({
      "x.rego": `package x
import rego.v1

risky contains name if {
  some name, w in input.workloads
  w.replicas < 2
}
protected[name] := true if {
  w := input.workloads[name]
  w.pdb
}
any_prod if input.envs[_] == "production"
no_prod if not any_prod
names := [n | some n, _ in input.workloads]
total := sum([w.replicas | some w in input.workloads])
shared := {"a", "b"} & {"b", "c"}
label := sprintf("%s/%d", ["ns", 3])
`
    })
    const input = { workloads: { api: { replicas: 1, pdb: true }, web: { replicas: 3 } }, envs: ["dev", "production"] }
    expect(p.evaluate(["x"], input)).toEqual({
      risky: ["api"],
      protected: { api: true },
      any_prod: true,
      names: ["api", "web"],
      total: 4,
      shared: ["b"],
      label: "ns/3"
    })
    expect(p.evaluate(["x", "no_prod"], { workloads: {}, envs: ["dev"] })).toBe(true)
    expect(p.evaluate(["x", "any_prod"], { workloads: {}, envs: ["dev"] })).toBeUndefined()
  })

  it("data references across packages, and a policy that requires approval in production", () => {
    const p = load({
      "approval.rego": `package approval
import rego.v1
default require_approval := false
require_approval if input.confidence < 0.8
require_approval if data.envs.production[input.environment]
`,
      "envs.rego": `package envs
production := {"production": true, "prod": true}
`
    })
    expect(p.evaluate(["approval", "require_approval"], { confidence: 0.99, environment: "prod" })).toBe(true)
    expect(p.evaluate(["approval", "require_approval"], { confidence: 0.99, environment: "staging" })).toBe(false)
  })

  it("refuses what it does not support, and conflicting values, with a message naming the place", () => {
    const p = new RegoPolicies()
    expect(() => p.put("f.rego", "package f\nf(x) := x + 1\n")).toThrow(RegoSyntaxError)
    expect(() => p.put("e.rego", "package e\nok if {\n  every x in input { x }\n}\n")).toThrow(/e.rego:3:\d+: rego_parse_error: "every" is not supported/)
    expect(() => p.put("s.rego", "package s\nx := \"open\n")).toThrow(/non-terminated string/)
    expect(() => p.put("n.rego", "x := 1\n")).toThrow(/starts with a package/)
    p.put("c.rego", "package c\nv := 1 if input.a\nv := 2 if input.b\n")
    expect(p.evaluate(["c", "v"], { a: true })).toBe(1)
    expect(() => p.evaluate(["c", "v"], { a: true, b: true })).toThrow(RegoEvalError)
    p.put("u.rego", "package u\nv := nowhere\n")
    expect(() => p.evaluate(["u", "v"], {})).toThrow(/var nowhere is unsafe/)
    p.put("b.rego", "package b\nv := uuid.rfc4122(\"x\")\n")
    expect(() => p.evaluate(["b", "v"], {})).toThrow(/uuid.rfc4122 is not supported/)
    // A module that fails to load leaves the others as they were.
    expect(p.ids()).toEqual(["c.rego", "u.rego", "b.rego"])
  })
})
