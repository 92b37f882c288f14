/**
 * Tunables of the workflow execution controller: the platform CR's `workflowExecution` and `ansible` blocks (the
 * operator's config file carries the same keys; the CR's explicit values win at run time, see `applyExecutionSpec`)
 * plus how often a run is polled and how much of a failed run's log is kept.
 */
import { duration, intInRange, parseGoDuration } from "@kubemend/core/Config"
import { Config, Context, Duration, Effect, Layer, Option } from "effect"

export interface SecretKeyRef {
  readonly name: string
  readonly key: string
}

export interface AnsibleSettings {
  /** Workflows with the `ansible` engine run as AWX/AAP job templates; off: they fail at once. */
  readonly enabled: boolean
  /** Base URL of the AWX/AAP API (`https://awx.example.com`; `/api/v2/...` is appended). */
  readonly apiURL: string | undefined
  readonly organizationID: number
  /** Secret (controller namespace) holding the API token; default key `token`. */
  readonly tokenSecretRef: SecretKeyRef | undefined
  /** Secret (controller namespace) holding the CA bundle of `apiURL`; default key `ca.crt`. */
  readonly caCertSecretRef: SecretKeyRef | undefined
}

export interface ExecutionSettings {
  /** Namespace the Jobs and PipelineRuns run in. */
  readonly workflowNamespace: string
  /** After a workflow completed on a target, the same workflow waits this long before it runs there again. */
  readonly cooldownPeriod: Duration.Duration
  /** Workflows with the `tekton` engine run as tekton.dev/v1 PipelineRuns; off: they fail at once. */
  readonly tektonEnabled: boolean
  readonly ansible: AnsibleSettings
  /** A running execution is looked at again this often (Job and PipelineRun changes also wake it). */
  readonly pollInterval: Duration.Duration
  /** A target held by another running execution is checked again this often (`ResourceBusy`). */
  readonly busyRecheck: Duration.Duration
  /** Lines of a failed run's log kept (redacted) in `failureDetails`. */
  readonly logTailLines: number
  /** Deadline of one call to the AWX/AAP API. */
  readonly requestTimeout: Duration.Duration
}

export class ExecutionConfig extends Context.Tag("@kubemend/operator/ExecutionConfig")<ExecutionConfig, ExecutionSettings>() {
  static readonly defaults: ExecutionSettings = {
    workflowNamespace: "kubemend-workflows",
    cooldownPeriod: Duration.minutes(1),
    tektonEnabled: false,
    ansible: { enabled: false, apiURL: undefined, organizationID: 1, tokenSecretRef: undefined, caCertSecretRef: undefined },
    pollInterval: Duration.seconds(10),
    busyRecheck: Duration.seconds(30),
    logTailLines: 20,
    requestTimeout: Duration.seconds(10)
  }

  static readonly make = (o: Partial<Omit<ExecutionSettings, "ansible">> & { readonly ansible?: Partial<AnsibleSettings> } = {}): ExecutionSettings => ({
    ...ExecutionConfig.defaults,
    ...o,
    ansible: { ...ExecutionConfig.defaults.ansible, ...o.ansible }
  })

  static readonly layer = (o: Parameters<typeof ExecutionConfig.make>[0] = {}) => Layer.succeed(ExecutionConfig, ExecutionConfig.make(o))

  static readonly layerConfig = Layer.effect(ExecutionConfig, Effect.suspend(() => settingsConfig))
}

type Json = Record<string, unknown>
const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {})

const keyRef = (v: unknown, defaultKey: string): SecretKeyRef | undefined => {
  const o = obj(v)
  return typeof o["name"] === "string" && o["name"] !== ""
    ? { name: o["name"], key: typeof o["key"] === "string" && o["key"] !== "" ? o["key"] : defaultKey }
    : undefined
}

/** `base` with what the platform CR's `spec.workflowExecution` and `spec.ansible` set explicitly. */
export const applyExecutionSpec = (base: ExecutionSettings, spec: unknown): ExecutionSettings => {
  const s = obj(spec)
  const we = obj(s["workflowExecution"])
  const a = obj(s["ansible"])
  const cooldown = typeof we["cooldownPeriod"] === "string" ? Option.getOrUndefined(parseGoDuration(we["cooldownPeriod"])) : undefined
  const tekton = obj(we["tekton"])["enabled"]
  return {
    ...base,
    ...(typeof we["workflowNamespace"] === "string" && we["workflowNamespace"] !== "" ? { workflowNamespace: we["workflowNamespace"] } : {}),
    ...(cooldown === undefined ? {} : { cooldownPeriod: cooldown }),
    ...(typeof tekton === "boolean" ? { tektonEnabled: tekton } : {}),
    ansible: {
      ...base.ansible,
      ...(typeof a["enabled"] === "boolean" ? { enabled: a["enabled"] } : {}),
      ...(typeof a["apiURL"] === "string" ? { apiURL: a["apiURL"] } : {}),
      ...(typeof a["organizationID"] === "number" && a["organizationID"] >= 1 ? { organizationID: a["organizationID"] } : {}),
      ...(a["tokenSecretRef"] === undefined ? {} : { tokenSecretRef: keyRef(a["tokenSecretRef"], "token") }),
      ...(a["caCertSecretRef"] === undefined ? {} : { caCertSecretRef: keyRef(a["caCertSecretRef"], "ca.crt") })
    }
  }
}

const d = ExecutionConfig.defaults
const dur = (name: string, fallback: Duration.Duration) => duration(name).pipe(Config.withDefault(fallback))
const ref = (name: string, defaultKey: string) =>
  Config.all({ name: Config.string("name"), key: Config.string("key").pipe(Config.withDefault(defaultKey)) }).pipe(
    Config.nested(name),
    Config.option,
    Config.map(Option.getOrUndefined)
  )

const settingsConfig: Config.Config<ExecutionSettings> = Config.all({
  workflowExecution: Config.all({
    workflowNamespace: Config.string("workflowNamespace").pipe(Config.withDefault(d.workflowNamespace)),
    cooldownPeriod: dur("cooldownPeriod", d.cooldownPeriod),
    tektonEnabled: Config.boolean("enabled").pipe(Config.nested("tekton"), Config.withDefault(d.tektonEnabled)),
    pollInterval: dur("pollInterval", d.pollInterval),
    busyRecheck: dur("busyRecheck", d.busyRecheck),
    logTailLines: intInRange("logTailLines", 0, 1000).pipe(Config.withDefault(d.logTailLines)),
    requestTimeout: dur("requestTimeout", d.requestTimeout)
  }).pipe(Config.nested("workflowExecution")),
  ansible: Config.all({
    enabled: Config.boolean("enabled").pipe(Config.withDefault(d.ansible.enabled)),
    apiURL: Config.string("apiURL").pipe(Config.option, Config.map(Option.getOrUndefined)),
    organizationID: intInRange("organizationID", 1, 1_000_000).pipe(Config.withDefault(d.ansible.organizationID)),
    tokenSecretRef: ref("tokenSecretRef", "token"),
    caCertSecretRef: ref("caCertSecretRef", "ca.crt")
  }).pipe(Config.nested("ansible"))
}).pipe(Config.map(({ ansible, workflowExecution }) => ({ ...workflowExecution, ansible })))
