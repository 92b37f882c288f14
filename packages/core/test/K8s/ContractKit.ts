/** Shared pieces of the K8s contract cases: fixtures, a background watch collector, polling, the case signature. */
import { Chunk, Effect, Queue, Schedule, type Scope, Stream } from "effect"
import type { K8s, KubeObject, WatchEvent } from "../../src/K8s.ts"
import { apiGroup, type HarnessOptions, type K8sHarness } from "./Harness.ts"

/** Runs a case body against a fresh layer (and server) built with these options. */
export type Using = (options?: HarnessOptions) => <A, E>(
  body: Effect.Effect<A, E, K8s | K8sHarness | Scope.Scope>
) => Effect.Effect<A, unknown>

export const plural = "remediationrequests" as const

export const rr = (name: string, labels: Record<string, string> = {}, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "RemediationRequest",
  metadata: { name, labels },
  spec: { signalName: name },
  ...extra
})

/** Polls (bounded) until `read` gives `expected`. */
export const eventually = <A>(read: Effect.Effect<A>, expected: A) =>
  read.pipe(
    Effect.repeat({ until: (a) => a === expected, schedule: Schedule.spaced("20 millis") }),
    Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => new Error(`never reached ${String(expected)}`) }),
    Effect.orDie
  )

export const names = (items: ReadonlyArray<KubeObject>) => items.map((o) => o.metadata.name).sort()
const line = (e: WatchEvent) => `${e.type} ${e.object.metadata.name}`

/** Runs a watch in the background; `next(n)` waits (bounded) for n more events, `quiet` checks nothing else came. */
export const collect = <E>(stream: Stream.Stream<WatchEvent, E>) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<string>()
    yield* stream.pipe(Stream.runForEach((e) => Queue.offer(queue, line(e))), Effect.forkScoped)
    const next = (n: number) =>
      Queue.takeBetween(queue, n, n).pipe(
        Effect.map(Chunk.toReadonlyArray),
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error(`timed out waiting for ${n} events`) }),
        Effect.orDie
      )
    const quiet = Effect.sleep("300 millis").pipe(Effect.zipRight(Queue.takeAll(queue)), Effect.map(Chunk.toReadonlyArray))
    return { next, quiet }
  })

export const event = (name: string, reason: string, kind: string, object: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace: "apps" },
  reason,
  involvedObject: { kind, name: object, namespace: "apps" },
  message: `${reason} ${object}`,
  type: "Warning"
})
