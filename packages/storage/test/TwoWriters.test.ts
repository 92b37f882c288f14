/**
 * Two storage replicas (two service processes, as two pods) on one database, writing audit batches to the same
 * chains at once: the chains verify unbroken and every acknowledged event is stored exactly once, also when a
 * client resends an acknowledged batch to the other replica (a retry after a lost answer). The advisory lock a batch
 * takes per correlation id is what serializes writers across processes; a batch touches two chains, in an order
 * that differs between writers, so two replicas would deadlock without the lock's key order.
 */
import { PgClient } from "@effect/sql-pg"
import { DevKube } from "@kubemend/devkit/kube/index"
import { freePort } from "@kubemend/devkit/FreePort"
import { Effect, Exit, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { auditEvent, namespace, storageGrants } from "./support/Harness.ts"
import { testDatabaseUrl } from "./support/Postgres.ts"

const root = Path.resolve(__dirname, "..", "..", "..")
const chains = ["rr-two-writers-a", "rr-two-writers-b"] as const
const writersPerReplica = 4
const batchesPerWriter = 6
const eventsPerBatch = 20

interface Replica {
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
}

const scope = Effect.runSync(Scope.make())
let databaseUrl = ""
let token = ""
const replicas: Array<Replica> = []

/** One storage process with a config file of its own (ports, data directory), on the shared database. */
const startReplica = async (dir: string, kubeconfig: string, index: number): Promise<Replica> => {
  const [port, healthPort, metricsPort] = await Effect.runPromise(Effect.all([freePort, freePort, freePort]))
  const configFile = Path.join(dir, `storage-${index}.json`)
  const config = { bindAddress: "127.0.0.1", port, healthPort, metricsPort, namespace, dataDir: Path.join(dir, `data-${index}`), retention: { enabled: false } }
  Fs.writeFileSync(configFile, JSON.stringify(config))
  const child = spawn(process.execPath, ["--import", "tsx", Path.join(root, "packages/storage/src/main.ts")], {
    cwd: root,
    env: { ...process.env, CONFIG_FILE: configFile, DATABASE_URL: databaseUrl, KUBECONFIG: kubeconfig },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const until = Date.now() + 60_000
  while (!(await fetch(`http://127.0.0.1:${healthPort}/readyz`).then((r) => r.ok, () => false))) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`storage ${index} did not become ready:\n${output.slice(-3000)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return { url: `http://127.0.0.1:${port}`, child, output: () => output }
}

const post = (replica: Replica, path: string, body: unknown) =>
  fetch(`${replica.url}/api/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body)
  })

/** A batch alternating between the two chains, starting with `first` (writers differ in which chain comes first). */
const batch = (first: number) =>
  Array.from({ length: eventsPerBatch }, (_, i) => {
    const event_id = randomUUID()
    return { ...auditEvent({ correlation_id: chains[(first + i) % 2] }), event_id }
  })

describe("two storage replicas writing one chain", () => {
  beforeAll(async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-two-writers-"))
    const { kube, url } = await Effect.runPromise(Scope.extend(Effect.all({ url: testDatabaseUrl, kube: DevKube.scoped({}) }), scope))
    databaseUrl = url
    token = kube.registerServiceAccountToken(namespace, "gateway")
    await kube.seed(storageGrants({ kind: "ServiceAccount", name: "gateway", namespace }) as never)
    const kubeconfig = Path.join(dir, "kubeconfig")
    Fs.writeFileSync(kubeconfig, kube.kubeConfig())
    // One after the other, as pods start after the migration Job: the first applies the migrations.
    for (const index of [0, 1]) replicas.push(await startReplica(dir, kubeconfig, index))
  }, 150_000)

  afterAll(async () => {
    for (const r of replicas) r.child.kill("SIGTERM")
    await Promise.all(replicas.map((r) => (r.child.exitCode === null ? new Promise((res) => r.child.once("exit", res)) : undefined)))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  it("keeps both chains unbroken and stores every acknowledged event exactly once", { timeout: 120_000 }, async () => {
    const acknowledged: Array<string> = []
    const resent: Array<ReturnType<typeof batch>> = []
    const writer = async (replica: Replica, first: number) => {
      for (let n = 0; n < batchesPerWriter; n++) {
        const events = batch(first)
        const res = await post(replica, "/audit/events/batch", events)
        const body = await res.json()
        expect(res.status, JSON.stringify(body)).toBe(201)
        expect(body.event_ids).toEqual(events.map((e) => e.event_id))
        acknowledged.push(...body.event_ids)
        if (n === 0) resent.push(events)
      }
    }
    await Promise.all(
      replicas.flatMap((replica, r) => Array.from({ length: writersPerReplica }, (_, w) => writer(replica, (r + w) % 2)))
    )
    // A client that lost the answers sends its first batch again, to the other replica.
    await Promise.all(resent.map(async (events, i) => {
      const res = await post(replicas[(i + 1) % 2]!, "/audit/events/batch", events)
      expect(res.status).toBe(201)
    }))

    const total = replicas.length * writersPerReplica * batchesPerWriter * eventsPerBatch
    expect(new Set(acknowledged).size).toBe(total)
    for (const chain of chains) {
      for (const replica of replicas) {
        const report = await (await post(replica, "/audit/verify-chain", { correlation_id: chain })).json()
        expect(report, chain).toMatchObject({ is_valid: true, total_events: total / 2, verified_events: total / 2 })
      }
    }
    const stored = await Effect.runPromise(
      Effect.flatMap(PgClient.PgClient, (sql) =>
        sql.unsafe<{ event_id: string; copies: string }>(
          `SELECT event_id::text, count(*) AS copies FROM audit_events WHERE correlation_id = ANY($1) GROUP BY event_id`,
          [[...chains]]
        )).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })), Effect.orDie)
    )
    expect(stored.filter((r) => Number(r.copies) !== 1)).toEqual([])
    expect(new Set(stored.map((r) => r.event_id))).toEqual(new Set(acknowledged))
  })
})
