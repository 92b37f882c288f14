/** The local platform as one scoped Effect: devkit up, cluster seeded, configs rendered, services started. */
import { DevKube } from "@kubemend/devkit/kube/index"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import { demoAlerts, make as makeAlerts } from "@kubemend/devkit/Alerts"
import { make as makeOpa } from "@kubemend/devkit/Opa"
import * as ScriptedLlm from "@kubemend/devkit/ScriptedLlm"
import { decodePlatformSpec } from "@kubemend/core/domain/Platform/index"
import { noConsole, personas } from "@kubemend/core/Personas"
import { duration } from "@kubemend/core/Config"
import { trustAuthority } from "@kubemend/core/Tls/Trust"
import { Config, Duration, Effect, Either, Option } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Yaml from "yaml"
import { notificationInbox } from "./NotificationInbox.ts"
import { renderConsoleConfig, renderServiceConfigs } from "@kubemend/operator/platform/RenderConfig"
import { runLocalKubelet } from "@kubemend/devkit/kubelet/Kubelet"
import { startControllers } from "./Controllers.ts"
import { seedCluster, serviceIdentity } from "./Cluster.ts"
import { demoNamespace, imageWorkingSets, workflowNamespace } from "./Demo.ts"
import { localScripts } from "./Investigations.ts"
import { choosePorts } from "./Ports.ts"
import { localTls } from "./Tls.ts"
import { spawnService, waitHealthy } from "./Processes.ts"
import { type Ports, replicaNotes, runReplicas } from "./Replicas.ts"
import { sharedDatabase } from "./Database.ts"
import { gatewaySharesState, localValkey, withGatewaySharedState } from "./SharedState.ts"
import {
  alertmanagerIdentity,
  alertmanagerObjects,
  apiGroup,
  audience,
  consoleSecret,
  llmFrom,
  namespace,
  platformCr,
  referencedObjects,
  toolPrefix
} from "./Platform.ts"
import { runSignalGenerator } from "./SignalGenerator.ts"
import { awaitRbac, paced, registerWorkflows } from "./Bootstrap.ts"
import { printSummary, reportWhenRunning, type StackJson } from "./Summary.ts"

const root = Path.resolve(Path.dirname(new URL(import.meta.url).pathname), "..", "..", "..")

