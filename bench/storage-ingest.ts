/**
 * Storage ingest: events/s of 1000-event hash-chained batches POSTed to the real storage service over HTTP, next to
 * rows of the same shape written straight into the same `audit_events` table with raw `COPY … FROM STDIN` and with a
 * multi-row INSERT (no chain: their own correlation ids, hashes made up); then hash-chain verification events/s:
 * through the API, in process through the same read path (no HTTP), and the pure walk over rows already fetched.
 * The service runs in its own process (`support/storage-service.ts`) and the HTTP load generator on its own thread, as
 * emitters and the service are deployed; the raw writers are this process's `pg` client.
 *
 * One table for every mode because index upkeep grows with the table: a separate baseline table, half the size of
 * `audit_events` by the last round, wrote 1000 rows 1–3 ms faster than the same COPY into `audit_events`.
 * Every mode runs once per round, the rounds interleaved (COPY, INSERT, HTTP, HTTP with 4 in flight, verify) and
 * the writers' order rotated each round, so the table's growth and a neighbour's load on this machine hit them alike;
 * the table shows each mode's median round and the spread. All inputs (COPY text, INSERT parameters, request bodies)
 * are built before a mode is timed, and every mode is warmed up first (JIT, pool, plan cache).
 *
 *   node --import tsx bench/storage-ingest.ts            # embedded PostgreSQL, or DATABASE_URL / TEST_DATABASE_URL
 *   ROUNDS=7 BATCHES=20 node --import tsx bench/storage-ingest.ts
 */
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { DevKube } from "@kubemend/devkit/kube/index"
import { Config, ConfigProvider, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes, randomUUID } from "node:crypto"
import { createRequire } from "node:module"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { Worker } from "node:worker_threads"
import { ChainWalk, makeHasher, verifyChain } from "../packages/storage/src/Chain.ts"
import { AuditRepo } from "../packages/storage/src/Db/AuditRepo.ts"
import { auditColumns, type AuditRow, toChainRow } from "../packages/storage/src/Db/AuditRows.ts"
import * as EmbeddedPg from "../packages/storage/src/EmbeddedPg.ts"

/** The few `pg` calls the COPY baseline needs (`pg` ships no types; @effect/sql-pg does not expose COPY). */
interface PgConnection {
  query(text: string): void
  sendCopyFromChunk(chunk: Buffer): void
  endCopyFrom(): void
}
interface PgRawClient {
  connect(): Promise<void>
  query(statementOrSubmittable: string | object): unknown
  end(): Promise<void>
}
const pg = createRequire(import.meta.url)("pg") as { Client: new(config: { connectionString: string }) => PgRawClient }

/**
 * `COPY … FROM STDIN` as a pg submittable: send the statement, stream the data on CopyInResponse, settle on
 * ReadyForQuery — or on the error itself, since pg forgets the active query when the server reports one.
 */
const copyIn = (client: PgRawClient, statement: string, data: Buffer) =>
  new Promise<void>((resolve, reject) => {
    client.query({
      // `submit` must return nothing: pg treats any return value as a submission error.
      submit: (connection: PgConnection) => {
        connection.query(statement)
      },
      handleCopyInResponse: (connection: PgConnection) => {
        connection.sendCopyFromChunk(data)
        connection.endCopyFrom()
      },
      handleCommandComplete: () => {},
      handleError: (e: Error) => reject(e),
      handleReadyForQuery: () => resolve()
    })
  })

const batchSize = 1000
const chainsPerBatch = 20
const columns = [
  "event_id",
  "event_version",
  "event_timestamp",
  "event_date",
  "event_type",
  "event_category",
  "event_action",
  "event_outcome",
  "actor_type",
  "actor_id",
  "correlation_id",
  "namespace",
  "retention_days",
  "event_data",
  "chain_position",
  "event_hash",
  "previous_event_hash",
  "hash_algorithm"
]

const makeBatch = (b: number, prefix = "seq"): Array<{
  event_id: string
  version: string
  event_type: string
  event_timestamp: string
  event_category: string
  event_action: string
  event_outcome: string
  actor_type: string
  actor_id: string
  correlation_id: string
  namespace: string
  event_data: Record<string, unknown>
}> =>
  Array.from({ length: batchSize }, (_, i) => ({
    event_id: randomUUID(),
    version: "1.0",
    event_type: "apifrontend.tool.executed",
    event_timestamp: new Date(Date.now() - (batchSize - i)).toISOString(),
    event_category: "apifrontend",
    event_action: "executed",
    event_outcome: "success",
    actor_type: "user",
    actor_id: `user-${i % 17}`,
    correlation_id: `rr-${prefix}-${i % chainsPerBatch}`,
    namespace: "prod",
    event_data: {
      event_type: "apifrontend.tool.executed",
      session_id: `s-${b}`,
      tool_name: "svc_list_remediations",
      execution_duration_ms: i % 250,
      tool_outcome: "success",
      target_namespace: "prod"
    }
  }))

