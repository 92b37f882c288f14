import { assert, describe, it } from "@effect/vitest"
import { Either, JSONSchema, Schema } from "effect"
import { parse } from "yaml"
import { decodePlatform, decodePlatformSpec, normalizeLlmProvider, PlatformCelRules, PlatformSpec, type ValidationIssue } from "../../src/domain/index.ts"

const crYaml = `
apiVersion: kubemend.io/v1alpha1
kind: Kubemend
metadata: { name: kubemend, namespace: kubemend-system, generation: 3 }
spec:
  postgresql: { host: pg.db.svc, secretName: pg-credentials, sslMode: verify-full }
  valkey: { host: valkey.db.svc, secretName: valkey-credentials }
  agent:
    llm:
      provider: openai
      model: gpt-4o
      credentialsSecretName: llm-credentials
      endpoint: https://llm.internal.example.com
      temperature: "0.2"
      phaseModels:
        rca: { model: gpt-4o }
        validation: { provider: anthropic, model: claude-sonnet-4 }
    interactive:
      enabled: true
      jwtProviders:
        - { name: corp, issuerURL: "https://sso.example.com/realms/ops", audiences: [kubemend] }
    maxTurns: 30
    additionalClusterRoleBindings: [view]
  aiAnalysis: { policy: { configMapName: approval-policy }, confidenceThreshold: "0.8" }
  signalProcessing: { policy: { configMapName: signal-policy } }
  apiFrontend:
    externalURL: https://kubemend.example.com
    auth:
      jwtProviders:
        - name: corp
          issuerURL: https://sso.example.com/realms/ops
          jwksURL: https://sso.example.com/realms/ops/protocol/openid-connect/certs
          audiences: [kubemend-gateway]
          claimMappings: { username: preferred_username, groups: realm_access.roles }
        - { name: ci, issuerURL: "https://token.actions.githubusercontent.com", audiences: [kubemend-ci] }
    rateLimit: { userRequestsPerSec: 40 }
    shutdown: { drainSeconds: 30 }
    rbac:
      roleBindings:
        - { role: sre, groups: [platform-sre] }
        - { clusterRoleName: custom-auditors, groups: [auditors] }
      consoleAccessGroups: []
  console: { enabled: true, auth: { secretName: console-oauth } }
  remediationOrchestrator: { dryRun: true, routing: { consecutiveFailureThreshold: 5 } }
  ansible: { enabled: true, apiURL: https://aap.example.com, organizationID: 2 }
  someFutureBlock: { enabled: true }
`

const spec = () => parse(crYaml).spec
const issues = (input: unknown): ReadonlyArray<ValidationIssue> => {
  const r = decodePlatformSpec(input)
  assert.isTrue(Either.isLeft(r), "expected validation issues")
  return Either.isLeft(r) ? r.left : []
}
const paths = (input: unknown) => issues(input).map((i) => i.path)
const withSpec = (mutate: (s: any) => void) => {
  const s = spec()
  mutate(s)
  return s
}

