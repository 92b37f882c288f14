/**
 * `COPY … FROM STDIN` on the connection of the current transaction: the audit write path's bulk insert, a few
 * times faster than an INSERT of the same rows. @effect/sql-pg 0.53 has no COPY API (nor a way to stream rows as
 * they arrive); the connection it holds for a transaction keeps its `pg` client in a `pg` field, which this reaches
 * for the two hot paths, this one and the chain read (ChainRead.ts). The version is pinned; without a transaction
 * or that field the call dies loudly rather than running outside the transaction.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"

/** The protocol calls a pg "submittable" gets (the same ones pg-copy-streams uses). */
interface PgWire {
  query(text: string): void
  sendCopyFromChunk(chunk: Buffer): void
  endCopyFrom(): void
  sendCopyFail(message: string): void
}

interface PgClientLike {
  query(submittable: object, callback?: (error: Error | null, result: { readonly rows: Array<Array<unknown>> }) => void): unknown
}

/** The `pg` client of the current transaction's connection (dies outside a transaction on a PgClient). */
export const transactionClient: Effect.Effect<PgClientLike> = Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (tx) =>
  Option.match(
    Option.flatMap(tx, ([connection]) => Option.fromNullable((connection as unknown as { readonly pg?: PgClientLike }).pg)),
    { onNone: () => Effect.dieMessage("COPY and paged reads must run inside sql.withTransaction on a PgClient"), onSome: Effect.succeed }
  ))

/**
 * Streams COPY text into `statement`, one chunk from `next()` at a time (`undefined` ends the data). Each chunk is
 * handed to the socket as soon as it is built and the next one is built on a later turn of the event loop, so
 * PostgreSQL parses and inserts chunk k on its core while this process builds chunk k+1 on the other. The data
 * follows the statement without waiting for CopyInResponse (a round trip saved): the server reads it once the COPY
 * starts, and ignores it if the statement failed (the protocol says CopyData outside a COPY is discarded). Fails with
 * the server's error as a SqlError. `next` may refuse the data by throwing an `E` that `refusal` recognises: the COPY
 * is aborted (CopyFail) and fails with it; anything else it throws aborts the COPY and dies. On interruption the
 * COPY is aborted too, so the connection is left usable for the transaction's rollback.
 */
export const copyInChunks = <E>(statement: string, next: () => string | undefined, refusal: (thrown: unknown) => thrown is E) =>
  Effect.flatMap(transactionClient, (client) =>
    Effect.async<void, SqlError | E>((resume) => {
      let wire: PgWire | undefined
      let ended = false
      let settled = false
      let thrown: { readonly value: unknown } | undefined
      const settle = (effect: Effect.Effect<void, SqlError | E>) => {
        if (settled) return
        settled = true
        resume(effect)
      }
      const abort = (reason: string) => {
        if (wire === undefined || ended) return
        ended = true
        wire.sendCopyFail(reason)
      }
      const pump = () => {
        if (ended || wire === undefined) return
        let chunk: string | undefined
        try {
          chunk = next()
        } catch (e) {
          thrown = { value: e }
          return abort("the COPY data was refused")
        }
        if (chunk === undefined) {
          ended = true
          wire.endCopyFrom()
          return
        }
        wire.sendCopyFromChunk(Buffer.from(chunk, "utf8"))
        setImmediate(pump)
      }
      client.query({
        // Must return nothing: pg treats a return value as a submission error.
        submit: (w: PgWire) => {
          w.query(statement)
          wire = w
          pump()
        },
        handleCopyInResponse: () => {},
        handleCommandComplete: () => {},
        // pg forgets the active query once the server reports an error, so settle here; the server has left the
        // COPY, so the rest of the data is not sent.
        handleError: (cause: unknown) => {
          ended = true
          settle(
            thrown === undefined
              ? Effect.fail(new SqlError({ cause, message: "COPY failed" }))
              : refusal(thrown.value)
              ? Effect.fail(thrown.value)
              : Effect.die(thrown.value)
          )
        },
        handleReadyForQuery: () => settle(Effect.void)
      })
      return Effect.sync(() => {
        settled = true
        abort("interrupted")
      })
    }))
