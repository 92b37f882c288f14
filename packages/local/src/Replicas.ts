/**
 * `LOCAL_REPLICAS=n`: every service runs as n processes, each on free ports of its own, behind a balancer on the
 * service's ports (API, health and metrics), so a caller that knows only the service's `url` reaches them in turn as
 * it would through a Kubernetes Service. One replica (the default) listens on the service's ports itself.
 */
import { freePort } from "@kubemend/devkit/FreePort"
import { Effect, Option } from "effect"
import { balance, type Balancing } from "./Balancer.ts"
import type { Controllers } from "./Controllers.ts"
import type { ServiceProcess } from "./Processes.ts"

export interface Ports {
  readonly port: number
  readonly healthPort: number
  readonly metricsPort: number
}

/** One replica as `.local/stack.json` lists it. */
export interface Replica {
  readonly url: string
  readonly healthUrl: string
  readonly metricsUrl: string
  readonly pid: number
}

/** The replica's own ports: the service's when it is alone, free ones otherwise. */
const portsOf = (service: Ports, count: number) =>
  count === 1
    ? Effect.succeed(service)
    : Effect.all({ port: freePort, healthPort: freePort, metricsPort: freePort })

/**
 * Starts `count` replicas one after the other (`start` returns once the replica is healthy), then the balancers
 * (the API's as `balancing` says; health and metrics round-robin). Replica `i` gets `ports` to listen on; `scheme`
 * is its API's (the console's is plain http).
 */
export const runReplicas = <E, R>(
  service: Ports,
  count: number,
  options: { readonly scheme: "http" | "https"; readonly balancing: Balancing },
  start: (index: number, ports: Ports) => Effect.Effect<ServiceProcess, E, R>
) =>
  Effect.gen(function* () {
    const replicas: Array<Replica & { readonly ports: Ports }> = []
    for (let index = 0; index < count; index++) {
      const ports = yield* portsOf(service, count)
      const proc = yield* start(index, ports)
      replicas.push({
        ports,
        url: `${options.scheme}://127.0.0.1:${ports.port}`,
        healthUrl: `http://127.0.0.1:${ports.healthPort}`,
        metricsUrl: `http://127.0.0.1:${ports.metricsPort}`,
        pid: proc.child.pid ?? 0
      })
    }
    if (count > 1) {
      for (const key of ["port", "healthPort", "metricsPort"] as const) {
        yield* balance(service[key], replicas.map((r) => r.ports[key]), key === "port" ? options.balancing : "round-robin")
      }
    }
    return replicas.map(({ ports: _, ...replica }): Replica => replica)
  })

/** What a person running `LOCAL_REPLICAS=n` should know, printed after the summary. */
export const replicaNotes = (
  stack: Readonly<Record<"gateway" | "agent" | "storage" | "signals" | "console", { readonly replicas: ReadonlyArray<Replica> }>> & {
    readonly controllers?: Controllers
  },
  valkey: Option.Option<string>
) =>
  [
    "",
    `Each service runs ${stack.gateway.replicas.length} replicas behind a balancer on the ports above: the next replica a connection, as`,
    "a Kubernetes Service balances, but for the agent (and the gateway without Valkey), which keeps a client on one",
    "replica until it stops, as their Services' ClientIP affinity does. Each replica's own url, healthUrl and pid are",
    "in .local/stack.json:",
    ...(["gateway", "agent", "storage", "signals", "console"] as const).map((svc) =>
      `  ${svc.padEnd(9)} ${stack[svc].replicas.map((r) => `${r.url} (pid ${r.pid})`).join("  ")}`
    ),
    Option.match(valkey, {
      onSome: (url) => `Gateway replicas share MCP sessions, A2A tasks, session caps and rate limits in Valkey at ${url}.`,
      onNone: () => "Gateway sessions are per replica (no Valkey answers at LOCAL_VALKEY_URL or 127.0.0.1:6379 to share them in)."
    }),
    "Agent investigation sessions are per replica (in memory): when the agent replica running one stops, the analysis",
    "controller finds the session gone on the next one and regenerates it (README, High availability).",
    ...(stack.controllers === undefined ? [] : [
      `The controllers run as ${stack.controllers.replicas.length} operator processes under the Lease ${stack.controllers.leaseName}; one leads and`,
      "reconciles, the others stand by (ready, idle) and take over once its lease expires. svc_leader{lease,identity}",
      "is 1 on the leader's metrics:",
      ...stack.controllers.replicas.map((r, i) => `  operator-${i} ${r.metricsUrl}/metrics (pid ${r.pid}, identity ${r.identity})`)
    ]),
    ""
  ].join("\n")