describe("platform CR: decoding and defaults", () => {
  it("decodes a realistic CR and fills the document 3 defaults", () => {
    const r = decodePlatform(parse(crYaml))
    assert.isTrue(Either.isRight(r), JSON.stringify(Either.isLeft(r) ? r.left : []))
    if (Either.isLeft(r)) return
    const s = r.right.spec
    assert.strictEqual(r.right.metadata.name, "kubemend")
    assert.strictEqual(s.postgresql.port, 5432)
    assert.strictEqual(s.valkey.port, 6379)
    assert.strictEqual(s.agent.maxTurns, 30)
    assert.strictEqual(s.agent.audit.enabled, true)
    assert.strictEqual(s.agent.alignmentCheck.enabled, false)
    assert.strictEqual(s.agent.alignmentCheck.timeout, "10s")
    assert.strictEqual(s.agent.alignmentCheck.maxStepTokens, 500)
    assert.deepStrictEqual(s.agent.safety, {
      sanitization: { injectionPatternsEnabled: true, credentialScrubEnabled: true },
      anomaly: { maxToolCallsPerTool: 10, maxTotalToolCalls: 40, maxRepeatedFailures: 3 }
    })
    assert.strictEqual(s.agent.llm.temperature, "0.2")
    assert.deepStrictEqual(s.apiFrontend.rateLimit, {
      ipRequestsPerSec: 50,
      userRequestsPerSec: 40,
      toolCallsPerMinute: 60,
      maxConcurrentSessions: 100
    })
    assert.strictEqual(s.apiFrontend.enabled, true)
    assert.strictEqual(s.apiFrontend.shutdown.drainSeconds, 30)
    assert.strictEqual(s.apiFrontend.rbac.sarCacheTTL, "30s")
    assert.deepStrictEqual(s.apiFrontend.rbac.consoleAccessGroups, [])
    assert.deepStrictEqual(s.apiFrontend.rbac.roleBindings, [
      { role: "sre", groups: ["platform-sre"] },
      { clusterRoleName: "custom-auditors", groups: ["auditors"] }
    ])
    assert.strictEqual(s.apiFrontend.route.enabled, false)
    assert.strictEqual(s.apiFrontend.spire, undefined)
    assert.strictEqual(s.image.pullPolicy, "IfNotPresent")
    assert.strictEqual(s.monitoring.enabled, true)
    assert.strictEqual(s.networkPolicies.enabled, false)
    assert.strictEqual(s.console.route.enabled, true)
    assert.strictEqual(s.ansible.organizationID, 2)
    assert.strictEqual(s.remediationOrchestrator.dryRun, true)
    assert.strictEqual(s.remediationOrchestrator.routing.consecutiveFailureThreshold, 5)
    assert.strictEqual(s.remediationOrchestrator.routing.consecutiveFailureCooldown, "1h")
    assert.strictEqual(s.remediationOrchestrator.retention.period, "24h")
    assert.strictEqual(s.remediationOrchestrator.timeouts.awaitingApproval, "15m")
    assert.strictEqual(s.dataStorage.endpointPropagationDelay, "10s")
    assert.isFalse("someFutureBlock" in s)
  })

  it("defaults a minimal CR completely", () => {
    const r = decodePlatformSpec({
      postgresql: { host: "pg", secretName: "pg" },
      valkey: { host: "vk", secretName: "vk" },
      agent: { llm: { provider: "anthropic", model: "claude-sonnet-4", credentialsSecretName: "llm" } },
      aiAnalysis: { policy: { configMapName: "a" } },
      signalProcessing: { policy: { configMapName: "s" } }
    })
    assert.isTrue(Either.isRight(r))
    if (Either.isLeft(r)) return
    assert.strictEqual(r.right.agent.maxTurns, 40)
    assert.strictEqual(r.right.agent.interactive.enabled, false)
    assert.strictEqual(r.right.apiFrontend.shutdown.drainSeconds, 15)
    assert.strictEqual(r.right.apiFrontend.auth.audience, "kubemend-gateway")
    assert.strictEqual(r.right.ansible.enabled, false)
    assert.strictEqual(r.right.ansible.organizationID, 1)
    assert.strictEqual(r.right.console.enabled, false)
    assert.strictEqual(r.right.apiFrontend.rbac.consoleAccessGroups, undefined)
    assert.strictEqual(r.right.postgresql.sslMode, undefined)
  })

  it("accepts the original's kubernautAgent key and names it in issues", () => {
    const s = spec()
    s.kubernautAgent = s.agent
    delete s.agent
    const ok = decodePlatformSpec(s)
    assert.isTrue(Either.isRight(ok) && ok.right.agent.llm.model === "gpt-4o")
    delete s.kubernautAgent.llm.model
    assert.deepStrictEqual(issues(s), [{ path: "spec.kubernautAgent.llm.model", message: "is required" }])
    assert.deepStrictEqual(paths({ ...spec(), kubernautAgent: spec().agent }), ["spec.kubernautAgent"])
  })

  it("accepts every LLM provider and normalizes vertexAi", () => {
    for (const provider of ["vertex", "vertex_ai", "vertexAi", "anthropic", "bedrock", "huggingface", "openai_compatible"]) {
      const r = decodePlatformSpec(withSpec((s) => {
        s.agent.llm = { provider, model: "m", credentialsSecretName: "c" }
      }))
      assert.isTrue(Either.isRight(r), provider)
    }
    assert.strictEqual(normalizeLlmProvider("vertexAi"), "vertex_ai")
    assert.strictEqual(normalizeLlmProvider("vertex"), "vertex")
  })
})

