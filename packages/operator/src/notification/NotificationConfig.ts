/**
 * Tunables of the notification controller (operator config block `notification`): the receivers (a channel each,
 * credentials in Secrets of the controller namespace), routes from a NotificationRequest's `type` and severity
 * (`spec.priority`) to receivers, retries and the per-channel circuit breaker. Durations are Go strings in the file.
 */
import { duration } from "@kubemend/core/Config"
import { Config, ConfigError, Context, Duration, Either, Layer, Option } from "effect"

/** A key of a Secret in the controller namespace. */
export interface SecretKeyRef {
  readonly name: string
  readonly key: string
}

export type ReceiverChannel =
  | { readonly channel: "slack"; readonly webhookUrl: SecretKeyRef }
  | { readonly channel: "webhook"; readonly url: string; readonly hmacSecret?: SecretKeyRef }
  | { readonly channel: "pagerduty"; readonly routingKey: SecretKeyRef; readonly url: string }
  | {
    readonly channel: "email"
    readonly host: string
    readonly port: number
    /** TLS from the first byte (465); otherwise STARTTLS when the server offers it. */
    readonly secure: boolean
    readonly from: string
    readonly to: ReadonlyArray<string>
    /** Secret with `username` and `password`; absent for a relay that takes mail without login. */
    readonly authSecret?: string
  }

export type Receiver = ReceiverChannel & { readonly name: string }

export interface Route {
  /** NotificationRequest types this route takes (`escalation`, `approval`, `ineffective`); empty = any. */
  readonly types: ReadonlyArray<string>
  /** Severities (`spec.priority`: critical, high, medium, low); empty = any. */
  readonly severities: ReadonlyArray<string>
  readonly receivers: ReadonlyArray<string>
  /** Keep matching later routes after this one (Alertmanager's `continue`). */
  readonly continue: boolean
}

export interface NotificationSettings {
  readonly enabled: boolean
  readonly receivers: ReadonlyArray<Receiver>
  /** First match wins unless it says `continue`. */
  readonly routes: ReadonlyArray<Route>
  /** Receivers of a request no route matches (besides a receiver named by its `spec.channel`). */
  readonly defaultReceivers: ReadonlyArray<string>
  /** Attempts per receiver before its delivery is Failed. */
  readonly maxAttempts: number
  /** Delay before the second attempt; doubles per attempt up to the max. */
  readonly backoffBase: Duration.Duration
  readonly backoffMax: Duration.Duration
  /** Deadline of one delivery attempt. */
  readonly requestTimeout: Duration.Duration
  /** Consecutive failures of a channel that open its breaker. */
  readonly breakerThreshold: number
  /** How long an open breaker refuses before one trial delivery. */
  readonly breakerResetTimeout: Duration.Duration
}

export const defaults: NotificationSettings = {
  enabled: true,
  receivers: [],
  routes: [],
  defaultReceivers: [],
  maxAttempts: 5,
  backoffBase: Duration.seconds(30),
  backoffMax: Duration.minutes(8),
  requestTimeout: Duration.seconds(10),
  breakerThreshold: 3,
  breakerResetTimeout: Duration.minutes(1)
}

const secretRef = (name: string) => Config.all({ name: Config.string("name"), key: Config.string("key") }).pipe(Config.nested(name))
const list = (name: string) => Config.array(Config.string(), name).pipe(Config.withDefault([] as ReadonlyArray<string>))

const receiver: Config.Config<Receiver> = Config.all({
  name: Config.string("name"),
  slack: Config.option(secretRef("webhookUrl").pipe(Config.nested("slack"))),
  webhook: Config.option(Config.all({ url: Config.string("url"), hmacSecret: Config.option(secretRef("hmacSecret")) }).pipe(Config.nested("webhook"))),
  pagerduty: Config.option(
    Config.all({
      routingKey: secretRef("routingKey"),
      url: Config.string("url").pipe(Config.withDefault("https://events.pagerduty.com/v2/enqueue"))
    }).pipe(Config.nested("pagerduty"))
  ),
  email: Config.option(
    Config.all({
      host: Config.string("host"),
      port: Config.integer("port").pipe(Config.withDefault(587)),
      secure: Config.boolean("secure").pipe(Config.withDefault(false)),
      from: Config.string("from"),
      to: Config.array(Config.string(), "to"),
      authSecret: Config.option(Config.string("authSecret"))
    }).pipe(Config.nested("email"))
  )
}).pipe(
  Config.mapOrFail((c): Either.Either<Receiver, ConfigError.ConfigError> => {
    const name = c.name
    if (Option.isSome(c.slack)) return Either.right({ name, channel: "slack", webhookUrl: c.slack.value })
    if (Option.isSome(c.webhook)) {
      const w = c.webhook.value
      return Either.right({ name, channel: "webhook", url: w.url, ...(Option.isSome(w.hmacSecret) ? { hmacSecret: w.hmacSecret.value } : {}) })
    }
    if (Option.isSome(c.pagerduty)) return Either.right({ name, channel: "pagerduty", ...c.pagerduty.value })
    if (Option.isSome(c.email)) {
      const { authSecret, ...e } = c.email.value
      return Either.right({ name, channel: "email", ...e, ...(Option.isSome(authSecret) ? { authSecret: authSecret.value } : {}) })
    }
    return Either.left(ConfigError.InvalidData([name], `receiver ${name} needs one of slack, webhook, pagerduty, email`))
  })
)

const route: Config.Config<Route> = Config.all({
  types: list("types"),
  severities: list("severities"),
  receivers: Config.array(Config.string(), "receivers"),
  continue: Config.boolean("continue").pipe(Config.withDefault(false))
})

export class NotificationConfig extends Context.Tag("@kubemend/operator/NotificationConfig")<NotificationConfig, NotificationSettings>() {
  static readonly defaults = defaults
  static readonly layer = (overrides: Partial<NotificationSettings> = {}) => Layer.succeed(NotificationConfig, { ...defaults, ...overrides })

  /** From the operator's provider, block `notification`. */
  static readonly layerConfig = Layer.effect(
    NotificationConfig,
    Config.all({
      enabled: Config.boolean("enabled").pipe(Config.withDefault(defaults.enabled)),
      receivers: Config.array(receiver, "receivers").pipe(Config.withDefault([] as ReadonlyArray<Receiver>)),
      routes: Config.array(route, "routes").pipe(Config.withDefault([] as ReadonlyArray<Route>)),
      defaultReceivers: list("defaultReceivers"),
      maxAttempts: Config.integer("maxAttempts").pipe(Config.withDefault(defaults.maxAttempts)),
      backoffBase: duration("backoffBase").pipe(Config.withDefault(defaults.backoffBase)),
      backoffMax: duration("backoffMax").pipe(Config.withDefault(defaults.backoffMax)),
      requestTimeout: duration("requestTimeout").pipe(Config.withDefault(defaults.requestTimeout)),
      breakerThreshold: Config.integer("threshold").pipe(Config.nested("breaker"), Config.withDefault(defaults.breakerThreshold)),
      breakerResetTimeout: duration("resetTimeout").pipe(Config.nested("breaker"), Config.withDefault(defaults.breakerResetTimeout))
    }).pipe(Config.nested("notification"))
  )
}
