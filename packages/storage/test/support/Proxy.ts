/**
 * A TCP proxy between the service and PostgreSQL that a test can cut: every open connection is reset and new ones
 * are refused until `up()`. To a client this is exactly a database restart (or a network partition), it works the
 * same with `TEST_DATABASE_URL` and the embedded server, and it leaves other test files' databases alone.
 * `cutOn(marker)` cuts at a precise point of the protocol: when a client sends a statement containing `marker`,
 * either before it reaches the server (`"before"`) or right after (`"after"`).
 */
import { Effect } from "effect"
import * as Net from "node:net"

export interface PgProxy {
  /** The database URL rewritten to go through the proxy. */
  readonly url: string
  readonly down: () => void
  readonly up: () => void
  /** Arms a one-shot cut; resolves when it happened. */
  readonly cutOn: (marker: string, when: "before" | "after") => Promise<void>
}

export const startProxy = (databaseUrl: string) =>
  Effect.acquireRelease(
    Effect.async<{ proxy: PgProxy; server: Net.Server; sockets: Set<Net.Socket> }>((resume) => {
      const target = new URL(databaseUrl)
      const sockets = new Set<Net.Socket>()
      let isDown = false
      let trigger: { marker: Buffer; when: "before" | "after"; fire: () => void } | undefined
      const cutAll = () => {
        isDown = true
        for (const s of sockets) s.destroy()
        sockets.clear()
      }
      const server = Net.createServer((client) => {
        if (isDown) return void client.destroy()
        const upstream = Net.connect(Number(target.port || 5432), target.hostname)
        sockets.add(client)
        sockets.add(upstream)
        const close = () => {
          client.destroy()
          upstream.destroy()
          sockets.delete(client)
          sockets.delete(upstream)
        }
        client.on("error", close).on("close", close)
        upstream.on("error", close).on("close", close)
        // After an "after" cut is triggered the server's answer is swallowed: the statement ran, the client never hears.
        let swallow = false
        upstream.on("data", (chunk) => {
          if (!swallow) client.write(chunk)
        })
        client.on("data", (chunk: Buffer) => {
          const armed = trigger
          if (armed !== undefined && chunk.includes(armed.marker)) {
            trigger = undefined
            if (armed.when === "after") {
              swallow = true
              upstream.write(chunk, () => setTimeout(() => (cutAll(), armed.fire()), 100))
            } else {
              cutAll()
              armed.fire()
            }
            return
          }
          upstream.write(chunk)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as Net.AddressInfo).port
        const url = new URL(databaseUrl)
        url.hostname = "127.0.0.1"
        url.port = String(port)
        resume(
          Effect.succeed({
            server,
            sockets,
            proxy: {
              url: url.toString(),
              down: cutAll,
              up: () => {
                isDown = false
              },
              cutOn: (marker, when) =>
                new Promise<void>((fire) => {
                  trigger = { marker: Buffer.from(marker), when, fire }
                })
            }
          })
        )
      })
    }),
    ({ server, sockets }) =>
      Effect.async<void>((resume) => {
        for (const s of sockets) s.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ proxy }) => proxy))
