/**
 * Tunables of the A2A agent (`a2a.*` in the gateway config, `GATEWAY_A2A_*` in the environment). The loop's model is
 * not here: it is the `llm` block the operator renders from the agent's settings (see `A2aLlm`).
 */
import { Config, Context, Duration, Layer, Option } from "effect"
import { duration, intInRange } from "@kubemend/core/Config"

export interface A2aSettings {
  /** A `keepalive` status event goes out this often while a tool or model call runs (document 1: 5 s). */
  readonly keepaliveInterval: Duration.Duration
  /** Model round trips per task before it fails. */
  readonly maxTurns: number
  /** A task still running after this long fails. */
  readonly taskTimeout: Duration.Duration
  /** Agent loops running at once; the next message is refused with -32000 `retryable` (LLM capacity exhausted). */
  readonly llmConcurrency: number
  /** Tasks kept for `tasks/get`; the oldest finished ones are forgotten first. */
  readonly maxTasks: number
  /** Finished tasks are forgotten after this long. */
  readonly taskRetention: Duration.Duration
  /** A conversation (`contextId`) unused this long is closed and frees its session slot. */
  readonly contextIdleTimeout: Duration.Duration
  /** Earlier exchanges of a conversation the model sees again. */
  readonly contextTurns: number
  /** How long `svc_investigate` waits for the investigation to finish in A2A mode. */
  readonly investigationTimeout: Duration.Duration
  /** How often the investigation's state is asked while waiting. */
  readonly investigationPollInterval: Duration.Duration
  /** Public base URL of the gateway for the agent card; derived from the request when unset. */
  readonly publicUrl: Option.Option<string>
  readonly agentName: string
  readonly agentDescription: string
  readonly agentVersion: string
  readonly providerOrganization: string
  readonly providerUrl: string
}

const defaults: A2aSettings = {
  keepaliveInterval: Duration.seconds(5),
  maxTurns: 20,
  taskTimeout: Duration.minutes(30),
  llmConcurrency: 10,
  maxTasks: 1000,
  taskRetention: Duration.hours(1),
  contextIdleTimeout: Duration.minutes(30),
  contextTurns: 20,
  investigationTimeout: Duration.minutes(15),
  investigationPollInterval: Duration.seconds(2),
  publicUrl: Option.none(),
  agentName: "kubemend",
  agentDescription:
    "Kubernetes remediation agent: finds and explains incidents, investigates root causes and starts remediations, with every action authorized as the caller.",
  agentVersion: "1.5.7",
  providerOrganization: "kubemend.io",
  providerUrl: "https://kubemend.io"
}

const str = (name: string, fallback: string) => Config.string(name).pipe(Config.withDefault(fallback))

export const a2aConfig: Config.Config<A2aSettings> = Config.all({
  keepaliveInterval: duration("keepaliveInterval").pipe(Config.withDefault(defaults.keepaliveInterval)),
  maxTurns: intInRange("maxTurns", 1, 200).pipe(Config.withDefault(defaults.maxTurns)),
  taskTimeout: duration("taskTimeout").pipe(Config.withDefault(defaults.taskTimeout)),
  llmConcurrency: intInRange("llmConcurrency", 1, 10_000).pipe(Config.withDefault(defaults.llmConcurrency)),
  maxTasks: intInRange("maxTasks", 10, 1_000_000).pipe(Config.withDefault(defaults.maxTasks)),
  taskRetention: duration("taskRetention").pipe(Config.withDefault(defaults.taskRetention)),
  contextIdleTimeout: duration("contextIdleTimeout").pipe(Config.withDefault(defaults.contextIdleTimeout)),
  contextTurns: intInRange("contextTurns", 0, 1000).pipe(Config.withDefault(defaults.contextTurns)),
  investigationTimeout: duration("investigationTimeout").pipe(Config.withDefault(defaults.investigationTimeout)),
  investigationPollInterval: duration("investigationPollInterval").pipe(Config.withDefault(defaults.investigationPollInterval)),
  publicUrl: Config.option(Config.string("publicUrl")).pipe(Config.map(Option.filter((s) => s !== ""))),
  agentName: str("name", defaults.agentName),
  agentDescription: str("description", defaults.agentDescription),
  agentVersion: str("version", defaults.agentVersion),
  providerOrganization: str("providerOrganization", defaults.providerOrganization),
  providerUrl: str("providerUrl", defaults.providerUrl)
}).pipe(Config.nested("a2a"))

export class A2aConfig extends Context.Tag("@kubemend/gateway/A2aConfig")<A2aConfig, A2aSettings>() {
  static readonly defaults = defaults
  static readonly layer = (overrides: Partial<A2aSettings> = {}) => Layer.succeed(A2aConfig, { ...defaults, ...overrides })
  static readonly layerConfig = Layer.effect(A2aConfig, a2aConfig)
}
