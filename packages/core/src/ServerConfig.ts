/**
 * Listener settings every service shares (ports, bind address, drain time, TLS, slow-client limits), from its config
 * file or environment; `Servers.ts` builds the listeners from them.
 */
import { Config, Context, Duration, Effect, Layer, Option } from "effect"
import { duration, intInRange } from "./Config.ts"

export interface ServerSettings {
  /** Interface to bind (`0.0.0.0` in a cluster, `127.0.0.1` locally). */
  readonly host: string
  /** API port (0 picks a free one). */
  readonly port: number
  readonly healthPort: number
  readonly metricsPort: number
  /** How long in-flight work may take to finish after SIGTERM (0–300 s, default 15). */
  readonly drainTimeout: Duration.Duration
  /** PEM files; both set -> the API serves HTTPS. */
  readonly tls: Option.Option<{ readonly certFile: string; readonly keyFile: string }>
  /** `tls.caFile`: the CA bundle the service's clients trust (set up by `runService`, `Tls/Trust.ts`). */
  readonly caFile: Option.Option<string>
  /** A client that has not sent its complete request headers this long after it started is cut off (408). */
  readonly headersTimeout: Duration.Duration
  /** A client that has not sent its complete request (headers and body) this long after it started is cut off. */
  readonly requestTimeout: Duration.Duration
}

const positiveDuration = (name: string) =>
  duration(name).pipe(Config.validate({ message: "must be longer than 0s", validation: (d) => Duration.greaterThan(d, Duration.zero) }))

/** Slow-client limits from `server.headersTimeout` / `server.requestTimeout` (Go durations); headers ≤ request. */
const slowClientConfig = (d: ServerSettings) =>
  Config.all({
    headersTimeout: positiveDuration("headersTimeout").pipe(Config.withDefault(d.headersTimeout)),
    requestTimeout: positiveDuration("requestTimeout").pipe(Config.withDefault(d.requestTimeout))
  }).pipe(
    Config.validate({
      message: "server.headersTimeout must not be longer than server.requestTimeout",
      validation: ({ headersTimeout, requestTimeout }) => Duration.lessThanOrEqualTo(headersTimeout, requestTimeout)
    }),
    Config.nested("server")
  )

/** `tls.caFile`, the CA bundle a service trusts for its calls to the others. */
export const caFileConfig = Config.option(Config.nested(Config.string("caFile"), "tls"))

export class ServerConfig extends Context.Tag("@kubemend/core/ServerConfig")<ServerConfig, ServerSettings>() {
  static defaults = (port: number): ServerSettings => ({
    host: "0.0.0.0",
    port,
    healthPort: 8081,
    metricsPort: 9090,
    drainTimeout: Duration.seconds(15),
    tls: Option.none(),
    caFile: Option.none(),
    headersTimeout: Duration.seconds(10),
    requestTimeout: Duration.seconds(60)
  })
  /** For tests: loopback, free ports, short drain. */
  static layer = (overrides: Partial<ServerSettings> = {}) =>
    Layer.succeed(ServerConfig, {
      ...ServerConfig.defaults(0),
      host: "127.0.0.1",
      healthPort: 0,
      metricsPort: 0,
      drainTimeout: Duration.seconds(2),
      ...overrides
    })
  /**
   * From the service's config file / env: `port`, `healthPort`, `metricsPort`, `bindAddress`, `shutdown.drainSeconds`,
   * `tls.*`, `server.headersTimeout`, `server.requestTimeout`.
   */
  static layerConfig = (defaultPort: number) =>
    Layer.effect(
      ServerConfig,
      Effect.gen(function* () {
        const d = ServerConfig.defaults(defaultPort)
        const host = yield* Config.string("bindAddress").pipe(Config.withDefault(d.host))
        const port = yield* intInRange("port", 0, 65535).pipe(Config.withDefault(d.port))
        const healthPort = yield* intInRange("healthPort", 0, 65535).pipe(Config.withDefault(d.healthPort))
        const metricsPort = yield* intInRange("metricsPort", 0, 65535).pipe(Config.withDefault(d.metricsPort))
        const drainSeconds = yield* Config.nested(intInRange("drainSeconds", 0, 300), "shutdown").pipe(Config.withDefault(15))
        const tls = yield* Config.option(
          Config.nested(Config.all({ certFile: Config.string("certFile"), keyFile: Config.string("keyFile") }), "tls")
        )
        const caFile = yield* caFileConfig
        const slow = yield* slowClientConfig(d)
        return { ...d, host, port, healthPort, metricsPort, drainTimeout: Duration.seconds(drainSeconds), tls, caFile, ...slow }
      })
    )
}
