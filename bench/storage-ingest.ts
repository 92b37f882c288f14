/**
 * Storage ingest: events/s of 1000-event hash-chained batches POSTed to the real storage service over HTTP, next to
 * the same rows written straight into the same database with raw `COPY … FROM STDIN` and with a multi-row INSERT
 * (into tables with the same columns and indexes, no chain, no triggers), in the same run; then hash-chain
 * verification events/s (through the API, and the pure walk in process).
 *
 *   node --import tsx bench/storage-ingest.ts            # embedded PostgreSQL, or DATABASE_URL / TEST_DATABASE_URL
 *   BATCHES=50 node --import tsx bench/storage-ingest.ts
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { DevKube } from "@kubemend/core/devkit/kube/index"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { apiPort, ServerConfig } from "@kubemend/core/Servers"
import { Config, ConfigProvider, Duration, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { createRequire } from "node:module"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { StorageServiceLive } from "../packages/storage/src/Api.ts"
import { makeHasher } from "../packages/storage/src/Chain.ts"
import { auditColumns, type AuditRow, toChainRow } from "../packages/storage/src/Db/AuditRows.ts"
import * as EmbeddedPg from "../packages/storage/src/EmbeddedPg.ts"
import { StorageConfig } from "../packages/storage/src/StorageConfig.ts"
import { verifyChain } from "../packages/storage/src/Chain.ts"

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
const pg = createRequire(import.meta.url)("pg") as { Client: new (config: { connectionString: string }) => PgRawClient }

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
const columns = ["event_id", "event_version", "event_timestamp", "event_date", "event_type", "event_category", "event_action", "event_outcome", "actor_type", "actor_id", "correlation_id", "namespace", "retention_days", "event_data", "chain_position", "event_hash", "previous_event_hash", "hash_algorithm"]

const makeBatch = (b: number, prefix = "seq"): Array<{
  event_id: string; version: string; event_type: string; event_timestamp: string; event_category: string; event_action: string
  event_outcome: string; actor_type: string; actor_id: string; correlation_id: string; namespace: string; event_data: Record<string, unknown>
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
    event_data: { event_type: "apifrontend.tool.executed", session_id: `s-${b}`, tool_name: "svc_list_remediations", execution_duration_ms: i % 250, tool_outcome: "success", target_namespace: "prod" }
  }))

type Event = ReturnType<typeof makeBatch>[number]
/** Chain positions as the service would assign them: each batch adds `batchSize / chainsPerBatch` links per chain. */
const rowOf = (e: Event, i: number, b: number) => [
  e.event_id, e.version, e.event_timestamp, e.event_timestamp.slice(0, 10), e.event_type, e.event_category, e.event_action, e.event_outcome,
  e.actor_type, e.actor_id, e.correlation_id, e.namespace, 2555, JSON.stringify(e.event_data),
  b * (batchSize / chainsPerBatch) + Math.floor(i / chainsPerBatch) + 1, randomBytes(32).toString("hex"), "", "sha256-unkeyed"
]
const copyText = (rows: ReadonlyArray<ReadonlyArray<unknown>>) =>
  rows.map((r) => r.map((v) => String(v).replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n")).join("\t")).join("\n") + "\n"

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>, label: string) =>
  Effect.gen(function* () {
    process.stderr.write(`${label}…\n`)
    const start = performance.now()
    const result = yield* effect
    return [result, (performance.now() - start) / 1000] as const
  })

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
  yield* Effect.addFinalizer(() => Effect.promise(() => (admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) as Promise<unknown>).catch(() => undefined)))
  const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString()

  const kube = yield* DevKube.scoped({})
  const token = kube.registerServiceAccountToken("kubemend-system", "bench")
  const dlq = yield* tempDir("bench-dlq-")
  const settings = {
    ...StorageConfig.defaults,
    database: { _tag: "Url" as const, url: Redacted.make(url) },
    retention: { ...StorageConfig.defaults.retention, enabled: false },
    dlq: { capacity: 10_000, dir: dlq, replayInterval: Duration.seconds(5) }
  }
  const service = StorageServiceLive.pipe(
    Layer.provideMerge(Layer.mergeAll(StorageConfig.layer(settings), ServerConfig.layer(), K8sLive.layer({ namespace: "kubemend-system", kubeconfig: kube.kubeConfig() }))),
    Layer.provideMerge(NodeContext.layer)
  )
  const context = yield* Layer.build(service)
  const port = yield* Effect.provide(apiPort, context)
  const sql = yield* Effect.provide(PgClient.PgClient, context)
  const post = (events: ReadonlyArray<Event>) =>
    Effect.promise(async () => {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/audit/events/batch`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(events)
      })
      if (r.status !== 201) throw new Error(`batch answered ${r.status}: ${await r.text()}`)
    })

  const data = Array.from({ length: batches }, (_, b) => makeBatch(b))
  yield* post(makeBatch(-1)) // warm-up: JIT, pool, plan cache
  const [, httpSeconds] = yield* timed(Effect.forEach(data, post, { discard: true }), "HTTP batches")
  // Several emitters at once (as gateway and agent replicas are): each client its own chains, 4 batches in flight.
  const concurrent = data.map((_, b) => makeBatch(b, `con${b % 4}`))
  const [, concurrentSeconds] = yield* timed(Effect.forEach(concurrent, post, { discard: true, concurrency: 4 }), "HTTP batches, 4 in flight")

  yield* sql.unsafe(`CREATE TABLE bench_copy (LIKE audit_events INCLUDING DEFAULTS INCLUDING INDEXES)`)
  yield* sql.unsafe(`CREATE TABLE bench_insert (LIKE audit_events INCLUDING DEFAULTS INCLUDING INDEXES)`)
  const copyData = data.map((batch, b) => Buffer.from(copyText(batch.map((e, i) => rowOf(e, i, b)))))
  const raw = new pg.Client({ connectionString: url })
  yield* Effect.promise(() => raw.connect())
  const [, copySeconds] = yield* timed(Effect.forEach(copyData, (chunk) =>
    Effect.promise(() => copyIn(raw, `COPY bench_copy (${columns.join(", ")}) FROM STDIN`, chunk)), { discard: true }), "COPY")
  yield* Effect.promise(() => raw.end())
  const placeholders = Array.from({ length: batchSize }, (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(", ")})`).join(", ")
  const [, insertSeconds] = yield* timed(Effect.forEach(data, (batch, b) =>
    sql.unsafe(`INSERT INTO bench_insert (${columns.join(", ")}) VALUES ${placeholders}`, batch.flatMap((e, i) => rowOf(e, i, b))), { discard: true }), "INSERT")

  const chains = Array.from({ length: chainsPerBatch }, (_, i) => `rr-seq-${i}`)
  const [reports, verifySeconds] = yield* timed(Effect.forEach(chains, (cid) =>
    Effect.promise(async () => {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/audit/verify-chain`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ correlation_id: cid })
      })
      return (await r.json()) as { is_valid: boolean; total_events: number }
    })), "verify-chain")
  const verified = reports.reduce((n, r) => n + r.total_events, 0)
  if (!reports.every((r) => r.is_valid)) throw new Error("a chain did not verify")
  const fetched = yield* Effect.forEach(chains, (cid) =>
    sql.unsafe<AuditRow>(`SELECT ${auditColumns} FROM audit_events WHERE correlation_id = $1 ORDER BY chain_position`, [cid]))
  const chainRows = fetched.map((rows) => rows.map(toChainRow))
  const hasher = makeHasher(undefined)
  const walked = chainRows.reduce((n, rows) => n + rows.length, 0)
  const [, walkSeconds] = yield* timed(Effect.sync(() => chainRows.forEach((rows) => verifyChain(rows, hasher))), "walk")
  const events = batches * batchSize
  const table = [
    ["raw COPY (no chain)", events, copySeconds],
    ["multi-row INSERT (no chain)", events, insertSeconds],
    ["HTTP batches, hash-chained", events, httpSeconds],
    ["HTTP batches, 4 in flight", events, concurrentSeconds],
    ["verify-chain over HTTP", verified, verifySeconds],
    ["verify walk in process", walked, walkSeconds]
  ] as const
  const copyRate = events / copySeconds
  console.log(`\nstorage ingest: ${batches} batches x ${batchSize} events, ${chainsPerBatch} chains, PostgreSQL ${Option.isSome(configured) ? "from DATABASE_URL" : "embedded"}`)
  console.log(`${"mode".padEnd(30)} ${"events".padStart(8)} ${"seconds".padStart(8)} ${"events/s".padStart(10)} ${"vs COPY".padStart(8)}`)
  for (const [mode, n, s] of table) {
    const rate = n / s
    console.log(`${mode.padEnd(30)} ${String(n).padStart(8)} ${s.toFixed(2).padStart(8)} ${Math.round(rate).toString().padStart(10)} ${(rate / copyRate).toFixed(2).padStart(8)}`)
  }
})

NodeRuntime.runMain(
  Effect.scoped(program).pipe(
    Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)),
    Effect.withConfigProvider(ConfigProvider.fromEnv())
  )
)
