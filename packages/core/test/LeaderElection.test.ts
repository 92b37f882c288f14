/**
 * Leader election on the in-memory K8s layer (the same Lease semantics as the dev API server: see the lease case of
 * the K8s contract) with TestClock: acquire, renew, losing on missed renews, release on shutdown, two candidates.
 */
import { expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Layer, Option, Ref, Scope, TestClock } from "effect"
import { K8s } from "../src/K8s.ts"
import { K8sMemory } from "../src/K8s/Memory.ts"
import { defaults, LeaderElection, make, validate, whenLeading } from "../src/LeaderElection.ts"
import { Metrics } from "../src/Metrics.ts"

const leaseName = "kubemend-operator"
const settings = (identity: string) => ({ leaseName, identity, ...defaults })

/** A candidate in a scope of its own, with a work item counting how often it started and whether it runs now. */
const candidate = (identity: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const election = yield* make(settings(identity)).pipe(Scope.extend(scope))
    const running = yield* Ref.make(false)
    const starts = yield* Ref.make(0)
    const work = Effect.gen(function* () {
      yield* Ref.update(starts, (n) => n + 1)
      yield* Ref.set(running, true)
      yield* Effect.addFinalizer(() => Ref.set(running, false))
    })
    yield* election.whenLeading(work).pipe(Scope.extend(scope))
    return { election, scope, running: Ref.get(running), starts: Ref.get(starts) }
  })

const holder = Effect.flatMap(K8s, (k8s) => k8s.listLeases(leaseName)).pipe(Effect.map((ls) => ls[0]?.holder))

const env = Layer.merge(K8sMemory.layer({ namespace: "kubemend-system" }), Metrics.Default)

it.effect("a single candidate acquires at once, runs its work, and renews every retryPeriod", () =>
  Effect.gen(function* () {
    const a = yield* candidate("pod-a")
    yield* TestClock.adjust("1 millis")
    expect(yield* a.election.isLeader).toBe(true)
    expect(yield* a.running).toBe(true)
    expect(yield* holder).toBe("pod-a")
    const metrics = yield* Metrics
    expect((yield* metrics.render(undefined)).body).toContain(`leader{lease="${leaseName}",identity="pod-a"} 1`)

    // Well past the lease duration: renews keep it, and the work started once.
    yield* TestClock.adjust("60 seconds")
    const k8s = yield* K8s
    const lease = (yield* k8s.listLeases(leaseName))[0]!
    expect(lease.renewedAt.getTime()).toBeGreaterThanOrEqual(58_000)
    expect(yield* a.starts).toBe(1)
    yield* Scope.close(a.scope, Exit.void)
  }).pipe(Effect.provide(env)))

it.effect("two candidates: one leads, the other stands by idle; a clean shutdown hands over at once", () =>
  Effect.gen(function* () {
    const a = yield* candidate("pod-a")
    yield* TestClock.adjust("1 millis")
    const b = yield* candidate("pod-b")
    yield* TestClock.adjust("30 seconds")
    expect([yield* a.election.isLeader, yield* b.election.isLeader]).toEqual([true, false])
    expect([yield* a.running, yield* b.running]).toEqual([true, false])

    // pod-a stops: its work ends, the lease is released, and pod-b takes it on its next try (≤ 2 × retryPeriod
    // with jitter), not after the 15 s lease would have run out.
    yield* Scope.close(a.scope, Exit.void)
    expect(yield* a.running).toBe(false)
    expect(yield* holder).toBeUndefined()
    yield* TestClock.adjust("5 seconds")
    expect(yield* b.election.isLeader).toBe(true)
    expect(yield* b.running).toBe(true)
    expect(yield* holder).toBe("pod-b")
    yield* Scope.close(b.scope, Exit.void)
  }).pipe(Effect.provide(env)))

it.effect("a leader whose renews fail for renewDeadline stops its work before the lease expires; a standby takes over", () =>
  Effect.gen(function* () {
    const a = yield* candidate("pod-a")
    yield* TestClock.adjust("1 millis")
    const b = yield* candidate("pod-b")
    yield* TestClock.adjust("3 seconds")
    expect(yield* a.election.isLeader).toBe(true)

    // Every lease update fails from now on (pod-a's renews and pod-b's takeover alike).
    const memory = yield* K8sMemory
    yield* memory.failNext(1_000_000, { status: 503, verb: "update", plural: "leases" })
    yield* TestClock.adjust("12 seconds")
    // Lost within retryPeriod + renewDeadline of its last renew, i.e. before the 15 s lease runs out.
    expect(yield* a.election.isLeader).toBe(false)
    expect(yield* a.running).toBe(false)
    expect(yield* b.election.isLeader).toBe(false)

    // The API server recovers: the expired lease goes to whichever candidate tries first; only one leads.
    yield* memory.clearFaults
    yield* TestClock.adjust("20 seconds")
    const leaders = [yield* a.election.isLeader, yield* b.election.isLeader].filter((x) => x)
    expect(leaders).toEqual([true])
    expect([yield* a.running, yield* b.running].filter((x) => x)).toEqual([true])
    yield* Scope.close(a.scope, Exit.void)
    yield* Scope.close(b.scope, Exit.void)
  }).pipe(Effect.provide(env)))

it.effect("work registered while leading starts at once and stops with its own scope; whenLeading without an election runs directly", () =>
  Effect.gen(function* () {
    const a = yield* candidate("pod-a")
    yield* TestClock.adjust("1 millis")
    const late = yield* Ref.make(false)
    const lateScope = yield* Scope.make()
    yield* a.election.whenLeading(Effect.acquireRelease(Ref.set(late, true), () => Ref.set(late, false))).pipe(Scope.extend(lateScope))
    expect(yield* Ref.get(late)).toBe(true)
    yield* Scope.close(lateScope, Exit.void)
    expect(yield* Ref.get(late)).toBe(false)
    expect(yield* a.running).toBe(true)
    yield* Scope.close(a.scope, Exit.void)

    const direct = yield* Ref.make(false)
    yield* Effect.scoped(whenLeading(Ref.set(direct, true)))
    expect(yield* Ref.get(direct)).toBe(true)
  }).pipe(Effect.provide(env)))

it.effect("the layer provides the election to whenLeading", () =>
  Effect.gen(function* () {
    const ran = yield* Ref.make(0)
    const fiber = yield* Effect.fork(
      Effect.scoped(Effect.gen(function* () {
        yield* whenLeading(Ref.update(ran, (n) => n + 1))
        yield* Effect.never
      })).pipe(Effect.provide(LeaderElection.layer(settings("pod-a"))))
    )
    yield* TestClock.adjust("10 seconds")
    expect(yield* Ref.get(ran)).toBe(1)
    yield* Fiber.interrupt(fiber)
    expect(yield* holder).toBeUndefined()
  }).pipe(Effect.provide(env)))

it("client-go's checks on the durations", () => {
  expect(validate(settings("x"))).toEqual(Option.none())
  expect(Option.isSome(validate({ ...settings("x"), renewDeadline: Duration.seconds(15) }))).toBe(true)
  expect(Option.isSome(validate({ ...settings("x"), retryPeriod: Duration.seconds(9) }))).toBe(true)
})
