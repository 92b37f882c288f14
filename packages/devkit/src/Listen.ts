/**
 * A devkit fake's `node:http` server (`node:https` with `tls`), listening for the life of the scope (loopback and a
 * free port unless told otherwise). Closing cuts open connections, so a client holding one cannot keep a test or
 * `npm start` up.
 */
import { Effect } from "effect"
import { createServer, type RequestListener, type Server } from "node:http"
import { createServer as createTlsServer } from "node:https"
import type { AddressInfo } from "node:net"

export interface ListenOptions {
  readonly port?: number | undefined
  readonly host?: string | undefined
  /** Serve HTTPS with this certificate and key (PEM), as the real service does in a cluster. */
  readonly tls?: { readonly certPem: string; readonly keyPem: string } | undefined
}

export interface Listening {
  readonly server: Server
  /** `http(s)://host:port`, IPv6 hosts in brackets. */
  readonly url: string
  readonly port: number
}

export const listenScoped = (handler: RequestListener, options: ListenOptions = {}) =>
  Effect.acquireRelease(
    Effect.async<Server>((resume) => {
      const s: Server = options.tls === undefined ? createServer(handler) : createTlsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handler)
      s.once("error", (e) => resume(Effect.die(e)))
      s.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resume(Effect.succeed(s)))
    }),
    (s) =>
      Effect.async<void>((resume) => {
        s.close(() => resume(Effect.void))
        s.closeAllConnections()
      })
  ).pipe(Effect.map((server): Listening => {
    const address = server.address() as AddressInfo
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address
    return { server, url: `${options.tls === undefined ? "http" : "https"}://${host}:${address.port}`, port: address.port }
  }))
