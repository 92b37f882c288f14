/**
 * How every service's `main.ts` starts: its config provider (YAML file + env), JSON logs, tracing, trust in the
 * platform's CA, then the service layer until SIGTERM. A bad config value stops it with one line naming the key.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer, Option } from "effect"
import { configErrorFromCause, formatConfigError, layerProvider } from "./Config.ts"
import { jsonLogger, layerJson } from "./Logger.ts"
import { DefaultMetricsPrefix, serviceNamespaces } from "./Metrics.ts"
import { trustConfiguredAuthority } from "./Tls/Trust.ts"
import { layerTracing } from "./Tracing.ts"

export const runService = <E>(service: string, live: Layer.Layer<never, E, NodeContext.NodeContext>) => {
  // The platform's CA is trusted before anything connects (`tls.caFile`; Tls/Trust).
  const program = Effect.zipRight(trustConfiguredAuthority, Layer.launch(live)).pipe(
    Effect.provide(Layer.mergeAll(layerJson, layerTracing(service))),
    Effect.provide(layerProvider(service)),
    Effect.provide(NodeContext.layer),
    Effect.provideService(DefaultMetricsPrefix, serviceNamespaces[service] ?? ""),
    Effect.annotateLogs("service", service),
    Effect.catchAllCause((cause) =>
      Option.match(configErrorFromCause(cause), {
        onSome: (error) => Effect.die(new ConfigRefused(formatConfigError(error))),
        onNone: () => Effect.failCause(cause)
      })
    ),
    Effect.tapErrorCause((cause) =>
      Effect.sync(() => {
        const refused = Cause.squash(cause)
        const line = refused instanceof ConfigRefused
          ? { level: "error", ts: new Date().toISOString(), msg: refused.message, service }
          : { level: "error", ts: new Date().toISOString(), msg: "service failed", service, error: Cause.pretty(cause) }
        process.stderr.write(JSON.stringify(line) + "\n")
      })
    )
  )
  NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
}

class ConfigRefused extends Error {}

export { jsonLogger }