type Event = ReturnType<typeof makeBatch>[number]
/** Chain positions as the service would assign them: each batch adds `batchSize / chainsPerBatch` links per chain. */
const rowOf = (e: Event, i: number, b: number) => [
  e.event_id,
  e.version,
  e.event_timestamp,
  e.event_timestamp.slice(0, 10),
  e.event_type,
  e.event_category,
  e.event_action,
  e.event_outcome,
  e.actor_type,
  e.actor_id,
  e.correlation_id,
  e.namespace,
  2555,
  JSON.stringify(e.event_data),
  b * (batchSize / chainsPerBatch) + Math.floor(i / chainsPerBatch) + 1,
  randomBytes(32).toString("hex"),
  "",
  "sha256-unkeyed"
]
const copyText = (rows: ReadonlyArray<ReadonlyArray<unknown>>) =>
  rows.map((r) => r.map((v) => String(v).replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n")).join("\t")).join("\n") + "\n"

const seconds = async (f: () => Promise<unknown>) => {
  const start = performance.now()
  await f()
  return (performance.now() - start) / 1000
}

/**
 * The HTTP load generator, on a thread of its own: this thread's heap holds every prebuilt input, and collecting it
 * would stall requests mid-run. It times `bodies` POSTed `concurrency` at a time.
 */
const clientSource = `
const { parentPort } = require("node:worker_threads")
parentPort.on("message", async ({ url, token, bodies, concurrency }) => {
  try {
    const post = async (body) => {
      const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + token }, body })
      if (r.status !== 201) throw new Error("batch answered " + r.status + ": " + (await r.text()))
      await r.arrayBuffer()
    }
    let next = 0
    const start = performance.now()
    await Promise.all(Array.from({ length: concurrency }, async () => { while (next < bodies.length) await post(bodies[next++]) }))
    parentPort.postMessage({ seconds: (performance.now() - start) / 1000 })
  } catch (e) {
    parentPort.postMessage({ error: String(e) })
  }
})`

/** A client thread for the run; `post(bodies, concurrency)` resolves with the seconds they took. */
const httpClient = (url: string, token: string) =>
  Effect.map(
    Effect.acquireRelease(Effect.sync(() => new Worker(clientSource, { eval: true })), (w) => Effect.promise(() => w.terminate())),
    (worker) => (bodies: ReadonlyArray<string>, concurrency: number) =>
      new Promise<number>((resolve, reject) => {
        worker.once("message", (m: { seconds?: number; error?: string }) => (m.error === undefined ? resolve(m.seconds!) : reject(new Error(m.error))))
        worker.postMessage({ url, token, bodies, concurrency })
      })
  )

/** `bench/support/storage-service.ts` in a child process; its API port, once it is up. Stopped with the scope. */
const storageService = (env: Record<string, string>) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.async<{ readonly child: ChildProcess; readonly port: number }>((resume) => {
        const child = spawn(process.execPath, ["--import", "tsx", new URL("./support/storage-service.ts", import.meta.url).pathname], {
          env: { ...process.env, ...env },
          stdio: ["ignore", "pipe", "inherit"]
        })
        let out = ""
        let settled = false
        const settle = (effect: Effect.Effect<{ readonly child: ChildProcess; readonly port: number }>) => {
          if (!settled) resume(effect)
          settled = true
        }
        child.stdout!.on("data", (chunk: Buffer) => {
          out += chunk.toString()
          const port = /^port (\d+)$/m.exec(out)?.[1]
          if (port !== undefined) settle(Effect.succeed({ child, port: Number(port) }))
        })
        child.once("exit", (code) => settle(Effect.dieMessage(`the storage service exited (${code}) before it was up`)))
      }),
      ({ child }) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve()
            child.once("exit", () => resolve())
            child.kill("SIGTERM")
          })
        )
    ),
    ({ port }) => port
  )

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

/** A temp directory removed when the run ends. */
const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), prefix))
      await Fs.chmod(dir, 0o755)
      return dir
    }),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )

