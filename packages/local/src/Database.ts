/**
 * With several storage replicas the embedded PostgreSQL runs as a process of its own (storage's `main.ts
 * embedded-postgres`, on the same data directory a single replica uses) and every replica connects to it, so any
 * storage replica may die without taking the database along.
 */
import { freePort } from "@kubemend/devkit/FreePort"
import { Duration, Effect, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import * as Yaml from "yaml"
import { type ServiceProcess, spawnService } from "./Processes.ts"

/**
 * The server's URL. Storage keeps the password it generated next to the cluster directory
 * (`<dir>.credentials.json`, EmbeddedPg.ts); the data directory may be a link to where root's postgres can reach
 * it, hence the real path.
 */
const databaseUrl = (dataDir: string, port: number) => {
  const { password } = JSON.parse(Fs.readFileSync(`${Fs.realpathSync(dataDir)}.credentials.json`, "utf8")) as { password: string }
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** Until the server takes connections (its URL then), failing if the process exits first or the deadline passes. */
const waitListening = (proc: ServiceProcess, dataDir: string, port: number, deadline: Duration.Duration) =>
  Effect.tryPromise(async () => {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited with code ${proc.child.exitCode}`)
    if (!(await accepts(port))) throw new Error(`nothing listens on ${port} yet`)
    return databaseUrl(dataDir, port)
  }).pipe(
    Effect.retry({ schedule: Schedule.spaced(Duration.millis(150)), while: () => proc.child.exitCode === null }),
    Effect.timeoutFail({ duration: deadline, onTimeout: () => new Error(`the embedded PostgreSQL did not start within ${Duration.format(deadline)}`) })
  )

/** Starts the database process (stopped when the scope closes) and returns its URL for the storage replicas. */
export const sharedDatabase = (options: { readonly root: string; readonly dir: string; readonly dataDir: string; readonly quiet: boolean }) =>
  Effect.gen(function* () {
    const port = yield* freePort
    const configFile = Path.join(options.dir, "postgres.yaml")
    Fs.writeFileSync(configFile, Yaml.stringify({ embeddedPostgres: { dataDir: options.dataDir, port } }))
    const proc = yield* spawnService(
      { name: "storage", label: "postgres", root: options.root, configFile, quiet: options.quiet, args: ["embedded-postgres"] },
      Duration.seconds(15)
    )
    return yield* waitListening(proc, options.dataDir, port, Duration.seconds(60))
  })
