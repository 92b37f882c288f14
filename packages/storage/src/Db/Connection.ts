/**
 * The PostgreSQL client (`@effect/sql-pg`) for the configured database: `DATABASE_URL`, the platform's
 * `postgresql` block (credentials from values or mounted Secret files, TLS per `sslMode`), or an embedded server
 * started for the lifetime of the layer.
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import type { ConnectionOptions } from "node:tls"
import * as EmbeddedPg from "../EmbeddedPg.ts"
import { runMigrations } from "./Migrations.ts"
import { type DatabaseSettings, StorageConfig } from "../StorageConfig.ts"

const readSecret = (path: string) =>
  Effect.tryPromise({
    try: async () => (await Fs.readFile(path, "utf8")).trim(),
    catch: (cause) => new EmbeddedPg.EmbeddedPgError({ message: `cannot read ${path}`, cause })
  })

/** A credential from, in order: its own file, `secretDir/<key>` (the CR's Secret keys), a plain value. */
const credential = (file: Option.Option<string>, secretDir: Option.Option<string>, key: string, value: Option.Option<string>) =>
  Option.isSome(file)
    ? Effect.map(readSecret(file.value), Option.some)
    : Option.isSome(secretDir)
    ? readSecret(Path.join(secretDir.value, key)).pipe(
      Effect.map(Option.some),
      Effect.orElseSucceed(() => value)
    )
    : Effect.succeed(value)

const tlsOptions = (mode: string, ca: Option.Option<string>): false | ConnectionOptions => {
  if (mode === "disable") return false
  if (mode === "require") return { rejectUnauthorized: false }
  const base: ConnectionOptions = Option.isSome(ca) ? { rejectUnauthorized: true, ca: ca.value } : { rejectUnauthorized: true }
  // verify-ca checks the chain but not the host name, as libpq does.
  return mode === "verify-ca" ? { ...base, checkServerIdentity: () => undefined } : base
}

/** Connection settings for `PgClient`; starts the embedded server (scoped) when that is the configured database. */
export const connectionFor = (database: DatabaseSettings) =>
  Effect.gen(function* () {
    switch (database._tag) {
      case "Url":
        return { url: database.url } satisfies PgClient.PgClientConfig
      case "Embedded": {
        const server = yield* EmbeddedPg.start(database)
        yield* Effect.logInfo("embedded PostgreSQL started").pipe(
          Effect.annotateLogs({ dataDir: database.dataDir, port: server.port })
        )
        return { url: server.url } satisfies PgClient.PgClientConfig
      }
      case "Params": {
        const username = yield* credential(database.usernameFile, database.secretDir, "POSTGRES_USER", database.username)
        const password = yield* credential(
          database.passwordFile,
          database.secretDir,
          "POSTGRES_PASSWORD",
          Option.map(database.password, Redacted.value)
        )
        const name = yield* credential(database.databaseFile, database.secretDir, "POSTGRES_DB", database.database)
        const ca = Option.isSome(database.caFile) ? Option.some(yield* readSecret(database.caFile.value)) : Option.none()
        return {
          host: database.host,
          port: database.port,
          ssl: tlsOptions(database.sslMode, ca),
          ...(Option.isSome(username) ? { username: username.value } : {}),
          ...(Option.isSome(password) ? { password: Redacted.make(password.value) } : {}),
          ...(Option.isSome(name) ? { database: name.value } : {})
        } satisfies PgClient.PgClientConfig
      }
    }
  })

/** `PgClient` + `SqlClient` for the configured database. */
export const PgLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* StorageConfig
    const connection = yield* connectionFor(config.database)
    return PgClient.layer({
      ...connection,
      maxConnections: config.maxConnections,
      connectTimeout: Duration.seconds(5),
      idleTimeout: Duration.seconds(30),
      applicationName: "kubemend-storage"
    })
  })
)

/** PgClient/SqlClient, available only once the migrations have run (idempotent; a table lock serializes replicas). */
export const DatabaseLive = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.tap((applied) => Effect.logInfo("migrations applied").pipe(Effect.annotateLogs("applied", applied.length)))
  )
).pipe(Layer.provideMerge(PgLive))
