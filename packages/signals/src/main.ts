/** The signal-ingestion service: Alertmanager webhooks and Kubernetes events in on 8080, health 8081, metrics 9090. */
import { Layer } from "effect"
import { runService } from "@kubemend/core/Main"
import { DependenciesLive } from "./Dependencies.ts"
import { ServerLive } from "./Service.ts"

runService("signals", ServerLive.pipe(Layer.provide(DependenciesLive)))
