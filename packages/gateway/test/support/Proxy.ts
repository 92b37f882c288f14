/**
 * A TCP proxy in front of a server, on a loopback port of its own, that a test can cut (every connection dropped,
 * new ones refused) and restore on the same port: Valkey going away and coming back as a client sees it.
 */
import { Effect } from "effect"
import * as Net from "node:net"

export interface Proxy {
  readonly port: number
  readonly cut: Effect.Effect<void>
  readonly restore: Effect.Effect<void>
}

export const startProxy = (target: { readonly host: string; readonly port: number }) =>
  Effect.acquireRelease(
    Effect.async<{ proxy: Proxy; stop: () => void }>((resume) => {
      const sockets = new Set<Net.Socket>()
      let server: Net.Server
      const listen = (port: number, done: (port: number) => void) => {
        server = Net.createServer((client) => {
          const upstream = Net.connect(target.port, target.host)
          for (const s of [client, upstream]) {
            sockets.add(s)
            s.on("close", () => sockets.delete(s))
            s.on("error", () => s.destroy())
          }
          client.pipe(upstream).pipe(client)
        })
        server.listen(port, "127.0.0.1", () => done((server.address() as Net.AddressInfo).port))
      }
      const dropAll = () => {
        for (const s of sockets) s.destroy()
        sockets.clear()
      }
      listen(0, (port) => {
        const proxy: Proxy = {
          port,
          cut: Effect.async<void>((done) => {
            server.close(() => done(Effect.void))
            dropAll()
          }),
          restore: Effect.async<void>((done) => listen(port, () => done(Effect.void)))
        }
        resume(Effect.succeed({ proxy, stop: () => (dropAll(), server.close()) }))
      })
    }),
    ({ stop }) => Effect.sync(stop)
  ).pipe(Effect.map(({ proxy }) => proxy))
