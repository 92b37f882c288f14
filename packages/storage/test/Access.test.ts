/**
 * Hostile callers against the real storage service: every endpoint declares a rule; no token, foreign tokens
 * (another namespace's ServiceAccount, a JWT TokenReview does not know, alg none, expired) get 401, a caller
 * without the grant 403, each as problem+json and as a `storage.access.denied` audit event. The platform's own
 * writer passes, but export and legal-hold release need the l3-audit grant, which a platform writer lacks.
 */
import { layer } from "@effect/vitest"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import { unruledEndpoints } from "@kubemend/core/EndpointAccess"
import { devkitRbacSpec, personaGroup, renderRbac } from "@kubemend/core/Personas"
import { StorageApi } from "@kubemend/core/StorageApi"
import { Effect } from "effect"
import { assert, describe, test } from "vitest"
import { auditEvent, Harness, harnessLayer, json, namespace, waitFor } from "./support/Harness.ts"

const denials = (actor: string) =>
  Effect.gen(function* () {
    const h = yield* Harness
    const r = yield* Effect.promise(() => h.fetch(`/api/v1/audit/events?event_type=storage.access.denied&actor_id=${encodeURIComponent(actor)}`))
    return ((yield* Effect.promise(() => r.json())) as { data: ReadonlyArray<{ event_data: Record<string, unknown>; error_code: string }> }).data
  })

const expectProblem = (r: Response, status: number) =>
  Effect.gen(function* () {
    assert.strictEqual(r.status, status)
    assert.strictEqual(r.headers.get("content-type"), "application/problem+json")
    const body = (yield* Effect.promise(() => r.json())) as { status: number; detail?: string }
    assert.strictEqual(body.status, status)
    return body
  })

