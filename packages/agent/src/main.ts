/** The investigation agent: REST sessions API and interactive MCP on 8443, health 8081, metrics 9090. */
import { Layer } from "effect"
import { runService } from "@kubemend/core/Main"
import { MetricsLive, ServerLive } from "./Service.ts"
import { DependenciesLive } from "./Dependencies.ts"

runService("agent", ServerLive.pipe(Layer.provide(DependenciesLive), Layer.provide(MetricsLive)))
