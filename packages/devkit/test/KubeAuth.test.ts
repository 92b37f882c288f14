import { AuthenticationV1Api, AuthorizationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DevKube, DevKubeApiServer } from "../src/kube/index.ts"

let kube: DevKube
let authz: AuthorizationV1Api
let authn: AuthenticationV1Api

const rbac = "rbac.authorization.k8s.io/v1"

const rbacYaml = `
apiVersion: ${rbac}
kind: ClusterRole
metadata: { name: tool-sre }
rules:
  - { apiGroups: [kubemend.io], resources: [tools], verbs: [use], resourceNames: [kubectl_get, pod_logs] }
  - { apiGroups: [kubemend.io], resources: [console], verbs: [use] }
---
apiVersion: ${rbac}
kind: ClusterRoleBinding
metadata: { name: tool-sre }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: tool-sre }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: Group, name: sre }]
---
apiVersion: ${rbac}
kind: ClusterRole
metadata: { name: everything }
rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]
---
apiVersion: ${rbac}
kind: ClusterRoleBinding
metadata: { name: bob-admin }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: everything }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: bob }]
---
apiVersion: ${rbac}
kind: ClusterRole
metadata: { name: status-writer }
rules: [{ apiGroups: [kubemend.io], resources: ["*/status"], verbs: [patch, update] }, { apiGroups: [""], resources: [pods], verbs: [get, list] }]
---
apiVersion: ${rbac}
kind: ClusterRoleBinding
metadata: { name: operator }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: status-writer }
subjects: [{ kind: ServiceAccount, name: operator, namespace: kubemend }]
---
apiVersion: ${rbac}
kind: Role
metadata: { name: cm-reader, namespace: team-a }
rules: [{ apiGroups: [""], resources: [configmaps], verbs: [get, list] }]
---
apiVersion: ${rbac}
kind: RoleBinding
metadata: { name: carol-cm, namespace: team-a }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-reader }
subjects: [{ kind: User, name: carol }]
---
apiVersion: ${rbac}
kind: ClusterRole
metadata: { name: aggregate-view }
aggregationRule: { clusterRoleSelectors: [{ matchLabels: { aggregate-to-view: "true" } }] }
rules: []
---
apiVersion: ${rbac}
kind: ClusterRole
metadata: { name: view-leases, labels: { aggregate-to-view: "true" } }
rules: [{ apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get] }]
---
apiVersion: ${rbac}
kind: ClusterRoleBinding
metadata: { name: dave-view }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: aggregate-view }
subjects: [{ kind: User, name: dave }]
`

beforeAll(async () => {
  kube = await DevKubeApiServer.start()
  kube.seedYaml(rbacYaml)
  const kc = new KubeConfig()
  kc.loadFromString(kube.kubeConfig())
  authz = kc.makeApiClient(AuthorizationV1Api)
  authn = kc.makeApiClient(AuthenticationV1Api)
})
afterAll(() => kube.close())

interface Ask {
  readonly user?: string
  readonly groups?: Array<string>
  readonly verb?: string
  readonly group?: string
  readonly resource?: string
  readonly subresource?: string
  readonly name?: string
  readonly namespace?: string
}

const review = async (a: Ask) => {
  const result = await authz.createSubjectAccessReview({
    body: {
      spec: {
        ...(a.user === undefined ? {} : { user: a.user }),
        groups: a.groups ?? [],
        resourceAttributes: {
          verb: a.verb ?? "use",
          group: a.group ?? "kubemend.io",
          resource: a.resource ?? "tools",
          ...(a.subresource === undefined ? {} : { subresource: a.subresource }),
          ...(a.name === undefined ? {} : { name: a.name }),
          ...(a.namespace === undefined ? {} : { namespace: a.namespace })
        }
      }
    }
  })
  return result.status!
}
const allowed = async (a: Ask) => (await review(a)).allowed

