/**
 * Loopback ports for a process that binds them a moment later (a child service, an embedded PostgreSQL). A port the
 * OS picks (`listen(0)`) is one it also gives outgoing connections, so it could be taken between the probe and the
 * bind, which made a busy machine's start fail now and then; a free port below the ephemeral range is only ever
 * taken by an explicit bind.
 */
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"

/** Binds `port` (0: any) on loopback and lets it go; the port bound, or undefined when it is taken. */
const probe = (port: number) =>
  new Promise<number | undefined>((resolve) => {
    const server = Net.createServer()
    server.once("error", () => resolve(undefined))
    server.listen(port, "127.0.0.1", () => {
      const bound = (server.address() as Net.AddressInfo).port
      server.close(() => resolve(bound))
    })
  })

/** Where the OS's ephemeral ports start (Linux says; elsewhere the IANA range). */
const ephemeralStart = (() => {
  try {
    const low = Number(Fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0])
    return Number.isInteger(low) ? low : 49152
  } catch {
    return 49152
  }
})()

/** Whether `port` is free on loopback now. */
export const isFree = (port: number): Effect.Effect<boolean> => Effect.promise(async () => (await probe(port)) !== undefined)

/** A free loopback port below the ephemeral range (any free one if twenty random picks are taken). */
export const freePort: Effect.Effect<number> = Effect.promise(async () => {
  const low = 10_000
  for (let attempt = 0; attempt < 20 && ephemeralStart - low > 1000; attempt++) {
    const bound = await probe(low + Math.floor(Math.random() * (ephemeralStart - low)))
    if (bound !== undefined) return bound
  }
  return (await probe(0))!
})
