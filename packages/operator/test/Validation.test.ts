import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { namespace, platform, type Spec, spec, world } from "./PlatformHarness.ts"

type World = Effect.Effect.Success<ReturnType<typeof world>>

// One dev API server for the file: each case replaces the CR and reconciles it once.
let w: World
const scope = Effect.runSync(Scope.make())
beforeAll(async () => {
  w = await Effect.runPromise(Scope.extend(world(), scope))
  w.kube.seed([
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "custom-tools" },
      rules: [{ apiGroups: ["kubemend.io"], resources: ["tools"], verbs: ["use"], resourceNames: ["svc_list_remediations"] }]
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "view-only" },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }]
    },
    { apiVersion: "v1", kind: "Secret", metadata: { name: "pg-partial", namespace }, stringData: { username: "u", database: "d" } }
  ])
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const errorFor = (s: Spec) =>
  Effect.gen(function* () {
    w.kube.put(platform(s))
    const result = yield* w.reconcile
    return { result, status: w.status(), condition: w.condition("BYOValidated") }
  })

const cases: ReadonlyArray<readonly [string, (s: Spec) => void, string]> = [
  ["postgresql is required", (s) => {
    delete s.postgresql
  }, "spec.postgresql.host"],
  ["valkey is required", (s) => {
    delete s.valkey
  }, "spec.valkey.host"],
  ["the agent block is required", (s) => {
    delete s.agent
  }, "spec.agent.llm.provider"],
  ["the analysis policy ConfigMap name is required", (s) => {
    delete s.aiAnalysis
  }, "spec.aiAnalysis.policy.configMapName"],
  ["the signal processing policy ConfigMap name is required", (s) => {
    s.signalProcessing.policy = {}
  }, "spec.signalProcessing.policy.configMapName"],
  ["llm.provider is required", (s) => {
    delete s.agent.llm.provider
  }, "spec.agent.llm.provider"],
  ["llm.model is required", (s) => {
    delete s.agent.llm.model
  }, "spec.agent.llm.model"],
  ["llm.credentialsSecretName is required", (s) => {
    delete s.agent.llm.credentialsSecretName
  }, "spec.agent.llm.credentialsSecretName"],
  ["sslMode disable is rejected", (s) => {
    s.postgresql.sslMode = "disable"
  }, "spec.postgresql.sslMode"],
  ["the database Secret must exist", (s) => {
    s.postgresql.secretName = "nope"
  }, "spec.postgresql.secretName: Secret \"nope\" not found"],
  ["the database Secret must hold password", (s) => {
    s.postgresql.secretName = "pg-partial"
  }, "spec.postgresql.secretName: Secret \"pg-partial\" has no key \"password\""],
  ["the cache Secret must exist", (s) => {
    s.valkey.secretName = "gone"
  }, "spec.valkey.secretName"],
  ["the LLM credentials Secret must hold api-key", (s) => {
    s.agent.llm.credentialsSecretName = "valkey"
  }, "spec.agent.llm.credentialsSecretName: Secret \"valkey\" has no key \"api-key\""],
  ["the approval policy ConfigMap must hold approval.rego", (s) => {
    s.aiAnalysis.policy.configMapName = "sp-policy"
  }, "spec.aiAnalysis.policy.configMapName: ConfigMap \"sp-policy\" has no key \"approval.rego\""],
  ["jwtProviders names are unique", (s) => {
    s.apiFrontend.auth.jwtProviders = [
      { name: "a", issuerURL: "https://a", audiences: ["x"] },
      { name: "a", issuerURL: "https://b", audiences: ["x"] }
    ]
  }, "spec.apiFrontend.auth.jwtProviders[1].name"],
  ["jwtProviders jwksURL is https", (s) => {
    s.agent.interactive = { enabled: true, jwtProviders: [{ name: "a", issuerURL: "https://a", jwksURL: "http://a/keys", audiences: ["x"] }] }
  }, "spec.agent.interactive.jwtProviders[0].jwksURL"],
  ["jwtProviders need an audience", (s) => {
    s.apiFrontend.auth.jwtProviders = [{ name: "a", issuerURL: "https://a", audiences: [] }]
  }, "spec.apiFrontend.auth.jwtProviders[0].audiences"],
  ["roleBindings take role or clusterRoleName, not both", (s) => {
    s.apiFrontend.rbac.roleBindings = [{ role: "sre", clusterRoleName: "custom-tools", groups: ["g"] }]
  }, "spec.apiFrontend.rbac.roleBindings[0].role"],
  ["roleBindings need one of role or clusterRoleName", (s) => {
    s.apiFrontend.rbac.roleBindings = [{ groups: ["g"] }]
  }, "spec.apiFrontend.rbac.roleBindings[0].role"],
  ["a custom ClusterRole must exist", (s) => {
    s.apiFrontend.rbac.roleBindings = [{ clusterRoleName: "missing-role", groups: ["g"] }]
  }, "spec.apiFrontend.rbac.roleBindings[0].clusterRoleName: ClusterRole \"missing-role\" not found"],
  ["a custom ClusterRole must grant use on tools", (s) => {
    s.apiFrontend.rbac.roleBindings = [{ clusterRoleName: "view-only", groups: ["g"] }]
  }, "spec.apiFrontend.rbac.roleBindings[0].clusterRoleName: ClusterRole \"view-only\" does not grant \"use\" on \"tools\""],
  ["drainSeconds is at most 300", (s) => {
    s.apiFrontend.shutdown = { drainSeconds: 301 }
  }, "spec.apiFrontend.shutdown.drainSeconds"],
  ["additionalClusterRoleBindings has at most 64 entries", (s) => {
    s.agent.additionalClusterRoleBindings = Array.from({ length: 65 }, (_, i) => `role-${i}`)
  }, "spec.agent.additionalClusterRoleBindings: must have at most 64 entries"],
  ["additionalClusterRoleBindings name existing ClusterRoles", (s) => {
    s.agent.additionalClusterRoleBindings = ["custom-tools", "not-there"]
  }, "spec.agent.additionalClusterRoleBindings[1]: ClusterRole \"not-there\" not found"],
  ["ansible.apiURL is required when ansible is enabled", (s) => {
    s.ansible = { enabled: true }
  }, "spec.ansible.apiURL"],
  ["console.auth.secretName is required when the console is enabled", (s) => {
    s.console = { enabled: true }
  }, "spec.console.auth.secretName"],
  ["the console Secret must hold its three keys", (s) => {
    s.console = { enabled: true, auth: { secretName: "llm" } }
  }, "spec.console.auth.secretName: Secret \"llm\" has no key \"client-id\", \"client-secret\", \"cookie-secret\""]
]

