/**
 * The config file each service reads (its `CONFIG_FILE`), rendered from the platform CR. Pure: the reconciler puts
 * the result into ConfigMaps, the local platform writes it to disk for child processes. The keys are exactly those
 * the service's config loader reads: `ServerConfig.layerConfig` (`port`, `healthPort`, `metricsPort`, `bindAddress`,
 * `shutdown.drainSeconds`, `tls.*`), `logging.level`, and the service's own loader (GatewayConfig, AgentConfig +
 * the core Llm/Auth blocks, StorageConfig).
 */
import type { PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { normalizeLlmProvider } from "@kubemend/core/domain/Platform/index"
import { exportKeyDir, exportKeyFileName } from "./ExportKey.ts"
import { apiPorts, consolePort, healthPort, metricsPort, paths, type ServiceName, serviceUrl, workloadName } from "./Names.ts"

export interface Listener {
  readonly bindAddress?: string
  readonly port?: number
  readonly healthPort?: number
  readonly metricsPort?: number
  /** PEM files: the serving pair (the API serves HTTPS) and the CA bundle the service trusts for its calls. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly caFile: string }
}

export interface RenderContext {
  /** Namespace of the platform CR (the controller namespace of every service). */
  readonly namespace: string
  readonly apiGroup: string
  /** Tool name prefix (`svc` -> `svc_list_remediations`). Default `svc`. */
  readonly toolPrefix?: string
  /** How the services reach each other. Default: the in-cluster Service DNS names. */
  readonly serviceUrls?: Partial<Record<ServiceName, string>>
  /** Monitoring backends; default: `spec.monitoring` URLs, else derived from the cluster's monitoring stack. */
  readonly monitoring?: { readonly metricsURL?: string; readonly alertManagerURL?: string }
  /** Listener overrides per service (the local platform binds loopback and picks ports). */
  readonly listeners?: Partial<Record<ServiceName, Listener>>
  /** File locations, default the pod mount paths. */
  readonly files?: {
    /** `null`: no key file (a local model that needs no key). */
    readonly llmApiKeyFile?: string | null
    readonly llmRuntimeConfigFile?: string
    readonly postgresDir?: string
    readonly dataDir?: string
    /** Bearer token file the gateway and agent present to storage; default the pod's service account token. */
    readonly serviceTokenFile?: string
  }
  /** Storage runs its embedded PostgreSQL instead of `spec.postgresql` (the local platform). */
  readonly embeddedDatabase?: { readonly dataDir: string; readonly port?: number }
  /**
   * Where storage keeps its dead-letter queue: `"valkey"`, a stream on the CR's `spec.valkey`, or `"file"`, an
   * append-only file under its data directory. Default: `"file"` when `embeddedDatabase` is set (a self-contained
   * storage: the local platform, whose machine has no Valkey although the CR must name one), else `"valkey"`.
   */
  readonly deadLetterQueue?: "valkey" | "file"
  /** Accept `http:` issuers and JWKS URLs (the local dev issuer). */
  readonly allowInsecureIssuers?: boolean
  /** Kubeconfig YAML text for the services (the local platform); in a cluster they use their service account. */
  readonly kubeconfig?: string
  /** The console as browsers reach it (origin); default `https://<console.route.host>`, else a port-forward's. */
  readonly consoleUrl?: string
  /**
   * The console's listener (the local platform), where its Secret's keys are and the CA bundle it trusts (default
   * the pod's mounts).
   */
  readonly console?: { readonly listener?: Listener; readonly secretDir?: string; readonly caFile?: string }
}

export interface ServiceConfigs {
  readonly gateway: Record<string, unknown>
  readonly agent: Record<string, unknown>
  readonly storage: Record<string, unknown>
  readonly signals: Record<string, unknown>
}

/** Derived when monitoring is on and no URL is given: the in-cluster Prometheus-compatible querier and Alertmanager. */
export const defaultMonitoring = {
  metricsURL: "https://thanos-querier.openshift-monitoring.svc:9091",
  alertManagerURL: "https://alertmanager-main.openshift-monitoring.svc:9094"
} as const

/**
 * The CA of the derived querier's serving certificate (OpenShift's service CA, which the cluster injects into every
 * pod's service account mount); a URL given in the CR or by the caller is checked against the system's CAs.
 */
export const serviceCaFile = "/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt"

/** The metrics and alert-manager URLs the platform uses, or none when monitoring is off. */
export const monitoringUrls = (spec: PlatformSpec, ctx: Pick<RenderContext, "monitoring">) =>
  spec.monitoring.enabled
    ? {
      metricsURL: ctx.monitoring?.metricsURL ?? spec.monitoring.metricsURL ?? defaultMonitoring.metricsURL,
      alertManagerURL: ctx.monitoring?.alertManagerURL ?? spec.monitoring.alertManagerURL ?? defaultMonitoring.alertManagerURL
    }
    : undefined

/** Drops undefined values so absent keys stay absent in the YAML. */
const defined = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

const level = (l: string) => l.toLowerCase()

const common = (svc: ServiceName, ctx: RenderContext, drainSeconds: number, logLevel: string) => {
  const l = ctx.listeners?.[svc] ?? {}
  return defined({
    bindAddress: l.bindAddress ?? "0.0.0.0",
    port: l.port ?? apiPorts[svc],
    healthPort: l.healthPort ?? healthPort,
    metricsPort: l.metricsPort ?? metricsPort,
    // In a cluster, the files of the pod's `tls` volume (ServingCerts.ts).
    tls: l.tls ?? { certFile: `${paths.tlsDir}/tls.crt`, keyFile: `${paths.tlsDir}/tls.key`, caFile: `${paths.tlsDir}/ca.crt` },
    shutdown: { drainSeconds },
    logging: { level: level(logLevel) }
  })
}

const urlOf = (svc: ServiceName, ctx: RenderContext) => ctx.serviceUrls?.[svc] ?? serviceUrl(svc, ctx.namespace)

/** Where the gateway and agent reach storage, authenticated with their service account token (TokenReview). */
const storageClient = (ctx: RenderContext) => ({ url: urlOf("storage", ctx), tokenFile: ctx.files?.serviceTokenFile ?? paths.serviceAccountToken })

const providers = (list: ReadonlyArray<PlatformSpec["apiFrontend"]["auth"]["jwtProviders"][number]>) =>
  list.map((p) => defined({ ...p, audiences: [...p.audiences] }))

/**
 * The console's browser-facing origin: given by the caller, else its route's host over https, else what
 * `kubectl port-forward svc/kubemend-console 4180` gives.
 */
export const consoleUrl = (spec: PlatformSpec, ctx: Pick<RenderContext, "consoleUrl">) =>
  ctx.consoleUrl ?? (spec.console.route.host === undefined ? `http://localhost:${consolePort}` : `https://${spec.console.route.host}`)

const renderGateway = (spec: PlatformSpec, ctx: RenderContext): Record<string, unknown> => {
  const af = spec.apiFrontend
  const monitoring = monitoringUrls(spec, ctx)
  const prefix = ctx.toolPrefix ?? "svc"
  return {
    ...common("gateway", ctx, af.shutdown.drainSeconds, af.logging.level),
    // The console's proxy passes its browsers' Origin on; the gateway lets only that one in.
    ...(spec.console.enabled ? { allowedOrigins: [consoleUrl(spec, ctx)] } : {}),
    kubernetes: defined({ namespace: ctx.namespace, apiGroup: ctx.apiGroup, kubeconfig: ctx.kubeconfig }),
    toolPrefix: prefix,
    mcp: { enabled: af.enabled },
    interactive: { enabled: spec.agent.interactive.enabled },
    severityTriage: { enabled: af.severityTriage.enabled },
    // The querier authorizes the gateway's service account token; svc_list_alerts presents it.
    ...(monitoring === undefined ? {} : {
      metricsBackend: defined({
        url: monitoring.metricsURL,
        tokenFile: ctx.files?.serviceTokenFile ?? paths.serviceAccountToken,
        caFile: monitoring.metricsURL === defaultMonitoring.metricsURL ? serviceCaFile : undefined
      })
    }),
    rateLimit: { ...af.rateLimit },
    // One proxy list for the platform (the console proxy, ingress or Route in front of both listeners).
    ...(spec.gateway.config.trustedProxyCIDRs?.length ? { trustedProxyCIDRs: [...spec.gateway.config.trustedProxyCIDRs] } : {}),
    auth: defined({
      issuerURL: af.auth.issuerURL,
      audience: af.auth.audience,
      jwksURL: af.auth.jwksURL,
      jwtProviders: providers(af.auth.jwtProviders),
      allowInsecureIssuers: ctx.allowInsecureIssuers ?? af.auth.allowInsecureIssuers
    }),
    rbac: { sarCacheTTL: af.rbac.sarCacheTTL },
    // The token opens the agent's investigation event streams (the gateway's ServiceAccount holds `agent-client`).
    agent: { url: urlOf("agent", ctx), toolPrefix: prefix, tokenFile: ctx.files?.serviceTokenFile ?? paths.serviceAccountToken },
    storage: storageClient(ctx),
    ...(af.externalURL === undefined ? {} : { a2a: { publicUrl: af.externalURL } }),
    // The A2A loop's model: the agent's main LLM, without the per-phase overrides of investigations.
    llm: renderLlm(spec, ctx, false),
    // Replicas share MCP sessions, A2A tasks, caps and rate limits through the CR's Valkey, under a prefix per
    // platform so two platforms on one Valkey stay apart. Locally (embedded database) the local platform decides.
    ...(ctx.embeddedDatabase === undefined ? { valkey: { ...renderValkey(spec.valkey), keyPrefix: `kubemend:${ctx.namespace}:gateway` } } : {})
  }
}

/** For openai the operator appends `/v1` (document 3); the adapter does not append it twice. */
const llmEndpoint = (provider: string, endpoint: string | undefined) =>
  endpoint === undefined || provider !== "openai" || /\/v1\/?$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/+$/, "")}/v1`

const renderLlm = (spec: PlatformSpec, ctx: RenderContext, phased = true): Record<string, unknown> => {
  const llm = spec.agent.llm
  const provider = normalizeLlmProvider(llm.provider)
  const phaseModels = llm.phaseModels === undefined ? undefined : Object.fromEntries(
    Object.entries(llm.phaseModels).map(([phase, o]) => [
      phase,
      defined({
        ...o,
        provider: o.provider === undefined ? undefined : normalizeLlmProvider(o.provider),
        endpoint: llmEndpoint(o.provider === undefined ? provider : normalizeLlmProvider(o.provider), o.endpoint)
      })
    ])
  )
  return defined({
    provider,
    model: llm.model,
    endpoint: llmEndpoint(provider, llm.endpoint),
    apiKeyFile: ctx.files?.llmApiKeyFile === null ? undefined : ctx.files?.llmApiKeyFile ?? paths.llmApiKeyFile,
    temperature: llm.temperature,
    maxRetries: llm.maxRetries,
    timeoutSeconds: llm.timeoutSeconds,
    azureApiVersion: llm.azureApiVersion,
    vertexProject: llm.vertexProject,
    vertexLocation: llm.vertexLocation,
    bedrockRegion: llm.bedrockRegion,
    tlsCaFile: llm.tlsCaFile,
    // Client id and secret come from the Secret as environment (AGENT_LLM_OAUTH2_CLIENT_ID/_SECRET), never the file.
    oauth2: llm.oauth2?.enabled === true
      ? defined({ tokenURL: llm.oauth2.tokenURL, scopes: llm.oauth2.scopes === undefined ? undefined : [...llm.oauth2.scopes] })
      : undefined,
    phaseModels: phased ? phaseModels : undefined,
    runtimeConfigFile: !phased || llm.runtimeConfigMapName === undefined
      ? undefined
      : ctx.files?.llmRuntimeConfigFile ?? paths.runtimeFile
  })
}

const renderAgent = (spec: PlatformSpec, ctx: RenderContext): Record<string, unknown> => {
  const a = spec.agent
  const alignmentLlm = a.alignmentCheck.llm
  const monitoring = monitoringUrls(spec, ctx)
  return {
    ...common("agent", ctx, a.shutdown.drainSeconds, a.logging.level),
    ...defined({ namespace: ctx.namespace, apiGroup: ctx.apiGroup, kubeconfig: ctx.kubeconfig }),
    maxTurns: a.maxTurns,
    session: { ttl: a.session.ttl },
    safety: {
      sanitization: { ...a.safety.sanitization },
      anomaly: { ...a.safety.anomaly }
    },
    summarizer: { threshold: a.summarizer.threshold, maxToolOutputSize: a.summarizer.maxToolOutputSize },
    alignmentCheck: defined({
      enabled: a.alignmentCheck.enabled,
      timeout: a.alignmentCheck.timeout,
      maxStepTokens: a.alignmentCheck.maxStepTokens,
      // A dedicated model for the shadow agent; its key comes from the environment (AGENT_ALIGNMENT_CHECK_LLM_API_KEY).
      llm: alignmentLlm === undefined ? undefined : defined({
        provider: alignmentLlm.provider === undefined ? undefined : normalizeLlmProvider(alignmentLlm.provider),
        model: alignmentLlm.model,
        endpoint: alignmentLlm.endpoint
      })
    }),
    interactive: defined({
      enabled: a.interactive.enabled,
      inactivityTimeout: a.interactive.inactivityTimeout,
      jwtProviders: providers(a.interactive.jwtProviders),
      allowInsecureIssuers: ctx.allowInsecureIssuers
    }),
    llm: renderLlm(spec, ctx),
    storage: storageClient(ctx),
    // The investigation's Prometheus tools query the platform's metrics backend with the agent's own token.
    ...(monitoring === undefined ? {} : {
      monitoring: { prometheus: { url: monitoring.metricsURL, tokenFile: ctx.files?.serviceTokenFile ?? paths.serviceAccountToken } }
    })
  }
}

/** Where the storage pod mounts the Valkey TLS Secrets (`ca.crt`; `tls.crt` + `tls.key`). */
export const valkeyPaths = {
  caDir: `${paths.secretsDir}/valkey-ca`,
  clientCertDir: `${paths.secretsDir}/valkey-client`
} as const

/** The environment variable storage reads the Valkey password from (`valkey.password` under `STORAGE_`). */
export const valkeyPasswordEnv = "STORAGE_VALKEY_PASSWORD"

/**
 * What the storage pod takes from Secrets for the Valkey dead-letter queue, never written into its ConfigMap: the
 * password as an environment variable referencing `spec.valkey.secretName` key `password`, and the TLS Secrets as
 * read-only mounts at the paths the rendered file names.
 */
export const storageValkeySecrets = (spec: PlatformSpec) => valkeySecrets(spec, valkeyPasswordEnv)

/** The same Secrets for the gateway's shared state (sessions, tasks, caps and rate limits across replicas). */
export const gatewayValkeySecrets = (spec: PlatformSpec) => valkeySecrets(spec, "GATEWAY_VALKEY_PASSWORD")

const valkeySecrets = (spec: PlatformSpec, passwordEnv: string) => {
  const tls = spec.valkey.tls
  const mounts: Array<{ readonly name: string; readonly secretName: string; readonly mountPath: string; readonly keys: ReadonlyArray<string> }> = []
  if (tls?.enabled === true && tls.caSecretName !== undefined) {
    mounts.push({ name: "valkey-ca", secretName: tls.caSecretName, mountPath: valkeyPaths.caDir, keys: ["ca.crt"] })
  }
  if (tls?.enabled === true && tls.clientCertSecretName !== undefined) {
    mounts.push({ name: "valkey-client", secretName: tls.clientCertSecretName, mountPath: valkeyPaths.clientCertDir, keys: ["tls.crt", "tls.key"] })
  }
  return {
    env: [{ name: passwordEnv, valueFrom: { secretKeyRef: { name: spec.valkey.secretName, key: "password" } } }],
    mounts
  }
}

const renderValkey = (v: PlatformSpec["valkey"]): Record<string, unknown> =>
  defined({
    host: v.host,
    port: v.port,
    tls: v.tls?.enabled === true
      ? defined({
        enabled: true,
        caFile: v.tls.caSecretName === undefined ? undefined : `${valkeyPaths.caDir}/ca.crt`,
        certFile: v.tls.clientCertSecretName === undefined ? undefined : `${valkeyPaths.clientCertDir}/tls.crt`,
        keyFile: v.tls.clientCertSecretName === undefined ? undefined : `${valkeyPaths.clientCertDir}/tls.key`
      })
      : undefined
  })

const renderStorage = (spec: PlatformSpec, ctx: RenderContext): Record<string, unknown> => {
  const ds = spec.dataStorage
  const pg = spec.postgresql
  const dir = ctx.files?.postgresDir ?? paths.postgresDir
  const database = ctx.embeddedDatabase === undefined
    ? {
      postgresql: defined({
        host: pg.host,
        port: pg.port,
        sslMode: pg.sslMode,
        usernameFile: `${dir}/username`,
        passwordFile: `${dir}/password`,
        databaseFile: `${dir}/database`
      })
    }
    : { embeddedPostgres: defined({ dataDir: ctx.embeddedDatabase.dataDir, port: ctx.embeddedDatabase.port }) }
  const dlq = ctx.deadLetterQueue ?? (ctx.embeddedDatabase === undefined ? "valkey" : "file")
  return {
    ...common("storage", ctx, 15, ds.logging.level),
    namespace: ctx.namespace,
    apiGroup: ctx.apiGroup,
    dataDir: ctx.files?.dataDir ?? paths.dataDir,
    ...database,
    // No `valkey` block: storage falls back to its file dead-letter queue. The password is not in the file (see
    // `storageValkeySecrets`).
    ...(dlq === "valkey" ? { valkey: renderValkey(spec.valkey) } : {}),
    retention: defined({
      enabled: ds.retention.enabled,
      interval: ds.retention.interval,
      batchSize: ds.retention.batchSize,
      defaultDays: ds.retention.defaultDays
    }),
    // The operator's Secret (platform/ExportKey.ts), so exports verify across restarts.
    export: { signingKeyFile: `${exportKeyDir}/${exportKeyFileName}` }
  }
}

/**
 * Signal ingestion from the CR's `gateway` block (SignalsConfig's keys); senders are reviewed against its own
 * Service name, which the `gateway-signal-source` ClusterRole grants `create` on.
 */
const renderSignals = (spec: PlatformSpec, ctx: RenderContext): Record<string, unknown> => {
  const g = spec.gateway
  return {
    ...common("signals", ctx, 15, g.logging.level),
    namespace: ctx.namespace,
    apiGroup: ctx.apiGroup,
    ...(ctx.kubeconfig === undefined ? {} : { kubeconfig: ctx.kubeconfig }),
    k8sRequestTimeout: g.config.k8sRequestTimeout,
    deduplicationCooldown: g.config.deduplicationCooldown,
    ...(g.config.trustedProxyCIDRs?.length ? { trustedProxyCIDRs: [...g.config.trustedProxyCIDRs] } : {}),
    ...(g.config.corsAllowedOrigins?.length ? { corsAllowedOrigins: [...g.config.corsAllowedOrigins] } : {}),
    accessResourceName: workloadName("signals"),
    events: { enabled: true },
    storage: storageClient(ctx)
  }
}

/** The service config files, as plain objects (serialize with YAML for a ConfigMap or a file). */
export const renderServiceConfigs = (spec: PlatformSpec, ctx: RenderContext): ServiceConfigs => ({
  gateway: renderGateway(spec, ctx),
  agent: renderAgent(spec, ctx),
  storage: renderStorage(spec, ctx),
  signals: renderSignals(spec, ctx)
})

/**
 * The console's config (packages/console ConsoleConfig): the gateway it proxies to, the issuer (the console's own
 * `auth.issuerURL`, else the first JWT provider's, else `apiFrontend.auth.issuerURL`), the Secret's keys as files,
 * and its callback under its browser-facing URL. Its listeners are those of every service, the API on 4180.
 */
export const renderConsoleConfig = (spec: PlatformSpec, ctx: RenderContext): Record<string, unknown> => {
  const auth = spec.apiFrontend.auth
  const issuer = spec.console.auth?.issuerURL ?? auth.jwtProviders[0]?.issuerURL ?? auth.issuerURL
  const l = ctx.console?.listener ?? {}
  const secrets = ctx.console?.secretDir ?? paths.consoleSecretDir
  return defined({
    bindAddress: l.bindAddress ?? "0.0.0.0",
    port: l.port ?? consolePort,
    healthPort: l.healthPort ?? healthPort,
    metricsPort: l.metricsPort ?? metricsPort,
    // The CA its calls to the gateway trust: the local platform's, or in a cluster the pod's `tls` mount (caVolume).
    tls: { caFile: ctx.console?.caFile ?? `${paths.tlsDir}/ca.crt` },
    shutdown: { drainSeconds: spec.apiFrontend.shutdown.drainSeconds },
    gatewayURL: urlOf("gateway", ctx),
    issuerURL: issuer,
    clientIdFile: `${secrets}/client-id`,
    clientSecretFile: `${secrets}/client-secret`,
    cookieSecretFile: `${secrets}/cookie-secret`,
    redirectURL: `${consoleUrl(spec, ctx)}/oauth2/callback`,
    a2aTimeout: "3600s",
    mcpTimeout: "30s"
  })
}
