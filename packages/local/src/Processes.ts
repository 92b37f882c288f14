/**
 * Child processes of the local platform: each service runs as `node --import tsx packages/<svc>/src/main.ts` (or its
 * built `dist/main.js`) with its rendered config file, exactly as in a cluster minus the container. Output is
 * prefixed and forwarded.
 */
import { Duration, Effect, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { builtNodeFlags } from "@kubemend/operator/platform/ServiceCommand"

export interface ServiceProcess {
  readonly name: string
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
}

export interface SpawnOptions {
  readonly name: string
  /** How its output lines are prefixed (`storage-1`); default the name. */
  readonly label?: string
  readonly root: string
  readonly configFile: string
  readonly env?: Record<string, string>
  readonly args?: ReadonlyArray<string>
  readonly quiet?: boolean
}

const forward = (name: string, stream: NodeJS.ReadableStream | null, out: NodeJS.WritableStream, quiet: boolean) => {
  if (stream === null) return
  let buffered = ""
  stream.setEncoding("utf8")
  stream.on("data", (chunk: string) => {
    buffered += chunk
    const lines = buffered.split("\n")
    buffered = lines.pop() ?? ""
    if (!quiet) { for (const line of lines) if (line.length > 0) out.write(`[${name}] ${line}\n`) }
  })
}

/**
 * Node's arguments for a service: the built JavaScript when this platform itself runs from `dist/` (`npm run build`,
 * then `node --conditions=kubemend-dist packages/local/dist/main.js`), the TypeScript through tsx otherwise.
 */
const runningBuilt = import.meta.url.includes("/packages/local/dist/")
const serviceEntry = (root: string, name: string): ReadonlyArray<string> =>
  runningBuilt
    ? [...builtNodeFlags, Path.join(root, "packages", name, "dist", "main.js")]
    : ["--import", "tsx", Path.join(root, "packages", name, "src", "main.ts")]

// Services still running when this process exits without its scope closing (a crash): killed, never left behind.
const running = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL")
})

/**
 * Starts a service process; it is stopped (SIGTERM, then SIGKILL after the grace period) when the scope closes.
 * Each service has a process group of its own: a terminal's Ctrl-C reaches only the platform process, which stops
 * its controllers first (flushing their audit events to a storage still up) and then the services in order,
 * instead of every service draining at once under controllers that still depend on them.
 */
export const spawnService = (options: SpawnOptions, grace: Duration.Duration) =>
  Effect.acquireRelease(
    Effect.sync((): ServiceProcess => {
      const child = spawn(
        process.execPath,
        [...serviceEntry(options.root, options.name), ...(options.args ?? [])],
        {
          cwd: options.root,
          env: { ...process.env, ...options.env, CONFIG_FILE: options.configFile },
          stdio: ["ignore", "pipe", "pipe"],
          detached: true
        }
      )
      running.add(child)
      child.once("exit", () => running.delete(child))
      const label = options.label ?? options.name
      forward(label, child.stdout, process.stdout, options.quiet ?? false)
      forward(label, child.stderr, process.stderr, false)
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      return { name: label, child, exited }
    }),
    (service) => stop(service, grace)
  )

export const stop = (service: ServiceProcess, grace: Duration.Duration) =>
  Effect.promise(async () => {
    if (service.child.exitCode !== null || service.child.signalCode !== null) return
    service.child.kill("SIGTERM")
    const timer = setTimeout(() => service.child.kill("SIGKILL"), Duration.toMillis(grace))
    await service.exited
    clearTimeout(timer)
  })

/** Polls a health URL until it answers 200, failing if the process exits first or the deadline passes. */
export const waitHealthy = (service: ServiceProcess, url: string, deadline: Duration.Duration) =>
  Effect.tryPromise(async () => {
    if (service.child.exitCode !== null) throw new Error(`${service.name} exited with code ${service.child.exitCode}`)
    const response = await fetch(url)
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`)
  }).pipe(
    Effect.retry({ schedule: Schedule.spaced(Duration.millis(150)), while: () => service.child.exitCode === null }),
    Effect.timeoutFail({
      duration: deadline,
      onTimeout: () => new Error(`${service.name} did not become healthy at ${url} within ${Duration.format(deadline)}`)
    })
  )
