/**
 * The dead-letter queue: writes accepted (202) while the database is unreachable, kept durably until replayed.
 *
 * One interface, two backends, chosen by the configuration (`Dlq.Default`):
 * - `valkey` block present: a Valkey/Redis stream (`Dlq/Stream.ts`), shared by every replica of the service;
 * - otherwise an append-only file under the data directory (`Dlq/File.ts`), which needs nothing installed.
 *
 * Both count capacity in events (an entry holds a whole batch), refuse a write past it (`DeadLetterQueueFull`, 503)
 * and count the refusal, and publish `datastorage_dlq_depth`, `datastorage_dlq_warning` (80%) and
 * `datastorage_dlq_critical` (90%). Replays are idempotent (event ids are assigned before queueing), so an entry
 * written but not yet removed when the process dies is only replayed twice, never stored twice.
 */
import type { DeadLetterQueueFull, DependencyUnavailable } from "@kubemend/core/Errors"
import { Context, Effect, Layer, Option } from "effect"
import { makeFile } from "./Dlq/File.ts"
import { makeStream } from "./Dlq/Stream.ts"
import { StorageConfig } from "./StorageConfig.ts"

export type DlqKind = "audit" | "notification"

export interface DlqEntry {
  readonly id: string
  readonly kind: DlqKind
  /** Number of events it holds (capacity is counted in events). */
  readonly count: number
  readonly payload: unknown
  readonly queuedAt: string
}

export interface DlqShape {
  /**
   * Queues `payload` (`count` events) durably. Fails `DeadLetterQueueFull` when it would exceed the capacity and
   * `DependencyUnavailable` when the queue itself cannot be reached (the Valkey backend): either way the caller's
   * write is refused, never left waiting.
   */
  readonly enqueue: (kind: DlqKind, payload: unknown, count: number) => Effect.Effect<void, DeadLetterQueueFull | DependencyUnavailable>
  /**
   * Hands entries, oldest first, to `write`; stops at the first failure (the database is still away) and keeps
   * that entry and the rest. Returns how many entries were written and removed.
   */
  readonly replay: <E, R>(write: (entry: DlqEntry) => Effect.Effect<void, E, R>) => Effect.Effect<number, never, R>
  readonly capacity: number
  /** Events waiting (the last known count when the Valkey backend cannot be reached). */
  readonly depth: Effect.Effect<number>
}

export class Dlq extends Context.Tag("@kubemend/storage/Dlq")<Dlq, DlqShape>() {
  /** The append-only file under `dlq.dir`. */
  static readonly layerFile = Layer.scoped(Dlq, makeFile)

  /** The stream on the configured `valkey` server (dies at start when there is no `valkey` block). */
  static readonly layerStream = Layer.scoped(
    Dlq,
    Effect.flatMap(
      StorageConfig,
      (c) => Option.match(c.valkey, { onNone: () => Effect.dieMessage("the Valkey dead-letter queue needs a valkey block"), onSome: makeStream })
    )
  )

  /** The backend the configuration names: the Valkey stream when `valkey` is set, else the file. */
  static readonly Default = Layer.unwrapEffect(
    Effect.map(StorageConfig, (c) => (Option.isSome(c.valkey) ? Dlq.layerStream : Dlq.layerFile))
  )
}
