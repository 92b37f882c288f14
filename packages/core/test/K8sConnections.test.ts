/**
 * The live K8s layer reuses its connections to the API server (client-node alone opens one per call): a TCP proxy in
 * front of the dev API server counts the connections that typed calls, raw reads and reviews open.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as net from "node:net"
import { DevKube } from "@kubemend/devkit/kube/index"
import * as K8sLive from "../src/K8s/Live.ts"
import { rr } from "./K8s/Contract.ts"
import { apiGroup, namespace } from "./K8s/Harness.ts"

/** Forwards loopback connections to `port`, counting them; closed with the scope. */
const countingProxy = (port: number) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: net.Server; readonly open: Set<net.Socket>; readonly port: number; readonly connections: () => number }>((resume) => {
      let connections = 0
      const open = new Set<net.Socket>()
      const server = net.createServer((client) => {
        connections++
        open.add(client)
        client.on("close", () => open.delete(client))
        const upstream = net.connect(port, "127.0.0.1")
        client.pipe(upstream).pipe(client)
        client.on("error", () => upstream.destroy())
        upstream.on("error", () => client.destroy())
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          server,
          open,
          port: (server.address() as net.AddressInfo).port,
          connections: () => connections
        })))
    }),
    ({ open, server }) =>
      Effect.async<void>((resume) => {
        for (const socket of open) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )

describe("K8s live layer connections", () => {
  for (const tls of [false, true]) {
    it.live(`sequential calls reuse the open connections (${tls ? "https" : "http"})`, () =>
      Effect.scoped(Effect.gen(function* () {
        const kube = yield* DevKube.scoped({ apiGroup, tls })
        const proxy = yield* countingProxy(kube.port)
        const kubeconfig = kube.kubeConfig().replace(`:${kube.port}`, `:${proxy.port}`)
        const k8s = yield* K8sLive.make({ namespace, apiGroup, kubeconfig })
        // Discovery (on the first generic read) asks its paths in parallel: a few connections, then reuse only.
        yield* k8s.createCr("remediationrequests", rr("a"))
        yield* k8s.listResources({ kind: "ConfigMap", namespace: "default" })
        const warm = proxy.connections()
        expect(warm).toBeLessThan(10)
        for (let i = 0; i < 5; i++) {
          expect((yield* k8s.getCr("remediationrequests", "a")).metadata.name).toBe("a")
          yield* k8s.patchCrStatus("remediationrequests", "a", { deduplication: { occurrenceCount: i + 2 } })
          expect((yield* k8s.listResources({ kind: "ConfigMap", namespace: "default" })).items).toEqual([])
        }
        expect(yield* k8s.subjectAccessReview({ user: "nobody", groups: [], verb: "get", group: "", resource: "pods" })).toBe(false)
        expect(proxy.connections()).toBe(warm)
      })))
  }
})
