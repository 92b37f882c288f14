/**
 * The operator process's leader election: one Lease (`leaderElection.leaseName`, in `leaderElection.namespace` or
 * the operator's own namespace) for all of its controllers (platform, lifecycle, signal processing, analysis,
 * effectiveness, catalog, workflow execution, notification), so a standby replica takes them over together.
 * Everything the controllers read per process (policy sync into the engine, health, metrics) runs on every replica.
 */
import * as K8sLive from "@kubemend/core/K8s/Live"
import { LeaderElection } from "@kubemend/core/LeaderElection"
import { Metrics } from "@kubemend/core/Metrics"
import { Effect, Layer, Option } from "effect"
import { electionSettings, kubeconfigSource, OperatorConfig } from "../OperatorConfig.ts"

const electionFromConfig = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* OperatorConfig
    const source = yield* kubeconfigSource
    const namespace = Option.getOrElse(config.leaderElection.namespace, () => config.serviceAccount.namespace)
    return LeaderElection.layer(electionSettings(config)).pipe(
      Layer.provide(K8sLive.layer({ namespace, apiGroup: config.apiGroup, ...source }))
    )
  })
)

/** The election from the operator's config file; Metrics is shared by reference with the rest of the process. */
export const LeadershipLive = electionFromConfig.pipe(Layer.provide(Layer.merge(OperatorConfig.layerConfig, Metrics.Default)))
