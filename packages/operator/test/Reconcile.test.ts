import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as YAML from "yaml"
import { namespace, platform, spec, world } from "./PlatformHarness.ts"

describe("platform reconcile", () => {
  it.live("validates, migrates, deploys and reaches Running once the Deployments report ready", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      w.kube.put(platform())

      const first = yield* w.reconcile
      expect(w.status().phase).toBe("Migrating")
      expect(first.requeueAfter).toBeDefined()
      const jobs = w.kube.list("batch/v1", "Job", namespace)
      expect(jobs).toHaveLength(1)
      const command = (jobs[0] as any).spec.template.spec.containers[0].command
      expect(command).toEqual(["node", "--conditions=kubemend-dist", "--enable-source-maps", "packages/storage/dist/main.js", "migrate"])
      expect(w.deployment("gateway")).toBeUndefined()

      w.completeJobs()
      yield* w.reconcile
      expect(w.status().phase).toBe("Deploying")
      expect(w.status().lastMigrationHash).toMatch(/^[0-9a-f]{16}$/)
      expect(w.status().lastMigrationTime).toMatch(/^\d{4}-\d{2}-\d{2}T/)
      expect(w.cr()?.metadata.finalizers).toEqual(["kubemend.io/cleanup"])

      w.reportReady()
      const settled = yield* w.reconcile
      expect(w.status().phase).toBe("Running")
      expect(settled.requeueAfter).toEqual(Duration.minutes(5))
      expect(w.status().services).toEqual([
        { name: "gateway", ready: true, readyReplicas: 2, desiredReplicas: 2 },
        { name: "agent", ready: true, readyReplicas: 2, desiredReplicas: 2 },
        { name: "storage", ready: true, readyReplicas: 2, desiredReplicas: 2 },
        { name: "signals", ready: true, readyReplicas: 2, desiredReplicas: 2 }
      ])
      expect(w.condition("ServicesDeployed")).toMatchObject({ status: "True" })
      expect(w.condition("BYOValidated")).toMatchObject({ status: "True" })
      expect(w.condition("MigrationComplete")).toMatchObject({ status: "True" })
      expect(w.condition("AnsibleReady")).toMatchObject({ status: "False", reason: "Disabled" })
      expect(w.status().observedGeneration).toBe(w.cr()?.metadata.generation)
    })))

  it.live("turns Degraded when a ready Deployment stops being ready", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle()
      expect(w.status().phase).toBe("Running")
      w.reportReady(["gateway", "storage", "signals"])
      const r = yield* w.reconcile
      expect(w.status().phase).toBe("Degraded")
      expect(r.requeueAfter).toEqual(Duration.seconds(10))
      expect(w.status().services.find((s: any) => s.name === "agent")).toEqual({ name: "agent", ready: false, readyReplicas: 0, desiredReplicas: 2 })
      expect(w.condition("ServicesDeployed")).toMatchObject({ status: "False", reason: "NotReady", message: "not ready: agent" })
    })))

  it.live("renders each Deployment with probes, metrics port, drain-aware grace and the config it mounts", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle(spec((s) => {
        s.apiFrontend.shutdown = { drainSeconds: 45 }
        s.image = { pullPolicy: "Always", pullSecrets: [{ name: "regcred" }], overrides: { agent: "registry.example/agent:1" } }
      }))
      const gateway = w.deployment("gateway") as any
      const pod = gateway.spec.template.spec
      const container = pod.containers[0]
      expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: 8081 })
      expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: 8081 })
      expect(container.ports.map((p: any) => p.containerPort)).toEqual([8443, 8081, 9090])
      expect(pod.terminationGracePeriodSeconds).toBe(55)
      expect(container.imagePullPolicy).toBe("Always")
      expect(pod.imagePullSecrets).toEqual([{ name: "regcred" }])
      expect(container.env[0]).toEqual({ name: "CONFIG_FILE", value: "/etc/kubemend/config/config.yaml" })
      expect(gateway.metadata.ownerReferences[0]).toMatchObject({ kind: "Kubemend", name: "kubemend", controller: true })
      expect((w.deployment("agent") as any).spec.template.spec.containers[0].image).toBe("registry.example/agent:1")

      const cm = w.kube.get("v1", "ConfigMap", "kubemend-gateway", namespace) as any
      const config = YAML.parse(cm.data["config.yaml"])
      expect(config).toMatchObject({ port: 8443, healthPort: 8081, metricsPort: 9090, shutdown: { drainSeconds: 45 } })
      const svc = w.kube.get("v1", "Service", "kubemend-storage", namespace) as any
      expect(svc.spec.ports.map((p: any) => p.port)).toEqual([8080, 9090])
      // Storage's dead-letter queue is a Valkey stream in a cluster: the password comes from the CR's Secret.
      const storage = (w.deployment("storage") as any).spec.template.spec.containers[0]
      expect(storage.env).toContainEqual({ name: "STORAGE_VALKEY_PASSWORD", valueFrom: { secretKeyRef: { name: "valkey", key: "password" } } })
      const storageConfig = YAML.parse((w.kube.get("v1", "ConfigMap", "kubemend-storage", namespace) as any).data["config.yaml"])
      expect(storageConfig.valkey.host).toBeDefined()
      // Gateway replicas share their state through the same Valkey, under this platform's prefix.
      expect(config.valkey).toMatchObject({ host: storageConfig.valkey.host, keyPrefix: `kubemend:${namespace}:gateway` })
      const gatewayEnv = (gateway as any).spec.template.spec.containers[0].env
      expect(gatewayEnv).toContainEqual({ name: "GATEWAY_VALKEY_PASSWORD", valueFrom: { secretKeyRef: { name: "valkey", key: "password" } } })
      expect(YAML.parse((w.kube.get("v1", "ConfigMap", "kubemend-agent", namespace) as any).data["config.yaml"]).summarizer)
        .toEqual({ threshold: 8000, maxToolOutputSize: 100000 })
      expect(w.kube.get("v1", "ServiceAccount", "kubemend-agent", namespace)).toBeDefined()
    })))

  it.live("a changed config rolls the Deployment's hash; an unchanged one does not", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle()
      const hashOf = (svc: string) => (w.deployment(svc) as any).spec.template.metadata.annotations["kubemend.io/config-hash"]
      const before = { gateway: hashOf("gateway"), agent: hashOf("agent") }
      yield* w.reconcile
      expect(hashOf("gateway")).toBe(before.gateway)

      w.updateSpec(spec((s) => {
        s.apiFrontend.rateLimit = { userRequestsPerSec: 5 }
      }))
      yield* w.reconcile
      expect(hashOf("gateway")).not.toBe(before.gateway)
      expect(hashOf("agent")).toBe(before.agent)
      expect(w.status().phase).toBe("Deploying")
      const cm = w.kube.get("v1", "ConfigMap", "kubemend-gateway", namespace) as any
      expect(YAML.parse(cm.data["config.yaml"]).rateLimit.userRequestsPerSec).toBe(5)
    })))

  it.live("skips the migration when its hash is unchanged and runs a new Job when the database changes", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle()
      const firstHash = w.status().lastMigrationHash
      w.updateSpec(spec((s) => {
        s.apiFrontend.rateLimit = { ipRequestsPerSec: 9 }
      }))
      yield* w.reconcile
      expect(w.kube.list("batch/v1", "Job", namespace)).toHaveLength(1)
      expect(w.status().lastMigrationHash).toBe(firstHash)

      w.updateSpec(spec((s) => {
        s.postgresql.host = "pg2.db.svc"
      }))
      yield* w.reconcile
      expect(w.status().phase).toBe("Migrating")
      expect(w.kube.list("batch/v1", "Job", namespace)).toHaveLength(2)
    })))

  it.live("a failed migration Job puts the platform in Error with MigrationComplete False", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      w.kube.put(platform())
      yield* w.reconcile
      for (const job of w.kube.list("batch/v1", "Job", namespace)) {
        w.kube.put({ ...job, status: { failed: 4, conditions: [{ type: "Failed", status: "True" }] } })
      }
      yield* w.reconcile
      expect(w.status().phase).toBe("Error")
      expect(w.condition("MigrationComplete")).toMatchObject({ status: "False", reason: "JobFailed" })
    })))

  it.live("the console and network policies appear when enabled and go when disabled", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle(spec((s) => {
        s.console = { enabled: true, auth: { secretName: "console-auth" }, route: { host: "console.example.com" } }
        s.networkPolicies = { enabled: true, monitoringNamespace: "monitoring", gatewayIngressNamespaces: ["ingress"] }
      }))
      expect(w.status().phase).toBe("Running")
      expect(w.status().services.map((s: any) => s.name)).toEqual(["gateway", "agent", "storage", "signals", "console"])
      const consoleCm = w.kube.get("v1", "ConfigMap", "kubemend-console", namespace) as any
      const consoleConfig = YAML.parse(consoleCm.data["console.yaml"])
      expect(consoleConfig.issuerURL).toBe("https://issuer.example.com")
      expect(consoleConfig).toMatchObject({
        port: 4180,
        a2aTimeout: "3600s",
        mcpTimeout: "30s",
        redirectURL: "https://console.example.com/oauth2/callback",
        clientIdFile: "/etc/kubemend/secrets/console/client-id",
        cookieSecretFile: "/etc/kubemend/secrets/console/cookie-secret"
      })
      // One image for every service: the console is its package in the release image.
      const consolePod = (w.deployment("console") as any).spec.template.spec
      expect(consolePod.containers[0].command).toEqual(["node", "--conditions=kubemend-dist", "--enable-source-maps", "packages/console/dist/main.js"])
      expect(consolePod.volumes).toContainEqual({ name: "console-auth", secret: expect.objectContaining({ secretName: "console-auth" }) })
      // The gateway lets the console's browsers in.
      const gatewayCm = w.kube.get("v1", "ConfigMap", "kubemend-gateway", namespace) as any
      expect(YAML.parse(gatewayCm.data["config.yaml"]).allowedOrigins).toEqual(["https://console.example.com"])
      const policies = w.kube.list("networking.k8s.io/v1", "NetworkPolicy", namespace).map((p) => p.metadata.name).sort()
      expect(policies).toContain("kubemend-default-deny-ingress")
      expect(policies).toContain("kubemend-metrics-ingress")
      // Pods may reach PostgreSQL and Valkey (storage's dead-letter queue, the gateway's shared state) on the CR's ports.
      const egress = w.kube.get("networking.k8s.io/v1", "NetworkPolicy", "kubemend-egress", namespace) as any
      const egressPorts = egress.spec.egress.flatMap((rule: any) => (rule.ports ?? []).map((p: any) => p.port))
      expect(egressPorts).toEqual(expect.arrayContaining([5432, 6379]))
      const deny = w.kube.get("networking.k8s.io/v1", "NetworkPolicy", "kubemend-default-deny-ingress", namespace) as any
      expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress"] })
      // The operator's lifecycle controllers (in their own namespace) still reach the agent and storage.
      const operatorPeer = { namespaceSelector: {}, podSelector: { matchLabels: { "app.kubernetes.io/name": "kubemend-operator" } } }
      for (const svc of ["agent", "storage"]) {
        const p = w.kube.get("networking.k8s.io/v1", "NetworkPolicy", `kubemend-${svc}-ingress`, namespace) as any
        expect(p.spec.ingress[0].from).toContainEqual(operatorPeer)
      }

      w.updateSpec(spec())
      yield* w.reconcile
      expect(w.deployment("console")).toBeUndefined()
      expect(w.kube.list("networking.k8s.io/v1", "NetworkPolicy", namespace)).toEqual([])
    })))

  it.live("refuses to take over a Deployment someone else created, with a Warning event", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      w.kube.seed([{
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "kubemend-gateway", namespace },
        spec: { selector: { matchLabels: { app: "x" } }, template: { metadata: { labels: { app: "x" } }, spec: { containers: [] } } }
      }])
      w.kube.put(platform())
      yield* w.reconcile
      w.completeJobs()
      const r = yield* w.reconcile
      expect(r.requeueAfter).toBeUndefined()
      expect(w.status().phase).toBe("Error")
      expect(w.condition("ServicesDeployed")).toMatchObject({ status: "False", reason: "ResourceNotOwned" })
      const events = w.kube.list("v1", "Event", namespace)
      expect(events.some((e: any) => e.type === "Warning" && e.reason === "ResourceNotOwned")).toBe(true)
      expect((w.deployment("gateway") as any).spec.selector.matchLabels).toEqual({ app: "x" })
    })))

  it.live("a CR that does not exist is nothing to do", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      expect(yield* w.reconcile).toEqual({})
    })))
})
