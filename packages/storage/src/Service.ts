/**
 * The storage service as it runs in a process: configuration from the file/env provider, TokenReview through the
 * live K8s layer (in-cluster, or `KUBECONFIG`), and the `migrate` command the operator's migration Job runs.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { layerProvider } from "@kubemend/core/Config"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { layerJson } from "@kubemend/core/Logger"
import { ServerConfig } from "@kubemend/core/Servers"
import { Config, Effect, Layer } from "effect"
import { StorageServiceLive } from "./Api.ts"
import { DatabaseLive } from "./Db/Connection.ts"
import * as EmbeddedPg from "./EmbeddedPg.ts"
import { StorageConfig } from "./StorageConfig.ts"

const K8sFromConfig = K8sLive.layerConfig(
  Config.all({
    namespace: Config.string("namespace").pipe(Config.withDefault("kubemend-system")),
    apiGroup: Config.string("apiGroup").pipe(Config.withDefault("kubemend.io"))
  })
)

/** The whole service, configured from the environment (outputs nothing: it runs until interrupted). */
export const StorageMainLive = Layer.effectDiscard(Effect.void).pipe(
  Layer.provide(StorageServiceLive),
  Layer.provide(Layer.mergeAll(StorageConfig.layerConfig, ServerConfig.layerConfig(8080), K8sFromConfig))
)

/** `main.ts migrate`: apply the migrations and exit (0 on success). */
export const runMigrateCommand = () =>
  NodeRuntime.runMain(
    Effect.logInfo("migrations complete").pipe(
      Effect.provide(DatabaseLive.pipe(Layer.provide(StorageConfig.layerConfig))),
      Effect.provide(Layer.mergeAll(layerJson, NodeContext.layer)),
      Effect.provide(layerProvider("storage")),
      Effect.provide(NodeContext.layer),
      Effect.annotateLogs("service", "storage")
    ),
    { disablePrettyLogger: true }
  )

/**
 * `main.ts embedded-postgres`: only the embedded PostgreSQL of the `embeddedPostgres` block, until stopped. The local
 * platform's storage replicas (LOCAL_REPLICAS) share one run this way, so any of them may die without taking it along.
 */
export const EmbeddedDatabaseLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const { database } = yield* StorageConfig
    if (database._tag !== "Embedded") return yield* Effect.dieMessage("embedded-postgres needs an embeddedPostgres block and no DATABASE_URL")
    const server = yield* EmbeddedPg.start(database)
    yield* Effect.logInfo("embedded PostgreSQL started").pipe(Effect.annotateLogs({ dataDir: database.dataDir, port: server.port }))
  })
).pipe(Layer.provide(StorageConfig.layerConfig))
