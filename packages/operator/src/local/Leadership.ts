/**
 * The local platform's controllers run under the operator's Lease as in a cluster (one lease for the platform
 * controller and the lifecycle); a single replica acquires it at once.
 */
import * as K8sLive from "@kubemend/core/K8s/Live"
import { defaultIdentity, LeaderElection } from "@kubemend/core/LeaderElection"
import { Metrics } from "@kubemend/core/Metrics"
import { Layer, Option } from "effect"
import { electionSettings, OperatorConfig } from "../OperatorConfig.ts"

/** Build it once and provide the context to both in-process layers, so they share the lease. */
export const localElection = (kubeconfig: string, apiGroup: string) => {
  const config = OperatorConfig.defaults
  const settings = { ...electionSettings(config), identity: defaultIdentity(Option.none()) }
  return Layer.build(
    LeaderElection.layer(settings).pipe(
      Layer.provide(Layer.merge(K8sLive.layer({ namespace: config.serviceAccount.namespace, apiGroup, kubeconfig }), Metrics.Default))
    )
  )
}
