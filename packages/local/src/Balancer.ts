/**
 * The local stand-in for a Kubernetes Service in front of a service's replicas. Its bytes pass through untouched, so
 * TLS ends at the replica (each presents its own certificate) and a streamed answer (SSE) arrives as the replica
 * writes it. `round-robin`: each TCP connection goes to the next replica in turn, as kube-proxy balances.
 * `sticky`: every connection goes to one replica, as a Service with `sessionAffinity: ClientIP` sends every local
 * client (they all have the same address) to one pod. A replica that refuses the connection (stopped, killed) is
 * skipped for the next one, as an endpoint that is not ready would be; a sticky balancer then stays with that one.
 */
import { Effect } from "effect"
import * as Net from "node:net"

export interface Balancer {
  readonly port: number
}

export type Balancing = "round-robin" | "sticky"

/** Connects to the first target (from `start`, in turn) that accepts; undefined when none does. */
const connectAny = (
  targets: ReadonlyArray<number>,
  start: number,
  tried = 0
): Promise<{ readonly socket: Net.Socket; readonly index: number } | undefined> =>
  tried === targets.length
    ? Promise.resolve(undefined)
    : new Promise((resolve) => {
      const index = (start + tried) % targets.length
      const upstream = Net.connect(targets[index]!, "127.0.0.1")
      upstream.once("connect", () => {
        upstream.removeAllListeners("error")
        resolve({ socket: upstream, index })
      })
      upstream.once("error", () => resolve(connectAny(targets, start, tried + 1)))
    })

/** Listens on `port` (loopback) for the life of the scope, balancing over the `targets` ports. */
export const balance = (port: number, targets: ReadonlyArray<number>, balancing: Balancing) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: Net.Server; readonly open: Set<Net.Socket> }>((resume) => {
      let next = 0
      const open = new Set<Net.Socket>()
      const server = Net.createServer({ pauseOnConnect: true }, (client) => {
        open.add(client)
        client.once("close", () => open.delete(client))
        client.on("error", () => client.destroy())
        const start = next
        if (balancing === "round-robin") next = (next + 1) % targets.length
        void connectAny(targets, start).then((connected) => {
          if (connected === undefined || client.destroyed) {
            connected?.socket.destroy()
            return client.destroy()
          }
          if (balancing === "sticky") next = connected.index
          const upstream = connected.socket
          open.add(upstream)
          upstream.once("close", () => open.delete(upstream))
          // Either side's end or failure ends the other: a half-open pair would hold a client forever.
          upstream.on("error", () => client.destroy())
          client.once("close", () => upstream.destroy())
          upstream.once("close", () => client.destroy())
          client.pipe(upstream)
          upstream.pipe(client)
          client.resume()
        })
      })
      server.once("error", (e) => resume(Effect.die(e)))
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed({ server, open })))
    }),
    ({ open, server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        for (const socket of open) socket.destroy()
      })
  ).pipe(Effect.map(({ server }): Balancer => ({ port: (server.address() as Net.AddressInfo).port })))