describe("platform CR: validation issues name the field path", () => {
  it("names every missing required field", () => {
    assert.deepStrictEqual(paths({}), [
      "spec.postgresql.host",
      "spec.postgresql.secretName",
      "spec.valkey.host",
      "spec.valkey.secretName",
      "spec.agent.llm.provider",
      "spec.agent.llm.model",
      "spec.agent.llm.credentialsSecretName",
      "spec.aiAnalysis.policy.configMapName",
      "spec.signalProcessing.policy.configMapName"
    ])
    assert.deepStrictEqual(paths(withSpec((s) => delete s.agent.llm.credentialsSecretName)), [
      "spec.agent.llm.credentialsSecretName"
    ])
    assert.deepStrictEqual(paths(withSpec((s) => delete s.aiAnalysis.policy)), ["spec.aiAnalysis.policy.configMapName"])
    assert.deepStrictEqual(issues(null), [{ path: "spec", message: "must be an object" }])
  })

  it("rejects sslMode disable", () => {
    const [issue] = issues(withSpec((s) => (s.postgresql.sslMode = "disable")))
    assert.strictEqual(issue?.path, "spec.postgresql.sslMode")
    assert.match(issue?.message ?? "", /disable.*not allowed/)
  })

  it("bounds drainSeconds to 0..300 and maxTurns to >= 1", () => {
    assert.deepStrictEqual(paths(withSpec((s) => (s.apiFrontend.shutdown.drainSeconds = 301))), [
      "spec.apiFrontend.shutdown.drainSeconds"
    ])
    assert.deepStrictEqual(paths(withSpec((s) => (s.apiFrontend.shutdown.drainSeconds = -1))), [
      "spec.apiFrontend.shutdown.drainSeconds"
    ])
    assert.isTrue(Either.isRight(decodePlatformSpec(withSpec((s) => (s.apiFrontend.shutdown.drainSeconds = 0)))))
    assert.deepStrictEqual(issues(withSpec((s) => (s.agent.maxTurns = 0))), [
      { path: "spec.agent.maxTurns", message: "must be at least 1" }
    ])
    assert.deepStrictEqual(paths(withSpec((s) => (s.agent.maxTurns = 2.5))), ["spec.agent.maxTurns"])
  })

  it("validates JWT providers: name length, unique names, https jwksURL within 2048, audiences", () => {
    const providers = (s: any) => s.apiFrontend.auth.jwtProviders
    assert.deepStrictEqual(paths(withSpec((s) => (providers(s)[1].name = "x".repeat(64)))), [
      "spec.apiFrontend.auth.jwtProviders[1].name"
    ])
    assert.deepStrictEqual(paths(withSpec((s) => (providers(s)[1].name = ""))), [
      "spec.apiFrontend.auth.jwtProviders[1].name"
    ])
    const dup = issues(withSpec((s) => (providers(s)[1].name = "corp")))
    assert.deepStrictEqual(dup, [{ path: "spec.apiFrontend.auth.jwtProviders[1].name", message: "duplicate provider name \"corp\"" }])
    assert.deepStrictEqual(paths(withSpec((s) => (providers(s)[0].jwksURL = "http://sso.example.com/certs"))), [
      "spec.apiFrontend.auth.jwtProviders[0].jwksURL"
    ])
    assert.deepStrictEqual(
      paths(withSpec((s) => (providers(s)[0].jwksURL = "https://sso.example.com/" + "a".repeat(2048)))),
      ["spec.apiFrontend.auth.jwtProviders[0].jwksURL"]
    )
    assert.deepStrictEqual(paths(withSpec((s) => (providers(s)[0].audiences = []))), [
      "spec.apiFrontend.auth.jwtProviders[0].audiences"
    ])
    assert.deepStrictEqual(paths(withSpec((s) => delete providers(s)[0].issuerURL)), [
      "spec.apiFrontend.auth.jwtProviders[0].issuerURL"
    ])
    assert.deepStrictEqual(
      paths(withSpec((s) => s.agent.interactive.jwtProviders.push({ name: "corp", issuerURL: "https://x", audiences: ["a"] }))),
      ["spec.agent.interactive.jwtProviders[1].name"]
    )
  })

  it("requires exactly one of role or clusterRoleName, a known role and at least one group", () => {
    const both = issues(withSpec((s) => (s.apiFrontend.rbac.roleBindings[0].clusterRoleName = "x")))
    assert.deepStrictEqual(both.map((i) => i.path), ["spec.apiFrontend.rbac.roleBindings[0].role"])
    assert.match(both[0]!.message, /exactly one/)
    assert.deepStrictEqual(paths(withSpec((s) => delete s.apiFrontend.rbac.roleBindings[1].clusterRoleName)), [
      "spec.apiFrontend.rbac.roleBindings[1].role"
    ])
    assert.deepStrictEqual(paths(withSpec((s) => (s.apiFrontend.rbac.roleBindings[0].role = "admin"))), [
      "spec.apiFrontend.rbac.roleBindings[0].role"
    ])
    assert.deepStrictEqual(paths(withSpec((s) => (s.apiFrontend.rbac.roleBindings[0].groups = []))), [
      "spec.apiFrontend.rbac.roleBindings[0].groups"
    ])
  })

  it("allows at most 64 additional ClusterRoles", () => {
    const roles = (n: number) => Array.from({ length: n }, (_, i) => `role-${i}`)
    assert.isTrue(Either.isRight(decodePlatformSpec(withSpec((s) => (s.agent.additionalClusterRoleBindings = roles(64))))))
    assert.deepStrictEqual(issues(withSpec((s) => (s.agent.additionalClusterRoleBindings = roles(65)))), [
      { path: "spec.agent.additionalClusterRoleBindings", message: "must have at most 64 entries (got 65)" }
    ])
  })

  it("restricts phaseModels keys to rca, workflow_discovery, validation", () => {
    const r = issues(withSpec((s) => (s.agent.llm.phaseModels.summary = { model: "small" })))
    assert.deepStrictEqual(r.map((i) => i.path), ["spec.agent.llm.phaseModels.summary"])
    assert.match(r[0]!.message, /rca, workflow_discovery, validation/)
  })

  it("requires an endpoint for openai, ollama, azure and mistral and rejects unknown providers", () => {
    for (const provider of ["openai", "ollama", "azure", "mistral"]) {
      const r = issues(withSpec((s) => (s.agent.llm = { provider, model: "m", credentialsSecretName: "c" })))
      assert.deepStrictEqual(r, [{ path: "spec.agent.llm.endpoint", message: `is required for provider ${provider}` }])
    }
    assert.deepStrictEqual(paths(withSpec((s) => (s.agent.llm.provider = "gemini"))), ["spec.agent.llm.provider"])
  })

  it("requires ansible.apiURL when enabled and organizationID >= 1", () => {
    assert.deepStrictEqual(issues(withSpec((s) => delete s.ansible.apiURL)), [
      { path: "spec.ansible.apiURL", message: "is required when ansible.enabled is true" }
    ])
    assert.deepStrictEqual(paths(withSpec((s) => (s.ansible.organizationID = 0))), ["spec.ansible.organizationID"])
    assert.isTrue(Either.isRight(decodePlatformSpec(withSpec((s) => (s.ansible = { enabled: false })))))
  })

  it("requires console.auth.secretName when the console is enabled", () => {
    assert.deepStrictEqual(paths(withSpec((s) => delete s.console.auth)), ["spec.console.auth.secretName"])
    assert.isTrue(Either.isRight(decodePlatformSpec(withSpec((s) => (s.console = { enabled: false })))))
  })

  it("validates Go durations, an https externalURL and rate limit integers", () => {
    assert.deepStrictEqual(paths(withSpec((s) => (s.apiFrontend.rbac.sarCacheTTL = "30 seconds"))), [
      "spec.apiFrontend.rbac.sarCacheTTL"
    ])
    assert.isTrue(Either.isRight(decodePlatformSpec(withSpec((s) => (s.apiFrontend.rbac.sarCacheTTL = "1m30s")))))
    assert.deepStrictEqual(paths(withSpec((s) => (s.apiFrontend.externalURL = "http://kubemend.example.com"))), [
      "spec.apiFrontend.externalURL"
    ])
    assert.deepStrictEqual(paths(withSpec((s) => (s.apiFrontend.rateLimit.toolCallsPerMinute = "lots"))), [
      "spec.apiFrontend.rateLimit.toolCallsPerMinute"
    ])
  })

  it("reports several independent problems at once", () => {
    const r = paths(withSpec((s) => {
      s.postgresql.sslMode = "disable"
      s.apiFrontend.shutdown.drainSeconds = 900
      s.agent.maxTurns = 0
    }))
    assert.deepStrictEqual(r, ["spec.postgresql.sslMode", "spec.agent.maxTurns", "spec.apiFrontend.shutdown.drainSeconds"])
  })
})

