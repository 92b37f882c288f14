/**
 * The storage service as `bench/storage-ingest.ts` runs it: in a process of its own, as deployed, so the bench's
 * prebuilt inputs and its other writers share neither the service's heap (their GC was charged to the service) nor
 * its event loop. Settings come from the environment; the API port goes to stdout once the service is up.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { apiPort, ServerConfig } from "@kubemend/core/Servers"
import { Config, Duration, Effect, Layer, Logger, LogLevel } from "effect"
import { StorageServiceLive } from "../../packages/storage/src/Api.ts"
import { StorageConfig } from "../../packages/storage/src/StorageConfig.ts"

const program = Effect.gen(function* () {
  const url = yield* Config.redacted("BENCH_DATABASE_URL")
  const kubeconfig = yield* Config.string("BENCH_KUBECONFIG")
  const dlqDir = yield* Config.string("BENCH_DLQ_DIR")
  const settings = {
    ...StorageConfig.defaults,
    database: { _tag: "Url" as const, url },
    retention: { ...StorageConfig.defaults.retention, enabled: false },
    dlq: { capacity: 10_000, dir: dlqDir, replayInterval: Duration.seconds(5) }
  }
  const context = yield* Layer.build(StorageServiceLive.pipe(
    Layer.provideMerge(Layer.mergeAll(StorageConfig.layer(settings), ServerConfig.layer(), K8sLive.layer({ namespace: "kubemend-system", kubeconfig }))),
    Layer.provideMerge(NodeContext.layer)
  ))
  process.stdout.write(`port ${yield* Effect.provide(apiPort, context)}\n`)
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(program).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))))
