/**
 * The storage service assembled: configuration, database (migrated before anything uses it), the write path with
 * its dead-letter queue, the background jobs, the HttpApi with its handlers, and the three listeners (API 8080,
 * health 8081 with a database readiness check, metrics 9090) with the drain on top.
 */
import { HttpApiBuilder } from "@effect/platform"
import { apiHeaders } from "@kubemend/core/ApiHeaders"
import { Drain } from "@kubemend/core/Drain"
import { bodyLimit, problemMiddleware } from "@kubemend/core/HttpProblems"
import { Metrics } from "@kubemend/core/Metrics"
import { ApiServerLive, DrainOnShutdown, drainGuard, OpsServersLive, Readiness } from "@kubemend/core/Servers"
import { StorageApi, StorageOpenApiPath } from "@kubemend/core/StorageApi"
import { Effect, Layer } from "effect"
import { AuditWriter } from "./AuditWriter.ts"
import { DatabaseLive } from "./Db/Connection.ts"
import { ActionTypeRepo } from "./Db/ActionTypeRepo.ts"
import { AuditRepo } from "./Db/AuditRepo.ts"
import { DiscoveryRepo } from "./Db/DiscoveryRepo.ts"
import { HoldRepo } from "./Db/HoldRepo.ts"
import { NotificationRepo } from "./Db/NotificationRepo.ts"
import { WorkflowRepo } from "./Db/WorkflowRepo.ts"
import { Dlq } from "./Dlq.ts"
import { Exporter } from "./Export.ts"
import { ExportSigner } from "./ExportSigner.ts"
import { AuditHttp } from "./Http/Audit.ts"
import { StorageAuthLive } from "./Http/Auth.ts"
import { ActionTypesHttp, WorkflowsHttp } from "./Http/Catalog.ts"
import { ComplianceHttp, PublicHttp } from "./Http/Compliance.ts"
import { requestMetrics } from "./Http/Edge.ts"
import { Insights } from "./Insights.ts"
import { Retention } from "./Retention.ts"
import { StorageConfig } from "./StorageConfig.ts"

const ReposLive = Layer.mergeAll(
  AuditRepo.Default,
  HoldRepo.Default,
  NotificationRepo.Default,
  ActionTypeRepo.Default,
  WorkflowRepo.Default,
  DiscoveryRepo.Default
)

/** Everything the handlers use, over `DatabaseLive`, `StorageConfig` and `Metrics`. */
export const DomainLive = Layer.mergeAll(Exporter.Default, Insights.Default, Retention.Default).pipe(
  Layer.provideMerge(Layer.mergeAll(AuditWriter.Default, ExportSigner.Default)),
  Layer.provideMerge(Dlq.Default),
  Layer.provideMerge(ReposLive)
)

const HandlersLive = Layer.mergeAll(AuditHttp, ComplianceHttp, PublicHttp, WorkflowsHttp, ActionTypesHttp)

export const ApiLive = HttpApiBuilder.api(StorageApi).pipe(Layer.provide(HandlersLive), Layer.provide(StorageAuthLive))

const ReadinessLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const readiness = yield* Readiness
    const repo = yield* AuditRepo
    yield* readiness.register("database", repo.ping)
  })
)

/** The API on the API listener; new requests get 503 while draining. */
const ServeLive = HttpApiBuilder.serve((app) => Effect.flatMap(StorageConfig, (c) => apiHeaders(drainGuard(requestMetrics(bodyLimit(c.maxBodyBytes)(app))))))
  .pipe(
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: StorageOpenApiPath })),
    Layer.provide(ApiLive),
    Layer.provide(Layer.unwrapEffect(Effect.map(StorageConfig, (c) => problemMiddleware(StorageApi, c.maxBodyBytes))))
  )

/**
 * The service, given `StorageConfig`, `ServerConfig` and `K8s` (TokenReview). The drain is built last so it is
 * finalized first: readiness flips, in-flight requests finish, then the listeners and the database close.
 */
export const StorageServiceLive = DrainOnShutdown.pipe(
  Layer.provideMerge(ServeLive),
  Layer.provideMerge(ApiServerLive),
  Layer.provideMerge(Layer.mergeAll(OpsServersLive, ReadinessLive)),
  Layer.provideMerge(DomainLive),
  Layer.provideMerge(DatabaseLive),
  Layer.provideMerge(Layer.mergeAll(Drain.Default, Metrics.Default, Readiness.Default))
)
