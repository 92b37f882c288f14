/**
 * Tunables of the remediation lifecycle controllers. Keys mirror the platform CR blocks they come from
 * (`remediationOrchestrator.*`, `aiAnalysis.confidenceThreshold`) plus a `lifecycle` block for what the CR does not
 * name (agent address, poll interval, the local platform's signal stream). Read from the
 * operator's provider: camelCase in the YAML file, `OPERATOR_REMEDIATION_ORCHESTRATOR_TIMEOUTS_ANALYZING`-style
 * environment overrides. Durations are Go strings (`30s`, `15m`).
 */
import { duration, intInRange } from "@kubemend/core/Config"
import { Config, ConfigError, Context, Duration, Effect, Either, Layer, Option, type Redacted } from "effect"

export interface PhaseTimeouts {
  /** From the RR's start to any terminal phase (Blocked and AwaitingApproval excluded). */
  readonly global: Duration.Duration
  readonly processing: Duration.Duration
  readonly analyzing: Duration.Duration
  /** The `Running` phase (the WorkflowExecution). */
  readonly executing: Duration.Duration
  /** Approval deadline: a RAR's `requiredBy` is its creation plus this (default 15 minutes). */
  readonly awaitingApproval: Duration.Duration
  readonly verifying: Duration.Duration
}

export interface RoutingSettings {
  /** Consecutive failures on one fingerprint that block new RRs (`ConsecutiveFailures`). */
  readonly consecutiveFailureThreshold: number
  readonly consecutiveFailureCooldown: Duration.Duration
  /** Same workflow on the same target within this period blocks (`RecentlyRemediated`). */
  readonly recentlyRemediatedCooldown: Duration.Duration
  /** `ExponentialBackoff` after a workflow failure: base doubled per failure, capped. */
  readonly exponentialBackoffBase: Duration.Duration
  readonly exponentialBackoffMax: Duration.Duration
  /** Remediated RRs on one fingerprint within the window that make the chain ineffective (`IneffectiveChain`). */
  readonly ineffectiveChainThreshold: number
  readonly ineffectiveTimeWindow: Duration.Duration
  /** Recheck of `DuplicateInProgress`, `ResourceBusy` and `UnmanagedResource`. */
  readonly recheckInterval: Duration.Duration
  /** Inconclusive investigations of one RR before it blocks (`ConsecutiveFailures` cooldown). */
  readonly inconclusiveStrikes: number
}

export interface AsyncPropagation {
  /** EA `hashComputeDelay` of a GitOps-managed target (Argo CD, Flux labels or annotations). */
  readonly gitOpsSyncDelay: Duration.Duration
  /** Added to it for a target of a custom resource kind (an operator reconciles it). */
  readonly operatorReconcileDelay: Duration.Duration
  /** EA `alertCheckDelay` of a proactive signal (a predicted alert resolves later than the fix). */
  readonly proactiveAlertDelay: Duration.Duration
}

export interface LifecycleSettings {
  /** Run the lifecycle controllers in this operator. */
  readonly enabled: boolean
  /** Base address of the investigation agent's REST API (`/api/v1/incident/...` is appended). */
  readonly agentUrl: string
  /** Deadline of one agent request. */
  readonly agentRequestTimeout: Duration.Duration
  /** The bearer token the agent reviews: a fixed one, or else `agentTokenFile` (default the pod's ServiceAccount token). */
  readonly agentToken: Option.Option<Redacted.Redacted>
  readonly agentTokenFile: Option.Option<string>
  /** How often a running agent session is polled. */
  readonly pollInterval: Duration.Duration
  /** Sessions regenerated after a 404 on poll (agent restarted) before the analysis fails. */
  readonly maxSessionRegenerations: number
  /** Minimum confidence for auto-approval (`aiAnalysis.confidenceThreshold`); below it a RAR is created. */
  readonly confidenceThreshold: number
  readonly timeouts: PhaseTimeouts
  readonly routing: RoutingSettings
  /** Wait after the workflow before the effectiveness assessment looks at the target (EA `stabilizationWindow`). */
  readonly stabilizationWindow: Duration.Duration
  /** Delays of targets that change after the workflow (`remediationOrchestrator.asyncPropagation`). */
  readonly asyncPropagation: AsyncPropagation
  /** Stop after analysis with outcome `DryRun`: no approval, execution or assessment resources. */
  readonly dryRun: boolean
  /** Terminal RRs are deleted this long after they finished. */
  readonly retention: Duration.Duration
  /** Channel of the NotificationRequests sent on escalation. */
  readonly escalationChannel: string
  /** Concurrent reconciles per controller. */
  readonly workers: number
  readonly queueCapacity: number
  /** Retry delay of a failed reconcile, doubling per failure up to the max. */
  readonly backoffBase: Duration.Duration
  readonly backoffMax: Duration.Duration
  /** Every object is reconciled again this often even without events. */
  readonly resyncPeriod: Duration.Duration
  /** How long the platform CR's overrides of these settings are cached. */
  readonly platformRefresh: Duration.Duration
  /**
   * The policy engine: Open Policy Agent's REST API (in a cluster the OPA the operator deploys; locally the devkit's
   * stand-in), loaded with `policy.rego` and `approval.rego` from the ConfigMaps the platform CR names.
   */
  readonly policy: {
    readonly url: string
    /** Deadline of one evaluation; past it the safe answer is taken (approval required). */
    readonly requestTimeout: Duration.Duration
    /** How often the ConfigMaps are read and changed policies pushed (every push is retried this often too). */
    readonly syncInterval: Duration.Duration
  }
}