describe("SubjectAccessReview", () => {
  it("allows a group's tools by resourceName and denies the rest", async () => {
    const yes = await review({ user: "alice", groups: ["sre"], name: "kubectl_get" })
    expect(yes.allowed).toBe(true)
    expect(yes.reason).toContain("ClusterRoleBinding \"tool-sre\"")
    expect(await allowed({ user: "alice", groups: ["sre"], name: "restart_pod" })).toBe(false)
    expect(await allowed({ user: "alice", groups: ["sre"] })).toBe(false)
    expect(await allowed({ user: "alice", groups: ["sre"], resource: "console" })).toBe(true)
    expect(await allowed({ user: "alice", groups: ["observability"], name: "kubectl_get" })).toBe(false)
    expect(await allowed({ user: "alice", groups: ["sre"], verb: "get", name: "kubectl_get" })).toBe(false)
  })

  it("honours wildcards, User and ServiceAccount subjects, subresources and system:masters", async () => {
    expect(await allowed({ user: "bob", verb: "delete", group: "apps", resource: "deployments", name: "x" })).toBe(true)
    const sa = "system:serviceaccount:kubemend:operator"
    expect(await allowed({ user: sa, verb: "patch", resource: "remediationrequests", subresource: "status" })).toBe(true)
    expect(await allowed({ user: sa, verb: "patch", resource: "remediationrequests" })).toBe(false)
    expect(await allowed({ user: sa, verb: "list", group: "", resource: "pods", namespace: "x" })).toBe(true)
    expect(await allowed({ user: "system:serviceaccount:other:operator", verb: "list", group: "", resource: "pods" })).toBe(false)
    expect(await allowed({ user: "root", groups: ["system:masters"], verb: "delete", resource: "anything" })).toBe(true)
  })

  it("applies RoleBindings only in their namespace, and aggregated ClusterRoles", async () => {
    const cm = { user: "carol", verb: "get", group: "", resource: "configmaps" }
    expect(await allowed({ ...cm, namespace: "team-a" })).toBe(true)
    expect(await allowed({ ...cm, namespace: "team-b" })).toBe(false)
    expect(await allowed(cm)).toBe(false)
    expect(await allowed({ user: "dave", verb: "get", group: "coordination.k8s.io", resource: "leases" })).toBe(true)
  })

  it("answers LocalSubjectAccessReview and rejects a review without a user or group", async () => {
    const local = await authz.createNamespacedLocalSubjectAccessReview({
      namespace: "team-a",
      body: { spec: { user: "carol", resourceAttributes: { verb: "list", resource: "configmaps" } } }
    })
    expect(local.status?.allowed).toBe(true)
    await expect(authz.createSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: "get" } } } })).rejects.toMatchObject({ code: 400 })
  })

  it("sees RBAC changes at once", async () => {
    expect(await allowed({ user: "erin", verb: "get", group: "", resource: "secrets" })).toBe(false)
    kube.put({
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: { name: "erin" },
      roleRef: { kind: "ClusterRole", name: "everything" },
      subjects: [{ kind: "User", name: "erin" }]
    })
    expect(await allowed({ user: "erin", verb: "get", group: "", resource: "secrets" })).toBe(true)
  })
})

describe("TokenReview and caller identity", () => {
  it("authenticates registered ServiceAccount tokens", async () => {
    kube.seed([{ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "storage", namespace: "kubemend" } }])
    const token = kube.registerServiceAccountToken("kubemend", "storage")
    expect(token.split(".")).toHaveLength(3)
    const ok = await authn.createTokenReview({ body: { spec: { token } } })
    expect(ok.status?.authenticated).toBe(true)
    expect(ok.status?.user?.username).toBe("system:serviceaccount:kubemend:storage")
    expect(ok.status?.user?.uid).toBe(kube.get("v1", "ServiceAccount", "storage", "kubemend")?.metadata.uid)
    expect(ok.status?.user?.groups).toEqual(["system:serviceaccounts", "system:serviceaccounts:kubemend", "system:authenticated"])
    const bad = await authn.createTokenReview({ body: { spec: { token: "forged" } } })
    expect(bad.status?.authenticated).toBe(false)
    kube.revokeToken(token)
    expect((await authn.createTokenReview({ body: { spec: { token } } })).status?.authenticated).toBe(false)
  })

  it("checks audiences when a token was minted for some", async () => {
    const token = kube.registerServiceAccountToken("kubemend", "gateway", { audiences: ["kubemend-storage"] })
    const ok = await authn.createTokenReview({ body: { spec: { token, audiences: ["kubemend-storage"] } } })
    expect(ok.status).toMatchObject({ authenticated: true, audiences: ["kubemend-storage"] })
    const wrong = await authn.createTokenReview({ body: { spec: { token, audiences: ["other"] } } })
    expect(wrong.status?.authenticated).toBe(false)
  })

  it("records which token and identity made each request", async () => {
    const token = kube.registerServiceAccountToken("kubemend", "agent")
    const kc = new KubeConfig()
    kc.loadFromString(kube.kubeConfig({ token }))
    kube.clearRequests()
    await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: "kubemend" })
    expect(kube.requests()).toEqual([
      expect.objectContaining({
        verb: "list",
        resource: "pods",
        namespace: "kubemend",
        token,
        user: "system:serviceaccount:kubemend:agent"
      })
    ])
  })
})
