import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import { freePort, isFree } from "../src/FreePort.ts"

const listen = (port: number) =>
  Effect.acquireRelease(
    Effect.async<Net.Server>((resume) => {
      const server = Net.createServer()
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

describe("FreePort", () => {
  it.scoped("a free port is bindable and below the ephemeral range; a bound one is not free", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      const range = "/proc/sys/net/ipv4/ip_local_port_range"
      if (Fs.existsSync(range)) expect(port).toBeLessThan(Number(Fs.readFileSync(range, "utf8").trim().split(/\s+/)[0]))
      expect(yield* isFree(port)).toBe(true)
      yield* listen(port)
      expect(yield* isFree(port)).toBe(false)
    }))

  it.effect("never hands out one port twice while it is reserved, though it is still free", () =>
    Effect.gen(function* () {
      // Three hundred random picks without the reservation would repeat a port most of the time (birthday bound).
      const ports = yield* Effect.all(Array.from({ length: 300 }, () => freePort))
      expect(new Set(ports).size).toBe(ports.length)
    }))
})