const timeoutDefaults: PhaseTimeouts = {
  global: Duration.hours(1),
  processing: Duration.minutes(5),
  analyzing: Duration.minutes(10),
  executing: Duration.minutes(30),
  awaitingApproval: Duration.minutes(15),
  verifying: Duration.minutes(30)
}

const routingDefaults: RoutingSettings = {
  consecutiveFailureThreshold: 3,
  consecutiveFailureCooldown: Duration.hours(1),
  recentlyRemediatedCooldown: Duration.minutes(5),
  exponentialBackoffBase: Duration.minutes(1),
  exponentialBackoffMax: Duration.minutes(10),
  ineffectiveChainThreshold: 3,
  ineffectiveTimeWindow: Duration.hours(4),
  recheckInterval: Duration.seconds(30),
  inconclusiveStrikes: 3
}

export interface LifecycleOverrides extends Partial<Omit<LifecycleSettings, "timeouts" | "routing" | "policy" | "asyncPropagation">> {
  readonly policy?: Partial<LifecycleSettings["policy"]>
  readonly asyncPropagation?: Partial<AsyncPropagation>
  readonly timeouts?: Partial<PhaseTimeouts>
  readonly routing?: Partial<RoutingSettings>
}

export class LifecycleConfig extends Context.Tag("@kubemend/operator/LifecycleConfig")<LifecycleConfig, LifecycleSettings>() {
  static readonly defaults: LifecycleSettings = {
    enabled: true,
    agentUrl: "http://127.0.0.1:8080",
    agentToken: Option.none(),
    agentTokenFile: Option.none(),
    agentRequestTimeout: Duration.seconds(10),
    pollInterval: Duration.seconds(2),
    maxSessionRegenerations: 5,
    confidenceThreshold: 0.8,
    timeouts: timeoutDefaults,
    routing: routingDefaults,
    stabilizationWindow: Duration.minutes(5),
    asyncPropagation: { gitOpsSyncDelay: Duration.minutes(3), operatorReconcileDelay: Duration.minutes(1), proactiveAlertDelay: Duration.minutes(5) },
    dryRun: false,
    retention: Duration.hours(24),
    escalationChannel: "ops-escalation",
    workers: 2,
    queueCapacity: 1000,
    backoffBase: Duration.millis(500),
    backoffMax: Duration.minutes(2),
    resyncPeriod: Duration.minutes(5),
    platformRefresh: Duration.seconds(10),
    policy: { url: "https://kubemend-opa:8181", requestTimeout: Duration.seconds(2), syncInterval: Duration.seconds(10) }
  }

  /** Defaults with overrides (nested blocks merge). */
  static readonly make = (o: LifecycleOverrides = {}): LifecycleSettings => {
    const d = LifecycleConfig.defaults
    return {
      ...d,
      ...o,
      timeouts: { ...d.timeouts, ...o.timeouts },
      routing: { ...d.routing, ...o.routing },
      asyncPropagation: { ...d.asyncPropagation, ...o.asyncPropagation },
      policy: { ...d.policy, ...o.policy }
    }
  }

  static readonly layer = (o: LifecycleOverrides = {}) => Layer.succeed(LifecycleConfig, LifecycleConfig.make(o))

  static readonly layerConfig = Layer.effect(LifecycleConfig, Effect.suspend(() => settingsConfig))
}

const d = LifecycleConfig.defaults
const dur = (name: string, fallback: Duration.Duration) => duration(name).pipe(Config.withDefault(fallback))
const bool = (name: string, fallback: boolean) => Config.boolean(name).pipe(Config.withDefault(fallback))
const int = (name: string, min: number, max: number, fallback: number) => intInRange(name, min, max).pipe(Config.withDefault(fallback))

