/**
 * The storage service as tests run it: real PostgreSQL (own database per file), the dev Kubernetes API server
 * answering TokenReview, the real HttpApi on a loopback port, and a typed client holding a ServiceAccount token.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { DevKube } from "@kubemend/devkit/kube/index"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { apiPort, BoundPorts, ServerConfig } from "@kubemend/core/Servers"
import { StorageApi } from "@kubemend/core/StorageApi"
import { Context, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { StorageServiceLive } from "../../src/Api.ts"
import { StorageConfig, type StorageSettings } from "../../src/StorageConfig.ts"
import { testDatabaseUrl } from "./Postgres.ts"
import { type PgProxy, startProxy } from "./Proxy.ts"

export const namespace = "kubemend-system"

export interface HarnessShape {
  readonly baseUrl: string
  /** A ServiceAccount token TokenReview accepts (`system:serviceaccount:kubemend-system:gateway`). */
  readonly token: string
  readonly kube: DevKube
  readonly databaseUrl: string
  readonly dlqDir: string
  /** Present when the harness was built with `{ proxy: true }`: the service reaches PostgreSQL through it. */
  readonly proxy: PgProxy | undefined
  readonly healthUrl: string
  readonly metricsUrl: string
  /** Raw HTTP for edge cases; `token` defaults to the harness token, `null` sends none. */
  readonly fetch: (path: string, init?: RequestInit & { readonly token?: string | null }) => Promise<Response>
}

export class Harness extends Context.Tag("storage-test/Harness")<Harness, HarnessShape>() {}

/** The typed client of the shared contract, authenticated with the harness token. */
export const client = Effect.gen(function* () {
  const h = yield* Harness
  return yield* HttpApiClient.make(StorageApi, {
    baseUrl: h.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(h.token))
  })
}).pipe(Effect.provide(FetchHttpClient.layer))

/** Everything `StorageServiceLive` needs except the database settings, which `overrides` may adjust. */
export const harnessLayer = (
  overrides: (base: StorageSettings) => Partial<StorageSettings> = () => ({}),
  options: { readonly proxy?: boolean } = {}
) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const databaseUrl = yield* testDatabaseUrl
      const proxy = options.proxy === true ? yield* startProxy(databaseUrl) : undefined
      const kube = yield* DevKube.scoped({})
      const token = kube.registerServiceAccountToken(namespace, "gateway")
      yield* Effect.sync(() => kube.seed(storageGrants({ kind: "ServiceAccount", name: "gateway", namespace })))
      const dlqDir = yield* Effect.acquireRelease(
        Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "kubemend-dlq-"))),
        (d) => Effect.promise(() => Fs.rm(d, { recursive: true, force: true }))
      )
      const base: StorageSettings = {
        ...StorageConfig.defaults,
        database: { _tag: "Url", url: Redacted.make(proxy?.url ?? databaseUrl) },
        maxConnections: 8,
        writeTimeout: Duration.seconds(5),
        dlq: { capacity: 10_000, dir: dlqDir, replayInterval: Duration.millis(200) },
        retention: { ...StorageConfig.defaults.retention, enabled: false },
        export: { maxEvents: 10_000, signingKeyFile: Option.none() }
      }
      const settings = { ...base, ...overrides(base) }
      const k8s = K8sLive.layer({ namespace, kubeconfig: kube.kubeConfig() })
      const service = StorageServiceLive.pipe(
        Layer.provideMerge(Layer.mergeAll(StorageConfig.layer(settings), ServerConfig.layer(), k8s)),
        Layer.provideMerge(NodeContext.layer)
      )
      const harness = Layer.effect(
        Harness,
        Effect.gen(function* () {
          const port = yield* apiPort
          const ports = yield* BoundPorts
          const baseUrl = `http://127.0.0.1:${port}`
          return {
            baseUrl,
            token,
            kube,
            databaseUrl,
            dlqDir,
            proxy,
            healthUrl: `http://127.0.0.1:${ports.health}`,
            metricsUrl: `http://127.0.0.1:${ports.metrics}`,
            fetch: (path, init = {}) => {
              const { token: t, ...rest } = init
              const bearer = t === undefined ? token : t
              const headers = new Headers(rest.headers)
              if (bearer !== null) headers.set("authorization", `Bearer ${bearer}`)
              return fetch(`${baseUrl}${path}`, { ...rest, headers })
            }
          } satisfies HarnessShape
        })
      )
      return Layer.provideMerge(harness, service)
    })
  )

/**
 * What the operator grants a platform ServiceAccount (`storage-client`: read and write) plus, for tests of export
 * and legal holds, the `l3-audit` grant; the access suite (Access.test.ts) checks each rule on its own.
 */
export const storageGrants = (subject: { readonly kind: string; readonly name: string; readonly namespace?: string }) => {
  const role = (name: string, rules: ReadonlyArray<object>) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name },
    rules
  })
  const binding = (name: string) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: `${name}-${subject.name}` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects: [subject]
  })
  return [
    role("test-storage-client", [{ apiGroups: [""], resources: ["services"], verbs: ["get", "create"], resourceNames: ["kubemend-storage"] }]),
    role("test-audit-grants", [{ apiGroups: ["kubemend.io"], resources: ["audit"], verbs: ["use"], resourceNames: ["export", "legal-hold-release"] }]),
    binding("test-storage-client"),
    binding("test-audit-grants")
  ]
}

/** A valid audit event; `overrides` replace fields. */
export const auditEvent = (overrides: Record<string, unknown> = {}) => ({
  version: "1.0",
  event_type: "apifrontend.tool.executed",
  event_timestamp: new Date().toISOString(),
  event_category: "apifrontend",
  event_action: "executed",
  event_outcome: "success",
  correlation_id: "rr-test",
  actor_type: "user",
  actor_id: "alice",
  event_data: {
    event_type: "apifrontend.tool.executed",
    tool_name: "svc_list_remediations",
    session_id: "s-1",
    execution_duration_ms: 12,
    tool_outcome: "success"
  },
  ...overrides
})

export const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body)
})

/** The value of the first sample of `name` whose labels include `labels` (`reason="full"`) on /metrics. */
export const metric = (name: string, labels = "") =>
  Effect.gen(function* () {
    const h = yield* Harness
    const text = yield* Effect.promise(() => fetch(`${h.metricsUrl}/metrics`).then((r) => r.text()))
    const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels))
    return line === undefined ? undefined : Number(line.split(" ").pop())
  })

/** `check` again every 100 ms until `ok` holds (20 s at most). */
export const waitFor = <A, E, R>(check: Effect.Effect<A, E, R>, ok: (a: A) => boolean) =>
  check.pipe(
    Effect.filterOrFail(ok, () => "not yet"),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("20 seconds"))),
    Effect.orDie
  )
