/**
 * Tunables of the status stream (`POST /a2a/status`), read from the gateway config under `statusStream`
 * (`statusStream.keepaliveInterval` / `GATEWAY_STATUS_STREAM_KEEPALIVE_INTERVAL`).
 */
import { Config, Context, Duration, Layer } from "effect"
import { duration, intInRange } from "@kubemend/core/Config"

export interface StatusSettings {
  /** A `: keepalive` comment goes to every open stream this often (document 1: 15 s). */
  readonly keepaliveInterval: Duration.Duration
  /** `status/closing` is sent this long before the caller's token expires, then the stream ends (5 s). */
  readonly closingLead: Duration.Duration
  /** Bytes one subscriber may have unsent (beyond the socket's own buffer); a reader further behind is dropped. */
  readonly subscriberBufferBytes: number
  /** Open streams per gateway process; the next subscribe is refused. */
  readonly maxSubscribers: number
}

const defaults: StatusSettings = {
  keepaliveInterval: Duration.seconds(15),
  closingLead: Duration.seconds(5),
  subscriberBufferBytes: 64 * 1024,
  maxSubscribers: 20_000
}

export const statusConfig: Config.Config<StatusSettings> = Config.all({
  keepaliveInterval: duration("keepaliveInterval").pipe(Config.withDefault(defaults.keepaliveInterval)),
  closingLead: duration("closingLead").pipe(Config.withDefault(defaults.closingLead)),
  subscriberBufferBytes: intInRange("subscriberBufferBytes", 1024, 64 * 1024 * 1024).pipe(
    Config.withDefault(defaults.subscriberBufferBytes)
  ),
  maxSubscribers: intInRange("maxSubscribers", 1, 1_000_000).pipe(Config.withDefault(defaults.maxSubscribers))
}).pipe(Config.nested("statusStream"))

export class StatusConfig extends Context.Tag("@kubemend/gateway/StatusConfig")<StatusConfig, StatusSettings>() {
  static readonly defaults = defaults
  static readonly layer = (overrides: Partial<StatusSettings> = {}) => Layer.succeed(StatusConfig, { ...defaults, ...overrides })
  static readonly layerConfig = Layer.effect(StatusConfig, statusConfig)
}