export const localPlatform = Effect.gen(function* () {
  const started = Date.now()
  const autoPorts = (yield* Config.string("LOCAL_PORTS").pipe(Config.withDefault("fixed"))) === "auto"
  const quiet = (yield* Config.string("LOCAL_QUIET").pipe(Config.withDefault("false"))) === "true"
  // How many processes of each service (LOCAL_REPLICAS=2 shows the platform's high availability on one machine).
  const replicas = yield* Config.integer("LOCAL_REPLICAS").pipe(
    Config.withDefault(1),
    Config.validate({
      message: "LOCAL_REPLICAS must be a whole number from 1 to 5",
      validation: (n) => n >= 1 && n <= 5
    })
  )
  // State lives under the repo by default; tests point it elsewhere so they never touch a developer's platform.
  const stateRoot = yield* Config.string("LOCAL_STATE_DIR").pipe(Config.withDefault(root))
  // The pace of the remediations a person watches (tests shorten it): how long the local kubelet lets a workflow
  // Job's pod run before it performs the action, how long the assessment waits, and how often a new signal comes.
  const pace = yield* Config.all({
    execution: duration("LOCAL_EXECUTION_TIME").pipe(Config.withDefault(Duration.seconds(5))),
    stabilization: duration("LOCAL_STABILIZATION_WINDOW").pipe(Config.withDefault(Duration.minutes(1))),
    signals: duration("LOCAL_SIGNAL_INTERVAL").pipe(Config.withDefault(Duration.seconds(45))),
    // How long the scripted model takes to answer (each turn of an investigation), so one can be caught running.
    llmLatency: duration("LOCAL_LLM_LATENCY").pipe(Config.withDefault(Duration.zero))
  })
  const dir = Path.join(stateRoot, ".local")
  Fs.mkdirSync(dir, { recursive: true })
  const ports = yield* choosePorts(autoPorts)

  const kube = yield* DevKube.scoped({ port: ports.kube, apiGroup })
  // The console is a confidential client of the dev issuer, as it would be of a real identity provider.
  const consoleKeys = {
    "client-id": "kubemend-console",
    "client-secret": randomBytes(24).toString("base64url"),
    "cookie-secret": randomBytes(32).toString("base64url")
  }
  const issuer = yield* makeIssuer({ port: ports.issuer, audience, clients: { [consoleKeys["client-id"]]: consoleKeys["client-secret"] } })
  const llmServer = yield* ScriptedLlm.scoped({ port: ports.llm, scripts: localScripts, latencyMs: Duration.toMillis(pace.llmLatency) })
  const alerts = yield* makeAlerts({ port: ports.alerts })
  // Demo notifications (approvals waiting, escalations, ineffective remediations) are delivered here.
  const inbox = yield* notificationInbox()
  const llm = llmFrom(process.env, llmServer.url)

  const cr = paced(platformCr(issuer.url, llm, alerts.url), pace.stabilization)
  yield* seedCluster(kube, root, [...referencedObjects(llm), consoleSecret(consoleKeys), ...alertmanagerObjects, cr])
  const spec = Either.getOrThrowWith(decodePlatformSpec(cr.spec), (issues) => new Error(JSON.stringify(issues)))

  const identities = {
    gateway: yield* serviceIdentity(kube, dir, "gateway"),
    agent: yield* serviceIdentity(kube, dir, "agent"),
    storage: yield* serviceIdentity(kube, dir, "storage"),
    operator: yield* serviceIdentity(kube, dir, "operator"),
    signals: yield* serviceIdentity(kube, dir, "signals")
  }
  const alertmanagerToken = kube.registerServiceAccountToken(alertmanagerIdentity.namespace, alertmanagerIdentity.name)
  // APIs serve HTTPS with the devkit CA's certificates, and this process (the operator, the controllers, the signal
  // generator) trusts that CA, as each service does through `tls.caFile`; health and metrics stay plain HTTP.
  const tls = yield* localTls(dir)
  trustAuthority("local", tls.caPem)
  // The policy engine: OPA's REST API over the in-process Rego subset (no OPA binary here), over HTTPS with a devkit
  // certificate as the operator-deployed OPA; the operator loads it with policy.rego and approval.rego from the CR's
  // ConfigMaps, as it loads OPA in a cluster.
  const opaServing = yield* tls.serving("opa")
  const opa = yield* makeOpa({ tls: { certPem: Fs.readFileSync(opaServing.certFile, "utf8"), keyPem: Fs.readFileSync(opaServing.keyFile, "utf8") } })
  // Each replica has a certificate of its own (CN kubemend-<svc>-<i>), so a client can tell which one it reached.
  const servingOf = (name: string, index: number) => tls.serving(replicas === 1 ? name : `${name}-${index}`)
  const valkey = yield* localValkey(replicas)
  const api = (port: number) => `https://127.0.0.1:${port}`
  const url = (port: number) => `http://127.0.0.1:${port}`
  const apiKeyFile = Path.join(dir, "llm-api-key")
  Fs.writeFileSync(apiKeyFile, llm.apiKey, { mode: 0o600 })

  const embeddedDataDir = Path.join(stateRoot, ".data", "postgres")
  const consoleSecretDir = Path.join(dir, "console-oidc")
  Fs.mkdirSync(consoleSecretDir, { recursive: true })
  for (const [key, value] of Object.entries(consoleKeys)) Fs.writeFileSync(Path.join(consoleSecretDir, key), value, { mode: 0o600 })
  const renderCtx = {
    namespace,
    apiGroup,
    toolPrefix,
    serviceUrls: { gateway: api(ports.gateway.port), agent: api(ports.agent.port), storage: api(ports.storage.port), signals: api(ports.signals.port) },
    monitoring: { metricsURL: alerts.url, alertManagerURL: alerts.url },
    files: { llmApiKeyFile: apiKeyFile, dataDir: Path.join(stateRoot, ".data") },
    embeddedDatabase: { dataDir: embeddedDataDir },
    allowInsecureIssuers: true,
    consoleUrl: url(ports.console.port),
    console: { listener: { bindAddress: "127.0.0.1", ...ports.console }, secretDir: consoleSecretDir, caFile: tls.caFile }
  }
  // Replica i > 0 keeps its files (audit buffers, the file dead-letter queue) apart from the first one's.
  const dataDirOf = (index: number) => Path.join(stateRoot, ".data", ...(index === 0 ? [] : [`replica-${index}`]))
  // As the operator renders the Services: a client stays on one gateway (until its state is shared) and one agent
  // (its investigation sessions are its own) replica.
  const balancingOf = (name: string) => name === "agent" || (name === "gateway" && !gatewaySharesState(valkey)) ? "sticky" as const : "round-robin" as const
  const gatewayValkeyFiles = {
    passwordFile: Path.join(dir, "valkey-password"),
    keyPrefix: `kubemend-local:${createHash("sha256").update(dir).digest("hex").slice(0, 12)}:gateway`
  }
  const suffix = (index: number) => (replicas === 1 ? "" : `-${index}`)

  const startOne = (name: "gateway" | "agent" | "storage" | "signals", index: number, listening: Ports) =>
    Effect.gen(function* () {
      const identity = identities[name]
      const rendered = renderServiceConfigs(spec, {
        ...renderCtx,
        listeners: { [name]: { bindAddress: "127.0.0.1", ...listening, tls: yield* servingOf(name, index) } },
        files: { ...renderCtx.files, dataDir: dataDirOf(index) }
      })[name]
      const base = name === "gateway" ? withGatewaySharedState(rendered, valkey, gatewayValkeyFiles) : rendered
      // Each service presents its own ServiceAccount's token (to storage, and the gateway to the metrics backend and agent).
      const config = {
        ...base,
        storage: { ...(rendered["storage"] as object), tokenFile: identity.tokenFile },
        ...(rendered["metricsBackend"] === undefined ? {} : { metricsBackend: { ...(rendered["metricsBackend"] as object), tokenFile: identity.tokenFile } }),
        // The gateway opens the agent's investigation event streams with it.
        ...(name === "gateway" ? { agent: { ...(rendered["agent"] as object), tokenFile: identity.tokenFile } } : {}),
        // The export signing key outlives restarts (storage creates it on first start), so old exports still verify.
        ...(name === "storage" ? { export: { ...(rendered["export"] as object), signingKeyFile: Path.join(dir, "export-signing-key.pem") } } : {})
      }
      const configFile = Path.join(dir, `${name}${suffix(index)}.yaml`)
      Fs.writeFileSync(configFile, Yaml.stringify(config))
      const proc = yield* spawnService(
        {
          name,
          label: `${name}${suffix(index)}`,
          root,
          configFile,
          quiet,
          env: { KUBECONFIG: identity.kubeconfigFile, ...(name === "storage" && Option.isSome(database) ? { DATABASE_URL: database.value } : {}) }
        },
        Duration.seconds(10)
      )
      yield* waitHealthy(proc, `${url(listening.healthPort)}/healthz`, Duration.seconds(60))
      return proc
    })
  const start = (name: "gateway" | "agent" | "storage" | "signals") =>
    runReplicas(ports[name], replicas, { scheme: "https", balancing: balancingOf(name) }, (index, listening) => startOne(name, index, listening))

  // The operator first: storage and the agent admit only callers the RBAC it renders grants, so the platform's
  // roles and bindings must exist before the services call each other. The local kubelet makes its Jobs and
  // Deployments report back, performs the workflow Jobs' actions, keeps the demo workloads' pods, and fires the
  // alerts they show.
  yield* runLocalKubelet(kube, {
    platformNamespace: namespace,
    readyz: {
      gateway: `${url(ports.gateway.healthPort)}/readyz`,
      agent: `${url(ports.agent.healthPort)}/readyz`,
      storage: `${url(ports.storage.healthPort)}/readyz`,
      signals: `${url(ports.signals.healthPort)}/readyz`,
      console: `${url(ports.console.healthPort)}/readyz`
    },
    apiGroup,
    workflowNamespace,
    executionTime: pace.execution,
    demoNamespace,
    imageWorkingSets,
    alerts,
    staticAlerts: demoAlerts().filter((a) => a.labels["namespace"] !== demoNamespace)
  })
  const controllers = yield* startControllers({
    count: replicas,
    root,
    dir,
    kubeconfig: kube.kubeConfig(),
    kubeconfigFile: identities.operator.kubeconfigFile,
    token: identities.operator.token,
    tokenFile: identities.operator.tokenFile,
    apiGroup,
    namespace,
    caFile: tls.caFile,
    agentUrl: api(ports.agent.port),
    storageUrl: api(ports.storage.port),
    policyUrl: opa.url,
    inboxUrl: inbox.url,
    workflowNamespace
  })
  yield* awaitRbac(kube)

  // One storage replica runs its embedded database itself; several share one in a process of its own.
  const database = replicas === 1
    ? Option.none<string>()
    : Option.some(yield* sharedDatabase({ root, dir, dataDir: embeddedDataDir, quiet }))
  const storage = yield* start("storage")
  yield* registerWorkflows(api(ports.storage.port), identities.gateway.token)
  const [agent, gateway] = yield* Effect.all([start("agent"), start("gateway")], { concurrency: 2 })
  // After the others: a third TypeScript process loading at once slows every start on a small machine.
  const signals = yield* start("signals")
  const consoleReplicas = yield* runReplicas(
    ports.console,
    replicas,
    { scheme: "http", balancing: "round-robin" },
    (index, listening) =>
      Effect.gen(function* () {
        const consoleConfigFile = Path.join(dir, `console${suffix(index)}.yaml`)
        const listener = { bindAddress: "127.0.0.1", ...listening }
        Fs.writeFileSync(consoleConfigFile, Yaml.stringify(renderConsoleConfig(spec, { ...renderCtx, console: { ...renderCtx.console, listener } })))
        const proc = yield* spawnService(
          { name: "console", label: `console${suffix(index)}`, root, configFile: consoleConfigFile, quiet },
          Duration.seconds(10)
        )
        yield* waitHealthy(proc, `${url(listening.healthPort)}/healthz`, Duration.seconds(60))
        return proc
      })
  )

  // The remediation lifecycle (in process) and a trickle of new signals, so a connected client sees remediations move.
  yield* controllers.servicesUp
  yield* runSignalGenerator({
    signalsUrl: api(ports.signals.port),
    token: alertmanagerToken,
    managedNamespace: demoNamespace,
    unmanagedNamespace: "legacy-batch",
    interval: pace.signals,
    maxSignals: 200
  })

  const tokens = Object.fromEntries(
    yield* Effect.forEach([...personas, noConsole], (p) => Effect.map(issuer.persona(p), (t) => [p, t] as const))
  )
  const stack: StackJson = {
    gateway: { url: api(ports.gateway.port), healthUrl: url(ports.gateway.healthPort), metricsUrl: url(ports.gateway.metricsPort), replicas: gateway },
    agent: { url: api(ports.agent.port), healthUrl: url(ports.agent.healthPort), metricsUrl: url(ports.agent.metricsPort), replicas: agent },
    storage: { url: api(ports.storage.port), healthUrl: url(ports.storage.healthPort), metricsUrl: url(ports.storage.metricsPort), replicas: storage },
    signals: { url: api(ports.signals.port), healthUrl: url(ports.signals.healthPort), metricsUrl: url(ports.signals.metricsPort), replicas: signals },
    tls: { caFile: tls.caFile },
    ...Option.match(controllers.processes, { onNone: () => ({}), onSome: (c) => ({ controllers: c }) }),
    console: {
      url: url(ports.console.port),
      healthUrl: url(ports.console.healthPort),
      metricsUrl: url(ports.console.metricsPort),
      replicas: consoleReplicas
    },
    kube: { url: kube.url },
    issuer: { url: issuer.url },
    llm: { url: llmServer.url, provider: llm.provider, model: llm.model },
    alerts: { url: alerts.url },
    policy: { url: opa.url },
    notifications: { url: inbox.url, deliveriesUrl: inbox.deliveriesUrl },
    namespace,
    apiGroup,
    toolPrefix,
    tokens,
    serviceTokens: {
      gateway: identities.gateway.token,
      agent: identities.agent.token,
      operator: identities.operator.token,
      alertmanager: alertmanagerToken
    }
  }
  // Written whole, then renamed: whoever waits for stack.json (a script, a test) never reads half of it.
  Fs.writeFileSync(Path.join(dir, "stack.json.tmp"), JSON.stringify(stack, null, 2) + "\n")
  Fs.renameSync(Path.join(dir, "stack.json.tmp"), Path.join(dir, "stack.json"))
  printSummary(stack, Date.now() - started)
  if (replicas > 1) process.stdout.write(replicaNotes(stack, valkey))
  const status = (o: { readonly status?: unknown } | undefined) => (o?.status ?? {}) as { readonly phase?: string }
  yield* reportWhenRunning(
    () => status(kube.get(cr.apiVersion, cr.kind, cr.metadata.name, namespace)).phase,
    `${namespace}/${cr.metadata.name}`,
    Date.now()
  )
  yield* Effect.addFinalizer(() => Effect.sync(() => process.stdout.write("\nkubemend: draining and stopping…\n")))
  return yield* Effect.never
}).pipe(Effect.annotateLogs("service", "local"), Effect.tapErrorCause(Effect.logError))