describe("platform validation in reconcile", () => {
  for (const [name, edit, field] of cases) {
    it.live(`${name} -> Error naming ${field.split(":")[0]}`, () =>
      Effect.gen(function* () {
        const { condition, result, status } = yield* errorFor(spec(edit))
        expect(status.phase).toBe("Error")
        expect(condition).toMatchObject({ status: "False" })
        expect(condition.message).toContain(field)
        expect(status.message).toContain(field.split(":")[0])
        expect(result.requeueAfter).toBeDefined()
        expect(w.deployment("gateway")).toBeUndefined()
      }))
  }

  it.live("the valid spec passes validation and a missing reference names every broken field at once", () =>
    Effect.gen(function* () {
      const ok = yield* errorFor(spec())
      expect(ok.condition).toMatchObject({ status: "True", reason: "Validated" })
      const both = yield* errorFor(spec((s) => {
        s.postgresql.secretName = "nope"
        s.signalProcessing.policy.configMapName = "missing-cm"
      }))
      expect(both.condition.reason).toBe("MissingReference")
      expect(both.condition.message).toContain("spec.postgresql.secretName")
      expect(both.condition.message).toContain("spec.signalProcessing.policy.configMapName")
      const events = w.kube.list("v1", "Event", namespace)
      expect(events.some((e: any) => e.type === "Warning" && e.reason === "ValidationFailed")).toBe(true)
    }))
})
