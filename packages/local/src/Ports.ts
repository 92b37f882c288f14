/** Local ports: the spec's well-known ones when free, any free port otherwise, so `npm start` never fails on a clash. */
import { Effect } from "effect"
import { freePort, isFree } from "@kubemend/devkit/FreePort"

/** `preferred` when it is free (and `auto` is off), else a free port (core `FreePort`). */
export const portFor = (preferred: number, auto: boolean) =>
  Effect.flatMap(auto ? Effect.succeed(false) : isFree(preferred), (free) => (free ? Effect.succeed(preferred) : freePort))

export interface LocalPorts {
  readonly kube: number
  readonly issuer: number
  readonly llm: number
  readonly alerts: number
  readonly gateway: { readonly port: number; readonly healthPort: number; readonly metricsPort: number }
  readonly agent: { readonly port: number; readonly healthPort: number; readonly metricsPort: number }
  readonly storage: { readonly port: number; readonly healthPort: number; readonly metricsPort: number }
  readonly signals: { readonly port: number; readonly healthPort: number; readonly metricsPort: number }
  readonly console: { readonly port: number; readonly healthPort: number; readonly metricsPort: number }
}

/** Gateway keeps 8443/8081/9090; the others sit next to it, as they would on their own pods. */
export const choosePorts = (auto: boolean) =>
  Effect.gen(function* () {
    const listener = (api: number, health: number, metrics: number) =>
      Effect.all({ port: portFor(api, auto), healthPort: portFor(health, auto), metricsPort: portFor(metrics, auto) })
    return {
      kube: yield* portFor(6443, auto),
      issuer: yield* portFor(5556, auto),
      llm: yield* portFor(11435, auto),
      alerts: yield* portFor(9093, auto),
      gateway: yield* listener(8443, 8081, 9090),
      agent: yield* listener(8444, 8082, 9091),
      storage: yield* listener(8080, 8083, 9092),
      signals: yield* listener(8085, 8084, 9094),
      console: yield* listener(4180, 8086, 9095)
    } satisfies LocalPorts
  })
