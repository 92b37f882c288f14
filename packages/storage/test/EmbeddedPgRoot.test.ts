/**
 * Run as root from a checkout under /root (0700), PostgreSQL runs as the `postgres` user, who cannot enter it. The
 * checkout is simulated by a directory only root may enter; the test only means something when run as root.
 */
import { it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect } from "vitest"
import * as EmbeddedPg from "../src/EmbeddedPg.ts"
import { readableCopyOfBinaries, reachableByOthers } from "../src/EmbeddedPgRoot.ts"

const asRoot = process.getuid?.() === 0

const privateHome = Effect.acquireRelease(
  Effect.promise(async () => {
    const home = await Fs.mkdtemp(Path.join(Os.tmpdir(), "kubemend-root-home-"))
    await Fs.chmod(home, 0o700)
    return home
  }),
  (home) => Effect.promise(() => Fs.rm(home, { recursive: true, force: true }))
)

describe.runIf(asRoot)("embedded PostgreSQL run as root", () => {
  it.scoped("serves a data directory under a directory the postgres user cannot enter", () =>
    Effect.gen(function* () {
      const home = yield* privateHome
      expect(reachableByOthers(Path.join(home, "checkout"))).toBe(false)
      const server = yield* EmbeddedPg.start({ dataDir: Path.join(home, "checkout", ".data", "postgres"), port: 0, persistent: false })
      const rows = yield* Effect.flatMap(PgClient.PgClient, (sql) => sql`SELECT 1 AS one`).pipe(
        Effect.provide(PgClient.layer({ url: server.url, maxConnections: 1 }))
      )
      expect(rows).toEqual([{ one: 1 }])
    }), { timeout: 60_000 })

  it("counts a data directory whose parents are not made yet as reachable when the nearest existing one is", () => {
    // The storage tests' template removes its root and starts again: relocating it lost the credentials file.
    expect(reachableByOthers(Path.join(Os.tmpdir(), "kubemend-not-made-yet", "postgres"))).toBe(true)
  })

  it.scoped("copies the binaries where the postgres user can run them when the checkout is out of its reach", () =>
    Effect.gen(function* () {
      const home = yield* privateHome
      const base = `${home}-pg`
      yield* Effect.addFinalizer(() => Effect.promise(() => Fs.rm(base, { recursive: true, force: true })))
      const binaries = yield* readableCopyOfBinaries(base)
      expect(reachableByOthers(binaries.initdb)).toBe(true)
      const run = spawnSync(binaries.initdb, ["--version"], { uid: Number(spawnSync("id", ["-u", "postgres"]).stdout), encoding: "utf8" })
      expect(run.error).toBeUndefined()
      expect(run.stdout).toMatch(/initdb \(PostgreSQL\) 17/)
    }))
})
