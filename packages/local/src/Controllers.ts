/**
 * The local platform's controllers (platform and lifecycle). `LOCAL_REPLICAS=n>1`: n operator processes, each the
 * operator's own `main.ts` with a config file written here (as a cluster's operator reads its ConfigMap), so they
 * elect a leader with the operator's Lease and a killed leader's Lease passes to another process. One replica keeps
 * them in the platform's process (InProcessControllers.ts), which starts faster.
 */
import { freePort } from "@kubemend/devkit/FreePort"
import { Duration, Effect, ExecutionStrategy, Exit, Option, Scope } from "effect"
import * as Fs from "node:fs"
import { hostname } from "node:os"
import * as Path from "node:path"
import * as Yaml from "yaml"
import { OperatorConfig } from "@kubemend/operator/OperatorConfig"
import { inProcessControllers } from "./InProcessControllers.ts"
import { spawnService, waitHealthy } from "./Processes.ts"

/** One controller process as `.local/stack.json` lists it. */
interface ControllerReplica {
  readonly pid: number
  readonly healthUrl: string
  readonly metricsUrl: string
  /** Its holderIdentity in the Lease (`<host>_<pid>`, the operator's default off a cluster). */
  readonly identity: string
}

export interface Controllers {
  readonly replicas: ReadonlyArray<ControllerReplica>
  /** The Lease they elect their leader with, in the controller namespace. */
  readonly leaseName: string
}

export interface ControllerOptions {
  readonly count: number
  readonly root: string
  readonly dir: string
  /** Kubeconfig YAML of the in-process controllers (the dev API server's own, as before they ran as processes). */
  readonly kubeconfig: string
  /** The operator identity's kubeconfig file, for the processes, and its ServiceAccount token. */
  readonly kubeconfigFile: string
  readonly token: string
  readonly tokenFile: string
  readonly apiGroup: string
  readonly namespace: string
  readonly caFile: string
  readonly agentUrl: string
  readonly storageUrl: string
  readonly policyUrl: string
  readonly inboxUrl: string
  readonly workflowNamespace: string
}

/** What the in-process layers are given in Run.ts, as the operator's config file (OperatorConfig and the lifecycle's). */
const operatorConfig = (o: ControllerOptions, ports: { readonly healthPort: number; readonly metricsPort: number }) => ({
  kubeconfig: o.kubeconfigFile,
  apiGroup: o.apiGroup,
  serviceAccount: { namespace: o.namespace, name: "kubemend-operator" },
  bindAddress: "127.0.0.1",
  ...ports,
  tls: { caFile: o.caFile },
  lifecycle: {
    namespace: o.namespace,
    agentUrl: o.agentUrl,
    agentTokenFile: o.tokenFile,
    policy: { url: o.policyUrl },
    // These processes start before the agent (the platform controller renders the RBAC the services need): the
    // seeded analyses' retries stay at most this far apart, so they reach the agent soon after it is up.
    backoffMax: "10s"
  },
  // Audit events, the catalog and delivery records, with the operator's own ServiceAccount token.
  storage: { url: o.storageUrl, tokenFile: o.tokenFile },
  workflowExecution: { workflowNamespace: o.workflowNamespace, pollInterval: "2s" },
  notification: { receivers: [{ name: "local-inbox", webhook: { url: o.inboxUrl } }], defaultReceivers: ["local-inbox"] }
})

/**
 * Starts the processes one after the other (the first is healthy, and so most likely leads, before the next starts).
 * They live in a scope of their own, closed when the caller's closes or earlier (`servicesUp`'s finalizer).
 */
const controllerProcesses = (o: ControllerOptions) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const replicas: Array<ControllerReplica> = []
    for (let index = 0; index < o.count; index++) {
      const ports = { healthPort: yield* freePort, metricsPort: yield* freePort }
      const configFile = Path.join(o.dir, `operator-${index}.yaml`)
      Fs.writeFileSync(configFile, Yaml.stringify(operatorConfig(o, ports)))
      // Not quiet: the controllers' log (every remediation's transitions) is what the in-process ones printed.
      const proc = yield* Scope.extend(
        spawnService({ name: "operator", label: `operator-${index}`, root: o.root, configFile, quiet: false }, Duration.seconds(10)),
        scope
      )
      const healthUrl = `http://127.0.0.1:${ports.healthPort}`
      yield* waitHealthy(proc, `${healthUrl}/healthz`, Duration.seconds(60))
      const pid = proc.child.pid ?? 0
      replicas.push({ pid, healthUrl, metricsUrl: `http://127.0.0.1:${ports.metricsPort}`, identity: `${hostname()}_${pid}` })
    }
    const controllers: Controllers = { replicas, leaseName: OperatorConfig.defaults.leaderElection.leaseName }
    // Added once the services run, this finalizer runs before theirs.
    return { processes: Option.some(controllers), servicesUp: Effect.addFinalizer(() => Scope.close(scope, Exit.void)) }
  })

/**
 * The controllers, from before the services start (the platform controller renders the RBAC they need). Run
 * `servicesUp` once the services answer: it starts what runs in process after them, and makes the controllers stop
 * before the services they call, so their last audit events reach a storage still up.
 */
export const startControllers = (o: ControllerOptions) => o.count === 1 ? inProcessControllers(o) : controllerProcesses(o)
