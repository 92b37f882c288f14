/**
 * The operator's tunables. From its config file (`CONFIG_FILE`, camelCase) with `OPERATOR_*` environment overrides
 * (e.g. `OPERATOR_WATCH_NAMESPACE`, `OPERATOR_WORKERS`); durations are Go strings (`30s`, `5m`).
 */
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { duration, intInRange } from "@kubemend/core/Config"
import * as Election from "@kubemend/core/LeaderElection"
import { Config, ConfigError, Context, Duration, Effect, Either, Layer, Option } from "effect"

export interface OperatorSettings {
  /** Namespace whose platform CRs are reconciled; none: every namespace (one CR per namespace). */
  readonly watchNamespace: Option.Option<string>
  /** The platform's API group (`kubemend.io`). */
  readonly apiGroup: string
  /** Tool name prefix used in the `tool-<persona>` ClusterRoles (`svc`). */
  readonly toolPrefix: string
  /** Release image every service runs (`node --conditions=kubemend-dist packages/<svc>/dist/main.js`, see platform/ServiceCommand.ts); `spec.image.overrides` wins. */
  readonly image: string
  /** Concurrent reconciles (distinct keys; one key is never reconciled twice at once). */
  readonly workers: number
  /** Distinct keys the work queue holds before adds wait. */
  readonly queueCapacity: number
  /** First retry delay of a failed reconcile; doubles per failure of the same key. */
  readonly backoffBase: Duration.Duration
  /** Cap of the retry delay. */
  readonly backoffMax: Duration.Duration
  /** Requeue of a settled (Running) platform: the world is re-read even without events. */
  readonly resyncPeriod: Duration.Duration
  /** Requeue while a rollout or migration is in progress, or the platform is Degraded. */
  readonly progressRequeue: Duration.Duration
  /** Requeue of a platform in Error (a missing Secret may appear later). */
  readonly errorRequeue: Duration.Duration
  /** Server-side timeout of one watch request; the informer then watches again from the last resourceVersion. */
  readonly watchTimeout: Duration.Duration
  /** Cap of the informer's relist/reconnect backoff. */
  readonly watchBackoffMax: Duration.Duration
  /**
   * The operator's own ServiceAccount: its lifecycle, catalog and notification controllers call storage and the
   * agent with its token, so each platform binds it to `storage-client` and `agent-client`.
   */
  readonly serviceAccount: { readonly namespace: string; readonly name: string }
  /**
   * Leader election of the operator's controllers (client-go semantics, see core LeaderElection): a Lease in
   * `namespace` (default the operator's namespace); `identity` is the pod name (the manifest sets it from the
   * Downward API), else `<host>_<pid>`.
   */
  readonly leaderElection: {
    readonly leaseName: string
    readonly namespace: Option.Option<string>
    readonly identity: Option.Option<string>
    readonly leaseDuration: Duration.Duration
    readonly renewDeadline: Duration.Duration
    readonly retryPeriod: Duration.Duration
  }
}

export class OperatorConfig extends Context.Tag("@kubemend/operator/OperatorConfig")<OperatorConfig, OperatorSettings>() {
  static readonly defaults: OperatorSettings = {
    watchNamespace: Option.none(),
    apiGroup: "kubemend.io",
    toolPrefix: "svc",
    image: "ghcr.io/kubemend/kubemend:0.1.0",
    workers: 2,
    queueCapacity: 1000,
    backoffBase: Duration.millis(500),
    backoffMax: Duration.minutes(5),
    resyncPeriod: Duration.minutes(5),
    progressRequeue: Duration.seconds(10),
    errorRequeue: Duration.seconds(30),
    watchTimeout: Duration.minutes(5),
    watchBackoffMax: Duration.seconds(30),
    serviceAccount: { namespace: "kubemend-operator", name: "kubemend-operator" },
    leaderElection: {
      leaseName: "kubemend-operator",
      namespace: Option.none(),
      identity: Option.none(),
      ...Election.defaults
    }
  }

