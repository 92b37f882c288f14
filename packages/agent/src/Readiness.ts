/**
 * `/readyz` of the agent: the LLM (configuration resolves, breaker not open, endpoint accepts connections), the
 * cluster API and the storage service. Each check runs under the Readiness deadline.
 */
import { Effect, Layer } from "effect"
import * as Net from "node:net"
import { K8s } from "@kubemend/core/K8s"
import { Llm } from "@kubemend/core/Llm"
import { Readiness } from "@kubemend/core/Servers"
import { Catalog } from "./Investigation/Catalog.ts"
import { Model } from "./Investigation/Model.ts"

/** A TCP connection to the endpoint's host and port: reachable without spending tokens. */
const connect = (endpoint: string) =>
  Effect.async<void, Error>((resume) => {
    const url = new URL(endpoint)
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80))
    const socket = Net.connect({ host: url.hostname.replace(/^\[|\]$/g, ""), port })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.void)
    })
    socket.once("error", (e) => resume(Effect.fail(e)))
    return Effect.sync(() => socket.destroy())
  })

export const ReadinessChecksLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const readiness = yield* Readiness
    const llm = yield* Llm
    const model = yield* Model
    const k8s = yield* K8s
    const catalog = yield* Catalog
    yield* readiness.register(
      "llm",
      Effect.gen(function* () {
        if (yield* model.isOpen) return yield* Effect.fail("llm circuit breaker open")
        const route = yield* llm.route({})
        if (route.endpoint !== undefined) yield* connect(route.endpoint)
      })
    )
    yield* readiness.register(
      "kubernetes",
      k8s.getCr("remediationrequests", "readiness-probe").pipe(Effect.catchTag("K8sNotFound", () => Effect.void))
    )
    yield* readiness.register("storage", catalog.ping)
  })
)
