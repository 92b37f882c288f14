/**
 * One replica: the local platform's controllers run in its own process, under the operator's Lease as in a cluster
 * (one lease for the platform controller and the lifecycle), which a single candidate acquires at once.
 */
import * as K8sLive from "@kubemend/core/K8s/Live"
import { defaultIdentity, LeaderElection } from "@kubemend/core/LeaderElection"
import { Metrics } from "@kubemend/core/Metrics"
import { Storage } from "@kubemend/core/Storage"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { layerInProcess as lifecycleInProcess } from "@kubemend/operator/Controllers"
import { LifecycleAudit } from "@kubemend/operator/remediation/LifecycleAudit"
import { layerInProcess } from "@kubemend/operator/Service"
import { electionSettings, OperatorConfig } from "@kubemend/operator/OperatorConfig"
import type { ControllerOptions } from "./Controllers.ts"

/** Built once; both in-process layers get its context, so they share the lease. */
const localElection = (kubeconfig: string, apiGroup: string) => {
  const config = OperatorConfig.defaults
  const settings = { ...electionSettings(config), identity: defaultIdentity(Option.none()) }
  return Layer.build(
    LeaderElection.layer(settings).pipe(
      Layer.provide(Layer.merge(K8sLive.layer({ namespace: config.serviceAccount.namespace, apiGroup, kubeconfig }), Metrics.Default))
    )
  )
}

/**
 * The platform controller at once (it renders the RBAC the services need); `servicesUp` then starts the lifecycle:
 * analyses through the agent's REST contract, approvals, blocks, workflow Jobs from the storage catalog, with the
 * operator's own ServiceAccount token for audit events and catalog reads.
 */
export const inProcessControllers = (o: ControllerOptions) =>
  Effect.gen(function* () {
    const election = yield* localElection(o.kubeconfig, o.apiGroup)
    yield* Layer.build(
      layerInProcess({ kubeconfig: o.kubeconfig, apiGroup: o.apiGroup, serviceAccount: { namespace: o.namespace, name: "kubemend-operator" } })
    )
      .pipe(Effect.provide(election))
    const token = Redacted.make(o.token)
    const lifecycle = lifecycleInProcess({
      kubeconfig: o.kubeconfig,
      namespace: o.namespace,
      apiGroup: o.apiGroup,
      agentUrl: o.agentUrl,
      agentToken: Option.some(token),
      policy: { url: o.policyUrl },
      notification: { receivers: [{ name: "local-inbox", channel: "webhook", url: o.inboxUrl }], defaultReceivers: ["local-inbox"] },
      storage: Storage.layer({ baseUrl: o.storageUrl, token }),
      execution: { workflowNamespace: o.workflowNamespace, pollInterval: Duration.seconds(2) },
      audit: LifecycleAudit.layerStorage({ baseUrl: o.storageUrl, token })
    })
    return { processes: Option.none(), servicesUp: Effect.asVoid(Layer.build(lifecycle).pipe(Effect.provide(election))) }
  })