/** The CR keeps the threshold a decimal string ("0.8"). */
const threshold = Config.string("confidenceThreshold").pipe(
  Config.mapOrFail((s) => {
    const n = Number(s)
    return s.trim() !== "" && Number.isFinite(n) && n >= 0 && n <= 1
      ? Either.right(n)
      : Either.left(ConfigError.InvalidData([], `must be a decimal between 0 and 1, got "${s}"`))
  }),
  Config.withDefault(d.confidenceThreshold)
)

const timeouts = Config.all({
  global: dur("global", d.timeouts.global),
  processing: dur("processing", d.timeouts.processing),
  analyzing: dur("analyzing", d.timeouts.analyzing),
  executing: dur("executing", d.timeouts.executing),
  awaitingApproval: dur("awaitingApproval", d.timeouts.awaitingApproval),
  verifying: dur("verifying", d.timeouts.verifying)
}).pipe(Config.nested("timeouts"))

const r = d.routing
const routing = Config.all({
  consecutiveFailureThreshold: int("consecutiveFailureThreshold", 1, 100, r.consecutiveFailureThreshold),
  consecutiveFailureCooldown: dur("consecutiveFailureCooldown", r.consecutiveFailureCooldown),
  recentlyRemediatedCooldown: dur("recentlyRemediatedCooldown", r.recentlyRemediatedCooldown),
  exponentialBackoffBase: dur("exponentialBackoffBase", r.exponentialBackoffBase),
  exponentialBackoffMax: dur("exponentialBackoffMax", r.exponentialBackoffMax),
  ineffectiveChainThreshold: int("ineffectiveChainThreshold", 1, 100, r.ineffectiveChainThreshold),
  ineffectiveTimeWindow: dur("ineffectiveTimeWindow", r.ineffectiveTimeWindow),
  recheckInterval: dur("recheckInterval", r.recheckInterval),
  inconclusiveStrikes: int("inconclusiveStrikes", 1, 100, r.inconclusiveStrikes)
}).pipe(Config.nested("routing"))

const orchestrator = Config.all({
  timeouts,
  routing,
  stabilizationWindow: dur("stabilizationWindow", d.stabilizationWindow).pipe(Config.nested("effectivenessAssessment")),
  asyncPropagation: Config.all({
    gitOpsSyncDelay: dur("gitOpsSyncDelay", d.asyncPropagation.gitOpsSyncDelay),
    operatorReconcileDelay: dur("operatorReconcileDelay", d.asyncPropagation.operatorReconcileDelay),
    proactiveAlertDelay: dur("proactiveAlertDelay", d.asyncPropagation.proactiveAlertDelay)
  }).pipe(Config.nested("asyncPropagation")),
  dryRun: bool("dryRun", d.dryRun),
  retention: dur("period", d.retention).pipe(Config.nested("retention"))
}).pipe(Config.nested("remediationOrchestrator"))

const lifecycle = Config.all({
  enabled: bool("enabled", d.enabled),
  agentUrl: Config.string("agentUrl").pipe(Config.withDefault(d.agentUrl)),
  agentToken: Config.option(Config.redacted("agentToken")),
  agentTokenFile: Config.option(Config.string("agentTokenFile")),
  agentRequestTimeout: dur("agentRequestTimeout", d.agentRequestTimeout),
  pollInterval: dur("pollInterval", d.pollInterval),
  maxSessionRegenerations: int("maxSessionRegenerations", 0, 100, d.maxSessionRegenerations),
  escalationChannel: Config.string("escalationChannel").pipe(Config.withDefault(d.escalationChannel)),
  workers: int("workers", 1, 64, d.workers),
  queueCapacity: int("queueCapacity", 1, 1_000_000, d.queueCapacity),
  backoffBase: dur("backoffBase", d.backoffBase),
  backoffMax: dur("backoffMax", d.backoffMax),
  resyncPeriod: dur("resyncPeriod", d.resyncPeriod),
  platformRefresh: dur("platformRefresh", d.platformRefresh),
  policy: Config.all({
    url: Config.string("url").pipe(Config.withDefault(d.policy.url)),
    requestTimeout: dur("requestTimeout", d.policy.requestTimeout),
    syncInterval: dur("syncInterval", d.policy.syncInterval)
  }).pipe(Config.nested("policy"))
}).pipe(Config.nested("lifecycle"))

const settingsConfig: Config.Config<LifecycleSettings> = Config.all({
  lifecycle,
  orchestrator,
  confidenceThreshold: threshold.pipe(Config.nested("aiAnalysis"))
}).pipe(Config.map(({ confidenceThreshold, lifecycle, orchestrator }) => ({ ...lifecycle, ...orchestrator, confidenceThreshold })))