describe("platform CR: JSON Schema for CRD generation", () => {
  const root = JSONSchema.make(PlatformSpec) as any

  it("is flat (no $ref) and carries the defaults", () => {
    assert.notInclude(JSON.stringify(root), "$ref")
    assert.deepStrictEqual(root.required, ["postgresql", "valkey", "agent", "aiAnalysis", "signalProcessing"])
    const af = root.properties.apiFrontend
    assert.deepStrictEqual(af.default, {})
    assert.strictEqual(af.properties.shutdown.properties.drainSeconds.default, 15)
    assert.strictEqual(af.properties.shutdown.properties.drainSeconds.minimum, 0)
    assert.strictEqual(af.properties.shutdown.properties.drainSeconds.maximum, 300)
    assert.strictEqual(af.properties.rateLimit.properties.ipRequestsPerSec.default, 50)
    assert.strictEqual(af.properties.rbac.properties.sarCacheTTL.default, "30s")
    assert.strictEqual(root.properties.agent.properties.maxTurns.default, 40)
    assert.deepStrictEqual(root.properties.postgresql.properties.sslMode.enum, ["require", "verify-ca", "verify-full"])
    assert.strictEqual(root.properties.agent.properties.additionalClusterRoleBindings.maxItems, 64)
    assert.strictEqual(
      af.properties.auth.properties.jwtProviders.items.properties.jwksURL.maxLength,
      2048
    )
  })

  it("lists a CEL rule for each cross-field filter at a path that exists in the schema", () => {
    for (const rule of PlatformCelRules) {
      let node = { properties: { spec: root } } as any
      for (const part of rule.path.split(".")) {
        const key = part.replace("[]", "")
        node = node.properties[key]
        assert.isDefined(node, rule.path)
        if (part.endsWith("[]")) node = node.items
        if (node.properties === undefined && node.additionalProperties !== undefined) break
      }
    }
  })

  it("round-trips a decoded spec through encode", () => {
    const decoded = Schema.decodeUnknownSync(PlatformSpec)(spec())
    const again = Schema.decodeUnknownSync(PlatformSpec)(Schema.encodeSync(PlatformSpec)(decoded))
    assert.deepStrictEqual(again, decoded)
  })
})