describe("storage access", () => {
  test("declares one rule for every endpoint of the contract", () => {
    assert.deepStrictEqual(unruledEndpoints(StorageApi), [])
  })

  layer(harnessLayer(), { excludeTestServices: true, timeout: "60 seconds" })("hostile callers", (it) => {
    it.effect("no token: 401 problem, audited as anonymous", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        yield* expectProblem(yield* Effect.promise(() => h.fetch("/api/v1/audit/events", { ...json([auditEvent()]), token: null })), 401)
        const seen = yield* waitFor(denials("anonymous"), (d) => d.length > 0)
        assert.strictEqual(seen[0]!.error_code, "401")
        assert.strictEqual(seen[0]!.event_data["path"], "/api/v1/audit/events")
      }))

    it.effect("a ServiceAccount of another namespace may neither write nor read: 403, audited with its name", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const foreign = h.kube.registerServiceAccountToken("intruders", "scraper")
        const write = yield* expectProblem(
          yield* Effect.promise(() => h.fetch("/api/v1/audit/events/batch", { ...json([auditEvent({ correlation_id: "rr-forged" })]), token: foreign })),
          403
        )
        assert.match(write.detail ?? "", /create services\/kubemend-storage/)
        yield* expectProblem(yield* Effect.promise(() => h.fetch("/api/v1/workflows", { token: foreign })), 403)
        yield* expectProblem(
          yield* Effect.promise(() => h.fetch("/api/v1/audit/legal-hold", { ...json({ correlation_id: "rr-1", reason: "x" }), token: foreign })),
          403
        )
        const seen = yield* waitFor(denials("system:serviceaccount:intruders:scraper"), (d) => d.length >= 3)
        assert.deepStrictEqual(new Set(seen.map((d) => d.error_code)), new Set(["403"]))
        // The forged event was not written.
        const forged = yield* Effect.promise(() => h.fetch("/api/v1/audit/events?correlation_id=rr-forged").then((r) => r.json()))
        assert.strictEqual((forged as { data: ReadonlyArray<unknown> }).data.length, 0)
      }))

    it.effect("tokens TokenReview does not vouch for (issuer JWT, expired, alg none, garbage): 401, each audited", () =>
      Effect.scoped(Effect.gen(function* () {
        const h = yield* Harness
        const issuer = yield* makeIssuer({})
        const foreign = yield* makeIssuer({})
        const tokens = [
          yield* foreign.persona("l3-audit"),
          yield* issuer.persona("l3-audit"),
          yield* issuer.bad.expired,
          yield* issuer.bad.algNone(),
          yield* issuer.bad.wrongIssuer,
          "not-a-token"
        ]
        const exportDenials = denials("anonymous").pipe(
          Effect.map((d) => d.filter((e) => e.error_code === "401" && e.event_data["path"] === "/api/v1/audit/export"))
        )
        const before = (yield* exportDenials).length
        for (const token of tokens) {
          yield* expectProblem(yield* Effect.promise(() => h.fetch("/api/v1/audit/export", { token })), 401)
        }
        yield* waitFor(exportDenials, (d) => d.length >= before + tokens.length)
      })))

    it.effect("export and legal-hold release need the l3-audit grant: a platform writer gets 403, an auditor passes", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const writer = h.kube.registerServiceAccountToken(namespace, "kubemend-signals")
        h.kube.seed([{
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "test-storage-client-signals" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "test-storage-client" },
          subjects: [{ kind: "ServiceAccount", name: "kubemend-signals", namespace }]
        }])
        const write = yield* Effect.promise(() => h.fetch("/api/v1/audit/events", { ...json(auditEvent({ correlation_id: "rr-held" })), token: writer }))
        assert.strictEqual(write.status, 201)
        const hold = yield* Effect.promise(() =>
          h.fetch("/api/v1/audit/legal-hold", { ...json({ correlation_id: "rr-held", reason: "case 7" }), token: writer })
        )
        assert.strictEqual(hold.status, 200)
        const denied = yield* expectProblem(yield* Effect.promise(() => h.fetch("/api/v1/audit/export", { token: writer })), 403)
        assert.match(denied.detail ?? "", /use kubemend\.io\/audit\/export/)
        yield* expectProblem(
          yield* Effect.promise(() => h.fetch("/api/v1/audit/legal-hold/rr-held", { ...json({ release_reason: "closed" }), method: "DELETE", token: writer })),
          403
        )

        // A person the cluster authenticates (OIDC at the API server) in the auditors' group, bound to tool-l3-audit.
        h.kube.seed(renderRbac(devkitRbacSpec({ apiGroup: "kubemend.io", toolPrefix: "svc" })).clusterRoles.filter((r) => r.metadata.name === "tool-l3-audit"))
        h.kube.seed([{
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "auditors" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "tool-l3-audit" },
          subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: personaGroup("l3-audit") }]
        }])
        const auditor = "auditor-token"
        h.kube.registerToken(auditor, { username: "dana", groups: [personaGroup("l3-audit")] })
        const exported = yield* Effect.promise(() => h.fetch("/api/v1/audit/export?correlation_id=rr-held", { token: auditor }))
        assert.strictEqual(exported.status, 200)
        const released = yield* Effect.promise(() =>
          h.fetch("/api/v1/audit/legal-hold/rr-held", { ...json({ release_reason: "closed" }), method: "DELETE", token: auditor })
        )
        assert.strictEqual(released.status, 200)
        const seen = yield* waitFor(denials("system:serviceaccount:kubemend-system:kubemend-signals"), (d) => d.length >= 2)
        assert.includeMembers(seen.map((d) => d.event_data["path"]), ["/api/v1/audit/export", "/api/v1/audit/legal-hold/rr-held"])
      }))

    it.effect("the writer grant is per namespace: a same-named ServiceAccount of a platform in another namespace is refused", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        // As the operator renders each platform's grant: its ClusterRole, bound by a RoleBinding in its namespace.
        const grant = (ns: string) => [{
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: `${ns}-storage-client` },
          rules: [{ apiGroups: [""], resources: ["services"], verbs: ["get", "create"], resourceNames: ["kubemend-storage"] }]
        }, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "storage-client-gateway", namespace: ns },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${ns}-storage-client` },
          subjects: [{ kind: "ServiceAccount", name: "kubemend-gateway", namespace: ns }]
        }]
        h.kube.seed([...grant(namespace), ...grant("team-b")])
        const ours = h.kube.registerServiceAccountToken(namespace, "kubemend-gateway")
        const theirs = h.kube.registerServiceAccountToken("team-b", "kubemend-gateway")
        const write = (token: string) =>
          Effect.promise(() => h.fetch("/api/v1/audit/events", { ...json(auditEvent({ correlation_id: "rr-namespaced" })), token }))
        assert.strictEqual((yield* write(ours)).status, 201)
        const refused = yield* expectProblem(yield* write(theirs), 403)
        assert.match(refused.detail ?? "", /create services\/kubemend-storage in namespace kubemend-system/)
        yield* waitFor(denials("system:serviceaccount:team-b:kubemend-gateway"), (d) => d.length > 0)
      }))

    it.effect("a failing SubjectAccessReview refuses (fail closed); the public signing key needs no token", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const other = h.kube.registerServiceAccountToken(namespace, "kubemend-agent")
        h.kube.faults.failNext(5, { resource: "subjectaccessreviews", status: 500 })
        yield* expectProblem(yield* Effect.promise(() => h.fetch("/api/v1/workflows", { token: other })), 403)
        h.kube.faults.reset()
        const key = yield* Effect.promise(() => h.fetch("/api/v1/audit/export/signing-key", { token: null }))
        assert.strictEqual(key.status, 200)
      }))
  })
})
