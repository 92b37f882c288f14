/**
 * The rendered config files against the loaders that read them: each service's own config, the core blocks
 * (listeners, logging, LLM, token issuers, SAR cache), decoded from exactly the rendered object. A recording config
 * provider also lists the rendered keys no loader reads.
 */
import { describe, expect, it } from "@effect/vitest"
import { AgentConfig, InteractiveAuthConfigLive } from "@kubemend/agent/AgentConfig"
import { duration, providerFor } from "@kubemend/core/Config"
import { AuthConfig, authConfig } from "@kubemend/core/Auth/Config"
import { decodePlatformSpec, type PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { settingsConfig as llmConfig } from "@kubemend/core/Llm/Config"
import { ServerConfig } from "@kubemend/core/Servers"
import { a2aConfig } from "@kubemend/gateway/A2a/Config"
import { gatewayConfig } from "@kubemend/gateway/GatewayConfig"
import { StorageConfig } from "@kubemend/storage/StorageConfig"
import { Config, ConfigProvider, Duration, Effect, Either, HashSet, Layer, Option, Redacted } from "effect"
import { renderServiceConfigs, storageValkeySecrets } from "../src/platform/RenderConfig.ts"
import { spec as specJson } from "./PlatformHarness.ts"

const decode = (edit: Parameters<typeof specJson>[0] = () => {}): PlatformSpec => {
  const r = decodePlatformSpec(specJson(edit))
  if (Either.isLeft(r)) throw new Error(JSON.stringify(r.left))
  return r.right
}
const ctx = { namespace: "kubemend-system", apiGroup: "kubemend.io" }

/** A provider over `file` that records every path a loader asks for. */
const recording = (file: Record<string, unknown>) => {
  const asked = new Set<string>()
  const inner = ConfigProvider.fromJson(file).flattened
  const provider = ConfigProvider.fromFlat(ConfigProvider.makeFlat({
    load: (path, primitive, split) => {
      asked.add(path.join("."))
      return inner.load(path, primitive, split)
    },
    enumerateChildren: (path) => {
      asked.add(path.join("."))
      return inner.enumerateChildren(path).pipe(Effect.orElseSucceed(() => HashSet.empty<string>()))
    },
    patch: inner.patch
  }))
  return { provider, asked }
}

const leaves = (o: unknown, prefix = ""): Array<string> =>
  typeof o === "object" && o !== null && !Array.isArray(o)
    ? Object.entries(o).flatMap(([k, v]) => leaves(v, prefix === "" ? k : `${prefix}.${k}`))
    : [prefix]

/** Rendered keys no loader asked for (array items count as read when their array was). */
const unread = (file: Record<string, unknown>, asked: ReadonlySet<string>) =>
  leaves(file).filter((leaf) => ![...asked].some((a) => a === leaf || leaf.startsWith(`${a}.`) || a.startsWith(`${leaf}[`)))

const load = <A, E, R>(file: Record<string, unknown>, effect: Effect.Effect<A, E, R>) => {
  const { provider, asked } = recording(file)
  return Effect.map(Effect.withConfigProvider(effect, provider), (value) => ({ value, asked }))
}

/** The keys core's `Storage.layerConfig` reads (the gateway's and agent's storage client). */
const storageClientKeys = Config.nested(
  Config.all({ url: Config.string("url"), tokenFile: Config.option(Config.string("tokenFile")) }),
  "storage"
)

/** The cluster keys as the services' main layers read them (gateway under `kubernetes`, the others at the top). */
const k8sKeys = Config.all({ namespace: Config.string("namespace"), apiGroup: Config.string("apiGroup") })

const serverSettings = Effect.flatMap(ServerConfig, Effect.succeed).pipe(Effect.provide(ServerConfig.layerConfig(0)))
const logLevel = Config.nested(Config.literal("debug", "info", "warn", "error")("level"), "logging")

describe("renderServiceConfigs: the gateway's file", () => {
  it.effect("is read by GatewayConfig, the listener, auth, SAR, cluster, A2A and LLM loaders, with nothing left over", () =>
    Effect.gen(function* () {
      const spec = decode((s) => {
        s.apiFrontend.rateLimit = { userRequestsPerSec: 7 }
        s.apiFrontend.severityTriage = { enabled: true }
        s.apiFrontend.shutdown = { drainSeconds: 40 }
        s.apiFrontend.rbac.sarCacheTTL = "45s"
        s.apiFrontend.auth.jwtProviders = [{ name: "corp", issuerURL: "https://corp", audiences: ["kubemend"], claimMappings: { groups: "roles" } }]
        s.apiFrontend.externalURL = "https://kubemend.example.com"
        s.agent.interactive = { enabled: true }
      })
      const file = renderServiceConfigs(spec, ctx).gateway
      const { asked, value } = yield* load(
        file,
        Effect.all({
          gateway: gatewayConfig,
          server: serverSettings,
          level: logLevel,
          auth: Config.nested(authConfig, "auth"),
          sarCacheTTL: Config.nested(duration("sarCacheTTL"), "rbac"),
          k8s: Config.nested(k8sKeys, "kubernetes"),
          a2a: a2aConfig,
          llm: Config.nested(llmConfig, "llm"),
          storage: storageClientKeys
        })
      )
      expect(value.storage.tokenFile).toEqual(Option.some("/var/run/secrets/kubernetes.io/serviceaccount/token"))
      expect(Duration.toSeconds(value.sarCacheTTL)).toBe(45)
      expect(value.k8s).toEqual({ namespace: "kubemend-system", apiGroup: "kubemend.io" })
      expect(value.a2a.publicUrl).toEqual(Option.some("https://kubemend.example.com"))
      expect(value.llm).toMatchObject({ provider: "vertex_ai", model: "claude-sonnet", apiKeyFile: "/etc/kubemend/secrets/llm/api-key", phaseModels: {} })
      expect(value.gateway.interactiveEnabled).toBe(true)
      expect(value.gateway.severityTriageEnabled).toBe(true)
      // Monitoring is on by default: the metrics backend URL is derived, so svc_list_alerts registers.
      expect(value.gateway.metricsBackendUrl).toEqual(Option.some("https://thanos-querier.openshift-monitoring.svc:9091"))
      // The derived querier wants the service account's token and serves a service-CA certificate.
      expect(value.gateway.metricsBackendTokenFile).toEqual(Option.some("/var/run/secrets/kubernetes.io/serviceaccount/token"))
      expect(value.gateway.metricsBackendCaFile).toEqual(Option.some("/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt"))
      expect(value.gateway.rateLimit).toEqual({
        ipRequestsPerSec: 50,
        userRequestsPerSec: 7,
        toolCallsPerMinute: 60,
        maxConcurrentSessions: 100,
        maxSessionsPerUser: 10
      })
      expect(value.gateway.mcpEnabled).toBe(true)
      // Replicas share state through the CR's Valkey, under this platform's own prefix.
      expect(Option.getOrThrow(value.gateway.valkey)).toMatchObject({ host: "valkey.db.svc", port: 6379, keyPrefix: "kubemend:kubemend-system:gateway" })
      expect(value.gateway.agentUrl).toEqual(Option.some("https://kubemend-agent.kubemend-system.svc:8443"))
      expect(value.gateway.agentToken).toEqual({ tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token" })
      expect(value.storage.url).toBe("https://kubemend-storage.kubemend-system.svc:8080")
      expect(value.server).toMatchObject({ host: "0.0.0.0", port: 8443, healthPort: 8081, metricsPort: 9090 })
      expect(Duration.toSeconds(value.server.drainTimeout)).toBe(40)
      expect(value.level).toBe("info")
      expect(value.auth.providers.map((p) => [p.name, p.issuerURL, p.audiences])).toEqual([
        ["default", "https://issuer.example.com", ["kubemend-gateway"]],
        ["corp", "https://corp", ["kubemend"]]
      ])
      expect(value.auth.providers[1]?.claimMappings).toEqual({ groups: "roles" })
      expect(unread(file, asked)).toEqual([])
    }))

  it.effect("follows the CR: apiFrontend.enabled, monitoring off, local listeners and URLs", () =>
    Effect.gen(function* () {
      const spec = decode((s) => {
        s.apiFrontend.enabled = false
        s.monitoring = { enabled: false }
      })
      const file = renderServiceConfigs(spec, {
        ...ctx,
        serviceUrls: { agent: "http://127.0.0.1:4001", storage: "http://127.0.0.1:4002" },
        listeners: { gateway: { bindAddress: "127.0.0.1", port: 0, healthPort: 0, metricsPort: 0 } },
        allowInsecureIssuers: true,
        kubeconfig: "apiVersion: v1\nkind: Config\n"
      }).gateway
      const { value } = yield* load(
        file,
        Effect.all({
          gateway: gatewayConfig,
          server: serverSettings,
          auth: Config.nested(authConfig, "auth"),
          kubeconfig: Config.nested(Config.string("kubeconfig"), "kubernetes")
        })
      )
      expect(value.kubeconfig).toBe("apiVersion: v1\nkind: Config\n")
      expect(value.gateway.mcpEnabled).toBe(false)
      expect(value.gateway.metricsBackendUrl).toEqual(Option.none())
      expect(value.gateway.agentUrl).toEqual(Option.some("http://127.0.0.1:4001"))
      expect(value.server).toMatchObject({ host: "127.0.0.1", port: 0, healthPort: 0, metricsPort: 0 })
      expect(value.auth.allowInsecureIssuers).toBe(true)
    }))

  it("the tool prefix (its own and the agent's) follows the context", () => {
    const file = renderServiceConfigs(decode(), { ...ctx, toolPrefix: "kubernaut" }).gateway
    expect(file["toolPrefix"]).toBe("kubernaut")
    expect(file["agent"]).toMatchObject({ toolPrefix: "kubernaut" })
  })
})

describe("renderServiceConfigs: the agent's file", () => {
  it.effect("is read by AgentConfig, the LLM block, the interactive issuers and the listener", () =>
    Effect.gen(function* () {
      const spec = decode((s) => {
        s.agent.maxTurns = 12
        s.agent.interactive = { enabled: true, jwtProviders: [{ name: "gw", issuerURL: "https://gw", audiences: ["agent"] }] }
        s.agent.safety = { anomaly: { maxTotalToolCalls: 25 } }
        s.agent.alignmentCheck = { enabled: true, llm: { provider: "anthropic", model: "haiku", credentialsSecretName: "shadow" } }
        s.agent.llm = {
          ...s.agent.llm,
          temperature: "0.2",
          timeoutSeconds: 90,
          runtimeConfigMapName: "llm-runtime",
          phaseModels: { rca: { provider: "vertexAi", model: "bigger" } }
        }
      })
      const file = renderServiceConfigs(spec, ctx).agent
      const { asked, value } = yield* load(
        file,
        Effect.all({
          agent: Effect.flatMap(AgentConfig, Effect.succeed).pipe(Effect.provide(AgentConfig.layerConfig)),
          llm: Config.nested(llmConfig, "llm"),
          interactive: Effect.flatMap(AuthConfig, Effect.succeed).pipe(Effect.provide(InteractiveAuthConfigLive)),
          server: serverSettings,
          level: logLevel,
          k8s: k8sKeys,
          // core Storage.layerConfig's keys (its Config is not exported on its own).
          storage: Config.nested(Config.all({ url: Config.string("url"), tokenFile: Config.string("tokenFile") }), "storage"),
          alignmentLlm: Config.nested(
            Config.all({
              provider: Config.string("provider"),
              model: Config.string("model"),
              endpoint: Config.option(Config.string("endpoint"))
            }),
            "llm"
          ).pipe(Config.nested("alignmentCheck"))
        })
      )
      expect(value.k8s).toEqual({ namespace: "kubemend-system", apiGroup: "kubemend.io" })
      expect(value.storage).toEqual({
        url: "https://kubemend-storage.kubemend-system.svc:8080",
        tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"
      })
      expect(value.alignmentLlm).toEqual({ provider: "anthropic", model: "haiku", endpoint: Option.none() })
      expect(value.agent.maxTurns).toBe(12)
      expect(value.agent.interactive.enabled).toBe(true)
      expect(value.agent.maxTotalToolCalls).toBe(25)
      expect(value.agent.alignment.enabled).toBe(true)
      // Monitoring on by default: the investigation's Prometheus tools get the derived backend and the pod's token.
      expect(value.agent.prometheus).toMatchObject({
        url: "https://thanos-querier.openshift-monitoring.svc:9091",
        tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"
      })
      expect(value.llm.provider).toBe("vertex_ai")
      expect(value.llm.model).toBe("claude-sonnet")
      expect(value.llm.apiKeyFile).toBe("/etc/kubemend/secrets/llm/api-key")
      expect(value.llm.temperature).toBe(0.2)
      expect(Duration.toSeconds(value.llm.timeout)).toBe(90)
      expect(value.llm.phaseModels.rca).toEqual({ provider: "vertex_ai", model: "bigger" })
      expect(value.llm.runtimeConfigFile).toBe("/etc/kubemend/llm-runtime/llm-runtime.yaml")
      expect(value.interactive.providers.map((p) => p.name)).toEqual(["gw"])
      expect(value.server).toMatchObject({ port: 8443, healthPort: 8081, metricsPort: 9090 })
      expect(unread(file, asked)).toEqual([])
    }))

  it.effect("appends /v1 to an openai endpoint once and leaves temperature out unless set", () =>
    Effect.gen(function* () {
      const spec = decode((s) => {
        s.agent.llm = { provider: "openai", model: "gpt", credentialsSecretName: "llm", endpoint: "https://llm.example.com" }
      })
      const file = renderServiceConfigs(spec, ctx).agent
      const { value } = yield* load(file, Config.nested(llmConfig, "llm"))
      expect(value.endpoint).toBe("https://llm.example.com/v1")
      expect(value.temperature).toBeUndefined()
      const again = decode((s) => {
        s.agent.llm = { provider: "openai", model: "gpt", credentialsSecretName: "llm", endpoint: "https://x/v1" }
      })
      expect((renderServiceConfigs(again, ctx).agent["llm"] as any).endpoint).toBe("https://x/v1")
    }))
})

describe("renderServiceConfigs: the storage file", () => {
  it.effect("is read by StorageConfig and the listener: the CR's database with the mounted Secret files", () =>
    Effect.gen(function* () {
      const spec = decode((s) => {
        s.postgresql = { host: "pg.db.svc", port: 5433, secretName: "pg", sslMode: "verify-ca" }
        s.dataStorage = { retention: { defaultDays: 90 }, logging: { level: "DEBUG" } }
      })
      const file = renderServiceConfigs(spec, ctx).storage
      const { asked, value } = yield* load(
        file,
        Effect.all({
          storage: Effect.flatMap(StorageConfig, Effect.succeed).pipe(Effect.provide(StorageConfig.layerConfig)),
          server: serverSettings,
          level: logLevel,
          k8s: k8sKeys
        })
      )
      expect(value.storage.database).toMatchObject({
        _tag: "Params",
        host: "pg.db.svc",
        port: 5433,
        sslMode: "verify-ca",
        usernameFile: Option.some("/etc/kubemend/secrets/postgresql/username"),
        passwordFile: Option.some("/etc/kubemend/secrets/postgresql/password"),
        databaseFile: Option.some("/etc/kubemend/secrets/postgresql/database")
      })
      expect(value.storage.retention.defaultDays).toBe(90)
      expect(value.storage.apiGroup).toBe("kubemend.io")
      // The CR's valkey block: the dead-letter queue is a stream there, no TLS unless the CR asks.
      expect(Option.getOrThrow(value.storage.valkey)).toMatchObject({ host: "valkey.db.svc", port: 6379, tls: Option.none() })
      expect(value.server).toMatchObject({ port: 8080, healthPort: 8081, metricsPort: 9090 })
      expect(value.level).toBe("debug")
      expect(unread(file, asked)).toEqual([])
    }))

  it.effect("runs the embedded database when the context asks for it (the local platform)", () =>
    Effect.gen(function* () {
      const file = renderServiceConfigs(decode(), { ...ctx, embeddedDatabase: { dataDir: ".local/pg" } }).storage
      const { value } = yield* load(file, Effect.flatMap(StorageConfig, Effect.succeed).pipe(Effect.provide(StorageConfig.layerConfig)))
      expect(value.database).toMatchObject({ _tag: "Embedded", dataDir: ".local/pg" })
      // No Valkey on a user's machine: the dead-letter queue stays a file, unless the context asks for Valkey.
      expect(file["valkey"]).toBeUndefined()
      expect(Option.isNone(value.valkey)).toBe(true)
      const onValkey = renderServiceConfigs(decode(), { ...ctx, embeddedDatabase: { dataDir: ".local/pg" }, deadLetterQueue: "valkey" }).storage
      expect(onValkey["valkey"]).toEqual({ host: "valkey.db.svc", port: 6379 })
      const fileInCluster = renderServiceConfigs(decode(), { ...ctx, deadLetterQueue: "file" }).storage
      expect(fileInCluster["valkey"]).toBeUndefined()
    }))

  it.effect("renders the valkey block with TLS files; the password is an env var from the Secret, never in the file", () =>
    Effect.gen(function* () {
      const spec = decode((s) => {
        s.valkey = {
          host: "valkey.cache.svc",
          port: 6380,
          secretName: "valkey-auth",
          tls: { enabled: true, caSecretName: "valkey-ca", clientCertSecretName: "valkey-client" }
        }
      })
      const file = renderServiceConfigs(spec, ctx).storage
      expect(JSON.stringify(file["valkey"])).not.toContain("password")
      const secrets = storageValkeySecrets(spec)
      expect(secrets.env).toEqual([{ name: "STORAGE_VALKEY_PASSWORD", valueFrom: { secretKeyRef: { name: "valkey-auth", key: "password" } } }])
      expect(secrets.mounts).toEqual([
        { name: "valkey-ca", secretName: "valkey-ca", mountPath: "/etc/kubemend/secrets/valkey-ca", keys: ["ca.crt"] },
        { name: "valkey-client", secretName: "valkey-client", mountPath: "/etc/kubemend/secrets/valkey-client", keys: ["tls.crt", "tls.key"] }
      ])
      const { asked, value } = yield* load(file, Effect.flatMap(StorageConfig, Effect.succeed).pipe(Effect.provide(StorageConfig.layerConfig)))
      expect(Option.getOrThrow(value.valkey)).toMatchObject({
        host: "valkey.cache.svc",
        port: 6380,
        tls: Option.some({
          caFile: Option.some("/etc/kubemend/secrets/valkey-ca/ca.crt"),
          certFile: Option.some("/etc/kubemend/secrets/valkey-client/tls.crt"),
          keyFile: Option.some("/etc/kubemend/secrets/valkey-client/tls.key")
        })
      })
      expect(unread(file, asked).filter((key) => key.startsWith("valkey"))).toEqual([])
      // The variable the operator sets is the one the service reads.
      const env = ConfigProvider.fromMap(new Map([[secrets.env[0]!.name, "from-secret"]]), { pathDelim: "_" })
      const withEnv = yield* Effect.flatMap(StorageConfig, Effect.succeed).pipe(
        Effect.provide(StorageConfig.layerConfig),
        Effect.provide(Layer.setConfigProvider(providerFor("storage", file, env)))
      )
      expect(Option.map(Option.getOrThrow(withEnv.valkey).password, Redacted.value)).toEqual(Option.some("from-secret"))
      expect(storageValkeySecrets(decode()).mounts).toEqual([])
    }))
})