  /** For tests and in-process use: defaults with overrides. */
  static readonly layer = (overrides: Partial<OperatorSettings> = {}) => Layer.succeed(OperatorConfig, { ...OperatorConfig.defaults, ...overrides })

  static readonly layerConfig = Layer.effect(OperatorConfig, Effect.suspend(() => settingsConfig))
}

const d = OperatorConfig.defaults
const dur = (name: string, fallback: Duration.Duration) => duration(name).pipe(Config.withDefault(fallback))

const settingsConfig: Config.Config<OperatorSettings> = Config.all({
  watchNamespace: Config.option(Config.string("watchNamespace")).pipe(Config.map(Option.filter((s) => s !== ""))),
  apiGroup: Config.string("apiGroup").pipe(Config.withDefault(d.apiGroup)),
  toolPrefix: Config.string("toolPrefix").pipe(Config.withDefault(d.toolPrefix)),
  image: Config.string("image").pipe(Config.withDefault(d.image)),
  workers: intInRange("workers", 1, 64).pipe(Config.withDefault(d.workers)),
  queueCapacity: intInRange("queueCapacity", 1, 1_000_000).pipe(Config.withDefault(d.queueCapacity)),
  backoffBase: dur("backoffBase", d.backoffBase),
  backoffMax: dur("backoffMax", d.backoffMax),
  resyncPeriod: dur("resyncPeriod", d.resyncPeriod),
  progressRequeue: dur("progressRequeue", d.progressRequeue),
  errorRequeue: dur("errorRequeue", d.errorRequeue),
  watchTimeout: dur("watchTimeout", d.watchTimeout),
  watchBackoffMax: dur("watchBackoffMax", d.watchBackoffMax),
  serviceAccount: Config.all({
    namespace: Config.string("namespace").pipe(Config.withDefault(d.serviceAccount.namespace)),
    name: Config.string("name").pipe(Config.withDefault(d.serviceAccount.name))
  }).pipe(Config.nested("serviceAccount")),
  leaderElection: Config.all({
    leaseName: Config.string("leaseName").pipe(Config.withDefault(d.leaderElection.leaseName)),
    namespace: Config.option(Config.string("namespace")).pipe(Config.map(Option.filter((s) => s !== ""))),
    identity: Config.option(Config.string("identity")).pipe(Config.map(Option.filter((s) => s !== ""))),
    leaseDuration: dur("leaseDuration", d.leaderElection.leaseDuration),
    renewDeadline: dur("renewDeadline", d.leaderElection.renewDeadline),
    retryPeriod: dur("retryPeriod", d.leaderElection.retryPeriod)
  }).pipe(
    Config.mapOrFail((le) =>
      Option.match(Election.validate({ ...le, identity: "" }), {
        onNone: () => Either.right(le),
        onSome: (problem) => Either.left(ConfigError.InvalidData([], problem))
      })
    ),
    Config.nested("leaderElection")
  )
})

/** The election settings this process runs with (identity resolved). */
export const electionSettings = (config: OperatorSettings): Election.LeaderElectionSettings => ({
  leaseName: config.leaderElection.leaseName,
  identity: Election.defaultIdentity(config.leaderElection.identity),
  leaseDuration: config.leaderElection.leaseDuration,
  renewDeadline: config.leaderElection.renewDeadline,
  retryPeriod: config.leaderElection.retryPeriod
})

/** `kubeconfig`: a file path, or absent for in-cluster / `KUBECONFIG`. */
export const kubeconfigPath = Config.option(Config.string("kubeconfig")).pipe(Config.map(Option.filter((s) => s !== "")))

/** How the API clients reach the cluster: the `kubeconfig` file's content when set, else KUBECONFIG / in-cluster. */
export const kubeconfigSource: Effect.Effect<{ readonly kubeconfig?: string }, ConfigError.ConfigError | PlatformError, FileSystem.FileSystem> = Effect.gen(
  function* () {
    const path = yield* kubeconfigPath
    if (Option.isNone(path)) return {}
    const fs = yield* FileSystem.FileSystem
    return { kubeconfig: yield* fs.readFileString(path.value) }
  }
)
