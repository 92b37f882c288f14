/** Two platforms in one cluster render no cluster-scoped object of the same name, and bind only their own roles. */
import { describe, expect, it } from "@effect/vitest"
import { decodePlatformSpec } from "@kubemend/core/domain/Platform/index"
import { Either } from "effect"
import { renderClusterRbac } from "../src/platform/Rbac.ts"
import { spec as specJson } from "./PlatformHarness.ts"

const spec = Either.getOrThrow(decodePlatformSpec(specJson()))
const operator = { namespace: "kubemend-operator", name: "kubemend-operator" }
const render = (namespace: string) => renderClusterRbac(spec, { namespace, name: "kubemend", apiGroup: "kubemend.io", toolPrefix: "svc", operator })
const names = (r: ReturnType<typeof render>) => [...r.clusterRoles, ...r.clusterRoleBindings].map((o) => o.metadata.name)

describe("two platforms in one cluster", () => {
  it("name every ClusterRole and binding per platform, tool and console roles included", () => {
    const a = render("team-a")
    const b = render("team-b")
    expect(names(a).filter((n) => names(b).includes(n))).toEqual([])
    expect(a.clusterRoles.map((r) => r.metadata.name)).toContain("team-a-tool-sre")
    expect(a.clusterRoles.map((r) => r.metadata.name)).toContain("team-a-console-access")
    const refs = a.clusterRoleBindings.map((x) => (x as unknown as { roleRef: { name: string } }).roleRef.name)
    expect(refs.filter((r) => r.startsWith("team-b-"))).toEqual([])
  })
})