const tempPgDir = Effect.map(tempDir("bench-pg-"), (dir) => Path.join(dir, "postgres"))

const program = Effect.gen(function* () {
  const rounds = yield* Config.integer("ROUNDS").pipe(Config.withDefault(5))
  const batches = yield* Config.integer("BATCHES").pipe(Config.withDefault(20))
  const configured = yield* Config.option(Config.string("DATABASE_URL").pipe(Config.orElse(() => Config.string("TEST_DATABASE_URL"))))
  const server = Option.isSome(configured)
    ? configured.value
    : Redacted.value((yield* EmbeddedPg.start({ dataDir: yield* tempPgDir, port: 0, persistent: false })).url)
  const name = `kubemend_bench_${randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: server })
  yield* Effect.promise(() => admin.connect())
  yield* Effect.addFinalizer(() => Effect.promise(() => admin.end()))
  yield* Effect.promise(() => admin.query(`CREATE DATABASE ${name}`) as Promise<unknown>)
  // Registered before the service is built, so it runs after the service has closed its pool.
  yield* Effect.addFinalizer(() =>
    Effect.promise(() => (admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) as Promise<unknown>).catch(() => undefined))
  )
  const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString()

  const kube = yield* DevKube.scoped({})
  const token = kube.registerServiceAccountToken("kubemend-system", "bench")
  const port = yield* storageService({ BENCH_DATABASE_URL: url, BENCH_KUBECONFIG: kube.kubeConfig(), BENCH_DLQ_DIR: yield* tempDir("bench-dlq-") })
  // The bench's own reads (verification in process, the pure walk) through the service's read path.
  const context = yield* Layer.build(AuditRepo.Default.pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(url) }))))
  const sql = yield* Effect.provide(PgClient.PgClient, context)
  const repo = yield* Effect.provide(AuditRepo, context)
  const hasher = makeHasher(undefined)
  const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(Effect.orDie(effect))
  const post = yield* httpClient(`http://127.0.0.1:${port}/api/v1/audit/events/batch`, token)
  const verifyOverHttp = async (cid: string) => {
    const r = await fetch(`http://127.0.0.1:${port}/api/v1/audit/verify-chain`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ correlation_id: cid })
    })
    const report = (await r.json()) as { is_valid: boolean; total_events: number }
    if (!report.is_valid) throw new Error(`chain ${cid} did not verify`)
    return report.total_events
  }
  const verifyInProcess = async (cid: string) => {
    const walk = new ChainWalk(hasher, false)
    const report = walk.finish(await run(repo.verify(cid, walk)))
    if (report.findings.length > 0) throw new Error(`chain ${cid} did not verify`)
    return report.total
  }

  const raw = new pg.Client({ connectionString: url })
  yield* Effect.promise(() => raw.connect())
  yield* Effect.addFinalizer(() => Effect.promise(() => raw.end()))
  const placeholders = Array.from({ length: batchSize }, (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(", ")})`).join(", ")
  const insertStatement = `INSERT INTO audit_events (${columns.join(", ")}) VALUES ${placeholders}`
  const copyStatement = `COPY audit_events (${columns.join(", ")}) FROM STDIN`
  /**
   * One round's inputs, built before anything is timed: each writer its own events (ids are unique across the table)
   * and correlation ids; chain positions continue from the previous rounds.
   */
  const inputs = (round: number, prefix: (b: number) => string) => {
    const data = (tag: string) => Array.from({ length: batches }, (_, b) => makeBatch(round * batches + b, tag + prefix(b)))
    return {
      bodies: data("").map((batch) => JSON.stringify(batch)),
      copy: data("copy-").map((batch, b) => Buffer.from(copyText(batch.map((e, i) => rowOf(e, i, round * batches + b))))),
      insert: data("insert-").map((batch, b) => batch.flatMap((e, i) => rowOf(e, i, round * batches + b)))
    }
  }
  const chains = Array.from({ length: chainsPerBatch }, (_, i) => `rr-seq-${i}`)
  const modes = {
    copy: (x: ReturnType<typeof inputs>) =>
      seconds(async () => {
        for (const chunk of x.copy) await copyIn(raw, copyStatement, chunk)
      }),
    insert: (x: ReturnType<typeof inputs>) => seconds(() => run(Effect.forEach(x.insert, (params) => sql.unsafe(insertStatement, params), { discard: true }))),
    http: (x: ReturnType<typeof inputs>) => post(x.bodies, 1),
    // Several emitters at once (as gateway and agent replicas are): each its own chains, 4 batches in flight.
    http4: (x: ReturnType<typeof inputs>) => post(x.bodies, 4)
  }

  process.stderr.write("warm-up…\n")
  for (const mode of Object.values(modes)) {
    const warm = inputs(rounds, () => "warm")
    yield* Effect.promise(() => mode({ bodies: warm.bodies.slice(0, 3), copy: warm.copy.slice(0, 3), insert: warm.insert.slice(0, 3) }))
  }
  yield* Effect.promise(() => verifyOverHttp("rr-warm-0").then(() => verifyInProcess("rr-warm-0")))

  const times: Record<string, Array<number>> = {}
  const record = (key: string, value: number) => (times[key] ??= []).push(value)
  let verified = 0
  for (let round = 0; round < rounds; round++) {
    process.stderr.write(`round ${round + 1}/${rounds}…\n`)
    const seq = inputs(round, () => "seq")
    const con = inputs(round, (b) => `con${round}-${b % 4}`)
    const writers = [["copy", seq], ["insert", seq], ["http", seq], ["http4", con]] as const
    for (let w = 0; w < writers.length; w++) {
      const [mode, input] = writers[(round + w) % writers.length]!
      record(mode, yield* Effect.promise(() => modes[mode](input)))
    }
    let counted = 0
    record(
      "verifyHttp",
      yield* Effect.promise(() =>
        seconds(async () => {
          for (const c of chains) counted += await verifyOverHttp(c)
        })
      )
    )
    record(
      "verifyInProcess",
      yield* Effect.promise(() =>
        seconds(async () => {
          for (const c of chains) await verifyInProcess(c)
        })
      )
    )
    verified = counted
    // The pure walk: the same chains' rows fetched beforehand, hashed in process.
    const fetched = yield* Effect.forEach(
      chains,
      (cid) => sql.unsafe<AuditRow>(`SELECT ${auditColumns} FROM audit_events WHERE correlation_id = $1 ORDER BY chain_position`, [cid])
    )
    const chainRows = fetched.map((rows) => rows.map(toChainRow))
    record(
      "walk",
      yield* Effect.promise(() =>
        seconds(async () =>
          chainRows.forEach((rows) => {
            if (verifyChain(rows, hasher).findings.length > 0) throw new Error("a chain did not verify")
          })
        )
      )
    )
    // Verification covers the chains as they stand after this round.
    record("verifiedEvents", counted)
  }

  const events = batches * batchSize
  const verifiedIn = (key: string) => times[key]!.map((t, r) => times.verifiedEvents![r]! / t)
  const rates: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
    ["raw COPY (no chain)", times.copy!.map((t) => events / t)],
    ["multi-row INSERT (no chain)", times.insert!.map((t) => events / t)],
    ["HTTP batches, hash-chained", times.http!.map((t) => events / t)],
    ["HTTP batches, 4 in flight", times.http4!.map((t) => events / t)],
    ["verify-chain over HTTP", verifiedIn("verifyHttp")],
    ["verify in process (read+walk)", verifiedIn("verifyInProcess")],
    ["verify walk only (rows fetched)", verifiedIn("walk")]
  ]
  const copyRate = median(rates[0]![1])
  console.log(
    `\nstorage ingest: ${rounds} rounds x ${batches} batches x ${batchSize} events, ${chainsPerBatch} chains, PostgreSQL ${
      Option.isSome(configured) ? "from DATABASE_URL" : "embedded"
    }; verification of the last round: ${verified} events`
  )
  console.log(`${"mode (median round)".padEnd(32)} ${"events/s".padStart(9)} ${"vs COPY".padStart(8)} ${"min..max events/s".padStart(20)}`)
  for (const [mode, xs] of rates) {
    const m = median(xs)
    const range = `${Math.round(Math.min(...xs))}..${Math.round(Math.max(...xs))}`
    console.log(`${mode.padEnd(32)} ${String(Math.round(m)).padStart(9)} ${(m / copyRate).toFixed(2).padStart(8)} ${range.padStart(20)}`)
  }
  const httpRatios = times.http!.map((t, r) => times.copy![r]! / t)
  console.log(`HTTP/COPY ratio per round: ${httpRatios.map((x) => x.toFixed(2)).join(" ")}`)
})

NodeRuntime.runMain(
  Effect.scoped(program).pipe(
    Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)),
    Effect.withConfigProvider(ConfigProvider.fromEnv())
  )
)
