/**
 * What a store of shared state offers (SharedState.ts): the contract the memory and Valkey stores implement and the
 * service the replicas use. Apart from the stores and the tag so that they need not import each other.
 */
import type { Duration, Effect, Option, Stream } from "effect"
import type { BucketSpec, Take } from "../Limits/Buckets.ts"

/** What taking a session slot answered: taken (or already held), or which cap refused it. */
export type Admission = "admitted" | "user-full" | "total-full"

/** What `takeAll` answered: every token taken, or which bucket (index into the takes) refused and the wait. */
export type Takes = { readonly ok: true } | { readonly ok: false; readonly refused: number; readonly retryAfterSeconds: number }

/** What `notices` tells: a message announced on its topic, or that announcements may have been missed meanwhile. */
export type Notice = { readonly _tag: "Announced"; readonly message: string } | { readonly _tag: "Missed" }

export interface SlotLimits {
  /** Slots held at once across all users. */
  readonly total: number
  /** Slots held at once by one user. */
  readonly perUser: number
}

/** One store of shared state; `E` is how it fails (never for memory). */
export interface Store<E> {
  /** The live value of `key`, none when absent or expired. */
  readonly get: (key: string) => Effect.Effect<Option.Option<string>, E>
  /** Sets `key` to `value`, expiring `ttl` from now. */
  readonly put: (key: string, value: string, ttl: Duration.Duration) => Effect.Effect<void, E>
  readonly remove: (key: string) => Effect.Effect<void, E>
  /**
   * Takes slot `id` for `owner` until `ttl` from now, unless `owner` holds `limits.perUser` live slots or all
   * `limits.total` are held. Taking a slot already held renews it. Atomic across replicas.
   */
  readonly acquireSlot: (id: string, owner: string, limits: SlotLimits, ttl: Duration.Duration) => Effect.Effect<Admission, E>
  /** Renews a held slot until `ttl` from now (a slot that expired or was released stays free). */
  readonly touchSlot: (id: string, owner: string, ttl: Duration.Duration) => Effect.Effect<void, E>
  readonly releaseSlot: (id: string, owner: string) => Effect.Effect<void, E>
  /** Live slots held, across all users. */
  readonly slotsInUse: Effect.Effect<number, E>
  /** One token from the bucket `key` (created full); atomic across replicas. */
  readonly take: (key: string, spec: BucketSpec) => Effect.Effect<Take, E>
  /**
   * One token from each bucket in turn, atomically, stopping at the first that refuses (the later ones are left
   * untouched): several limits of one request in one round trip, counted as lone `take`s in that order would be.
   */
  readonly takeAll: (takes: ReadonlyArray<readonly [key: string, spec: BucketSpec]>) => Effect.Effect<Takes, E>
  /**
   * Puts one token back into the bucket `key`, up to its capacity, as if the take that took it had not happened
   * (a bucket since forgotten stays so: a new one starts full). For a take made ahead, before it was known to count.
   */
  readonly giveBack: (key: string, spec: BucketSpec) => Effect.Effect<void, E>
  /**
   * Tells `message` to every replica watching `topic` (this one too), at once and not kept: a replica cut off from
   * the store meanwhile misses it, and its `notices` say `Missed` once it is back.
   */
  readonly announce: (topic: string, message: string) => Effect.Effect<void, E>
  /** What is announced on `topic` from now on, and `Missed` whenever some of it may have been lost. */
  readonly notices: (topic: string) => Stream.Stream<Notice>
  /** Succeeds when the store answers. */
  readonly ping: Effect.Effect<void, E>
}

export interface SharedStateService extends Store<never> {
  /** Where the state lives by configuration. */
  readonly backend: "memory" | "valkey"
  /** Some(reason) while Valkey is configured but unreachable and this replica counts on its own. */
  readonly degraded: Effect.Effect<Option.Option<string>>
}
