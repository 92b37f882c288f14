/**
 * Loopback ports for a process that binds them a moment later (a child service, an embedded PostgreSQL). A port the
 * OS picks (`listen(0)`) is one it also gives outgoing connections, so it could be taken between the probe and the
 * bind, which made a busy machine's start fail now and then; a free port below the ephemeral range is only ever
 * taken by an explicit bind. Two pickers could still choose the same free port before either binds it (the local
 * platform picks a score of ports before starting anything; tests start platforms side by side), so a port handed
 * out is reserved for a while: in this process, and for other processes by a file named after it.
 */
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

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

/** How long a handed-out port stays reserved: long enough for a child process to start and bind it. */
const reservedForMs = 5 * 60_000
const reservations = Path.join(Os.tmpdir(), "kubemend-port-reservations")
const handedOut = new Set<number>()

/** Whether another process reserved `port` within the window; if not, it is reserved for this one. */
const reservedElsewhere = (port: number): boolean => {
  const file = Path.join(reservations, String(port))
  try {
    Fs.mkdirSync(reservations, { recursive: true, mode: 0o1777 })
    Fs.writeFileSync(file, String(process.pid), { flag: "wx" })
    return false
  } catch (error) {
    // A reservation that cannot be written at all (a read-only tmp) leaves the in-process one.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false
    const age = Date.now() - (Fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0)
    if (age < reservedForMs) return true
    Fs.rmSync(file, { force: true })
    return reservedElsewhere(port)
  }
}

/** Takes `port` for this caller unless it was handed out here or reserved elsewhere within the window. */
const reserve = (port: number) => {
  if (handedOut.has(port) || reservedElsewhere(port)) return false
  handedOut.add(port)
  return true
}

/** A free loopback port below the ephemeral range (any free one if twenty random picks are taken). */
export const freePort: Effect.Effect<number> = Effect.promise(async () => {
  const low = 10_000
  for (let attempt = 0; attempt < 20 && ephemeralStart - low > 1000; attempt++) {
    const bound = await probe(low + Math.floor(Math.random() * (ephemeralStart - low)))
    if (bound !== undefined && reserve(bound)) return bound
  }
  return (await probe(0))!
})
