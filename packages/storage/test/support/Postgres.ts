/**
 * A fresh PostgreSQL database per test file: on the server in `TEST_DATABASE_URL` when set (a new database,
 * dropped afterwards), else on an embedded server in a temp directory. The embedded cluster is initialised once
 * per machine into a template directory and copied, so each file only pays for starting postgres.
 */
import { freePort } from "@kubemend/devkit/FreePort"
import { Config, ConfigProvider, Effect, Option, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { PgClient } from "@effect/sql-pg"
import * as EmbeddedPg from "../../src/EmbeddedPg.ts"
import { withLock } from "./Lock.ts"

const templateRoot = Path.join(Os.tmpdir(), "kubemend-storage-pg-template")
const templateDir = Path.join(templateRoot, "postgres")

const exists = (p: string) =>
  Fs.access(p).then(
    () => true,
    () => false
  )

const ensureTemplate = Effect.promise(() =>
  withLock(`${templateRoot}.lock`, async () => {
    // The credentials file is written last: a template whose run was killed during initdb has none and is redone.
    if (await exists(`${templateDir}.credentials.json`)) return
    await Fs.rm(templateRoot, { recursive: true, force: true })
    await Effect.runPromise(Effect.scoped(EmbeddedPg.start({ dataDir: templateDir, port: await Effect.runPromise(freePort), persistent: true })))
  })
)

/** An embedded server on a copy of the template, removed when the scope closes. */
const embedded = Effect.gen(function* () {
  yield* ensureTemplate
  const dir = yield* Effect.acquireRelease(
    Effect.promise(async () => {
      const d = await Fs.mkdtemp(Path.join(Os.tmpdir(), "kubemend-storage-test-"))
      await Fs.chmod(d, 0o755)
      // `cp -a` keeps the owner (the `postgres` user when running as root) and the 0700 mode postgres insists on.
      execFileSync("cp", ["-a", templateDir, Path.join(d, "postgres")])
      await Fs.copyFile(`${templateDir}.credentials.json`, Path.join(d, "postgres.credentials.json"))
      return d
    }),
    (d) => Effect.promise(() => Fs.rm(d, { recursive: true, force: true }))
  )
  const server = yield* EmbeddedPg.start({ dataDir: Path.join(dir, "postgres"), port: yield* freePort, persistent: true })
  return server.url
})

/** One statement on the server's maintenance database. */
const admin = (url: string, statement: string) =>
  Effect.flatMap(PgClient.PgClient, (sql) => sql.unsafe(statement)).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.orDie
  )

/** A database of its own for the calling test file; its URL. */
export const testDatabaseUrl = Effect.gen(function* () {
  const configured = yield* Config.option(Config.string("TEST_DATABASE_URL")).pipe(Effect.withConfigProvider(ConfigProvider.fromEnv()))
  const server = Option.isSome(configured) ? configured.value : Redacted.value(yield* embedded)
  const name = `kubemend_test_${randomBytes(6).toString("hex")}`
  yield* Effect.acquireRelease(
    admin(server, `CREATE DATABASE ${name}`),
    () => admin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.catchAllCause(() => Effect.void))
  )
  const url = new URL(server)
  url.pathname = `/${name}`
  return url.toString()
})
