/**
 * The K8s service in memory, for unit tests: same contract as the live layer (the contract suite runs against both),
 * same request policy and informer. `K8sMemory` is also the control handle: the recorded actions, seeding,
 * inspection, fault injection, closing watches, the SubjectAccessReview allow table and the TokenReview token table.
 *
 *   Effect.provide(K8sMemory.layer({ namespace: "ns", seed: [rr] }))
 *   const { actions } = yield* K8sMemory
 */
import { PodLogBook } from "./PodLogs.ts"
import { Clock, Context, Duration, Effect, Layer, Option, PubSub, Ref, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { type AccessReview, type CrPlural, K8s, type K8sService, K8sUnavailable, type KubeList, type KubeObject, type ReviewedUser } from "../K8s.ts"
import { crKinds, crVersion, defaultApiGroup, type K8sBaseOptions, resolveSettings } from "./Config.ts"
import * as Leases from "./Leases.ts"
import { makeMemoryLeaseStore } from "./MemoryLeases.ts"
import { type K8sAction, type FaultMatch, type FaultOptions, MemoryStore, type Signal } from "./MemoryStore.ts"
import { makeOps, type Run } from "./MemoryOps.ts"
import { redactSecret } from "./Redact.ts"
import * as RestMapper from "./RestMapper.ts"
import { conflictOr, HttpFailure, notFoundConflictOr, notFoundOr, unavailable, withPolicy } from "./Retry.ts"
import { eventSelector, retriesConflicts, statusPatch, withName } from "./Shared.ts"
import { informer } from "./Watch.ts"

export type { FaultMatch, FaultOptions, K8sAction } from "./MemoryStore.ts"

/** One allow rule; an absent field or `"*"` matches anything. A subject matches by `user` or by one of `groups`. */
export interface SarRule {
  readonly user?: string
  readonly group?: string
  readonly verb?: string
  readonly apiGroup?: string
  readonly resource?: string
  readonly name?: string
}

export interface K8sMemoryOptions extends K8sBaseOptions {
  /** Objects present at start (any kind of the static kind table; namespaced ones default to `namespace`). */
  readonly seed?: ReadonlyArray<KubeObject>
  /** SubjectAccessReview answers: allowed when any rule matches. */
  readonly allow?: ReadonlyArray<SarRule>
  /** TokenReview answers: token -> user. */
  readonly tokens?: Readonly<Record<string, ReviewedUser>>
  /** Changes a watch can replay; watching from an older resourceVersion answers 410. Default 1000. */
  readonly watchHistory?: number
}

export interface K8sMemoryControl {
  /** Every request received, in order (retries included); status writes show as `plural/status`. */
  readonly actions: Ref.Ref<ReadonlyArray<K8sAction>>
  /** Creates or overwrites objects (status kept); watchers see the changes. Returns them as stored. */
  readonly seed: (objects: ReadonlyArray<KubeObject>) => Effect.Effect<ReadonlyArray<KubeObject>>
  /** A CR as stored (no action recorded, nothing redacted). */
  readonly getCr: (plural: CrPlural, name: string) => Effect.Effect<Option.Option<KubeObject>>
  /** Objects of one kind in every namespace (no action recorded, nothing redacted). */
  readonly objects: (apiVersion: string, kind: string) => Effect.Effect<ReadonlyArray<KubeObject>>
  /** Answer the next `count` matching requests with an error status (429 may carry `retryAfter`). */
  readonly failNext: (count: number, fault: FaultOptions) => Effect.Effect<void>
  /** Drop every pending fault and delay (the outage ends). */
  readonly clearFaults: Effect.Effect<void>
  /** Delay the next `count` matching requests. */
  readonly delayNext: (count: number, delay: Duration.DurationInput, match?: FaultMatch) => Effect.Effect<void>
  /** End every open watch, as a server closing the connections would. */
  readonly closeWatches: Effect.Effect<void>
  /** Watch requests currently open (a consumer that stopped watching leaves none behind). */
  readonly openWatches: Effect.Effect<number>
  /** Forget the change log: watches from any earlier resourceVersion now answer 410. */
  readonly compactHistory: Effect.Effect<void>
  readonly setWatchHistory: (size: number) => Effect.Effect<void>
  readonly setAllowed: (rules: ReadonlyArray<SarRule>) => Effect.Effect<void>
  readonly registerToken: (token: string, user: ReviewedUser) => Effect.Effect<void>
  /** Sets a container's current (or previous, terminated) log, as the kubelet would hold it. */
  readonly setPodLog: (namespace: string, pod: string, container: string, text: string, previous?: boolean) => Effect.Effect<void>
}

const wild = (rule: string | undefined, value: string | undefined) => rule === undefined || rule === "*" || rule === value

export const sarAllows = (rules: ReadonlyArray<SarRule>, r: AccessReview): boolean =>
  rules.some((rule) =>
    (rule.user === undefined && rule.group === undefined ||
      rule.user !== undefined && wild(rule.user, r.user) ||
      rule.group !== undefined && (rule.group === "*" || r.groups.includes(rule.group))) &&
    wild(rule.verb, r.verb) && wild(rule.apiGroup, r.group) && wild(rule.resource, r.resource) &&
    (rule.name === undefined || rule.name === "*" || rule.name === r.name)
  )

export const make = (options: K8sMemoryOptions): Effect.Effect<{ service: K8sService; control: K8sMemoryControl }> =>
  Effect.gen(function* () {
    const settings = resolveSettings(options)
    const namespace = options.namespace
    const apiGroup = options.apiGroup ?? defaultApiGroup
    const table = RestMapper.staticTable(apiGroup)
    const hub = yield* PubSub.unbounded<Signal>()
    const store = new MemoryStore(hub, yield* Ref.make<ReadonlyArray<K8sAction>>([]), options.watchHistory ?? 1000)
    const allow = yield* Ref.make(options.allow ?? [])
    const tokens = yield* Ref.make<Readonly<Record<string, ReviewedUser>>>(options.tokens ?? {})

    const run: Run = (action, body, retryConflicts = false) =>
      withPolicy(settings, { retryConflicts })(
        Effect.gen(function* () {
          yield* store.gate(action)
          const now = yield* Clock.currentTimeMillis
          const result = body(now)
          yield* store.flush()
          if (result instanceof HttpFailure) return yield* Effect.fail(result)
          return result
        })
      )
    const ops = makeOps({ store, table, namespace, apiGroup, uid: randomUUID })
    const logs = new PodLogBook()
    if (options.seed !== undefined) {
      const now = yield* Clock.currentTimeMillis
      ops.seed(options.seed, now)
    }
    const leases = Leases.make(
      makeMemoryLeaseStore(store, namespace, (verb, name, body) => run({ verb, plural: "leases", name }, body)),
      settings
    )
    const crResource = (plural: CrPlural) => `${apiGroup}/${plural}`
    const listCrRaw = (plural: CrPlural, labelSelector?: string, fieldSelector?: string) =>
      run({ verb: "list", plural, name: "" }, () => ops.list(crResource(plural), namespace, labelSelector, fieldSelector))

    const service: K8sService = {
      namespace,
      apiGroup,
      getCr: (plural, name) =>
        run({ verb: "get", plural, name }, () => ops.get(crResource(plural), crKinds[plural], namespace, name)).pipe(
          Effect.mapError(notFoundOr(crKinds[plural], name))
        ),
      listCr: (plural, opts) => listCrRaw(plural, opts?.labelSelector, opts?.fieldSelector).pipe(Effect.mapError(unavailable)),
      createCr: (plural, body) =>
        run({ verb: "create", plural, name: body.metadata.name }, (now) =>
          ops.create(crResource(plural), { ...body, apiVersion: `${apiGroup}/${crVersion}`, kind: crKinds[plural] }, now))
          .pipe(Effect.mapError(conflictOr(crKinds[plural], body.metadata.name))),
      patchCr: (plural, name, patch) =>
        run({ verb: "patch", plural, name }, () =>
          ops.patch(crResource(plural), crKinds[plural], name, patch, false), retriesConflicts(patch))
          .pipe(Effect.mapError(notFoundConflictOr(crKinds[plural], name))),
      patchCrStatus: (plural, name, status, options) =>
        run({ verb: "patch", plural: `${plural}/status`, name }, () =>
          ops.patch(crResource(plural), crKinds[plural], name, statusPatch(status, options?.resourceVersion), true), options?.resourceVersion === undefined)
          .pipe(Effect.mapError(notFoundConflictOr(crKinds[plural], name))),
      deleteCr: (plural, name) =>
        run({ verb: "delete", plural, name }, () =>
          ops.remove(crResource(plural), crKinds[plural], namespace, name)).pipe(
            Effect.mapError(notFoundOr(crKinds[plural], name))
          ),
      watchCr: (plural, opts) => {
        const fieldSelector = withName(opts?.fieldSelector, opts?.name)
        return informer({
          list: listCrRaw(plural, opts?.labelSelector, fieldSelector),
          watch: (rv) =>
            Stream.unwrapScoped(
              Effect.zipRight(
                store.gate({ verb: "watch", plural, name: "" }),
                ops.watch(crResource(plural), namespace, rv, opts?.labelSelector, fieldSelector)
              )
            )
        }, settings)
      },

      // The in-memory store keeps namespaces apart; a watch across all of them is the live layer's alone.
      watchEvents: (opts) =>
        opts?.namespace === undefined
          ? Stream.fail(new K8sUnavailable({ message: "the in-memory layer watches events of one namespace" }))
          : informer({
            list: run({ verb: "list", plural: "events", name: "" }, () =>
              ops.list("/events", opts.namespace!, undefined, opts.fieldSelector)),
            watch: (rv) =>
              Stream.unwrapScoped(
                Effect.zipRight(
                  store.gate({ verb: "watch", plural: "events", name: "" }),
                  ops.watch("/events", opts.namespace!, rv, undefined, opts.fieldSelector)
                )
              )
          }, settings),

      getResource: (ref) =>
        RestMapper.resolveIn(table, ref).pipe(
          Effect.flatMap((m) =>
            run({ verb: "get", plural: m.resource, name: ref.name }, () =>
              ops.get(`${m.group}/${m.resource}`, m.kind, m.namespaced ? ref.namespace : "", ref.name)).pipe(
                Effect.map((o) =>
                  redactSecret({ ...o, apiVersion: RestMapper.apiVersionOf(m), kind: m.kind })
                ),
                Effect.mapError(notFoundOr(m.kind, ref.name))
              )
          )
        ),
      listResources: (ref) =>
        RestMapper.resolveIn(table, ref).pipe(
          Effect.flatMap((m) =>
            run({ verb: "list", plural: m.resource, name: "" }, () =>
              ops.list(`${m.group}/${m.resource}`, m.namespaced ? ref.namespace : "", ref.labelSelector, ref.fieldSelector)).pipe(
                Effect.map((l): KubeList => ({
                  ...l,
                  items: l.items.map((o) =>
                    redactSecret({ ...o, kind: m.kind })
                  )
                })),
                Effect.mapError(unavailable)
              )
          )
        ),
      listEvents: (filter) =>
        run({ verb: "list", plural: "events", name: "" }, () =>
          ops.list("/events", filter.namespace, undefined, eventSelector(filter))).pipe(
            Effect.map((l) => l.items),
            Effect.mapError(unavailable)
          ),

      podLog: (ref) =>
        run({ verb: "get", plural: "pods/log", name: ref.name }, () => {
          const answer = logs.read(ref.namespace, ref.name, store.get("/pods", ref.namespace, ref.name), ref)
          return answer._tag === "Log" ? answer.text : new HttpFailure({ status: answer.status, message: answer.message })
        }).pipe(Effect.mapError(notFoundOr("Pod", ref.name))),

      acquireLease: leases.acquire,
      takeoverLease: leases.takeover,
      renewLease: leases.renew,
      releaseLease: leases.release,
      listLeases: leases.list,

      subjectAccessReview: (review) =>
        run({ verb: "create", plural: "subjectaccessreviews", name: "" }, () => review).pipe(
          Effect.zipRight(Ref.get(allow)),
          Effect.map((rules) => sarAllows(rules, review)),
          Effect.mapError(unavailable)
        ),
      tokenReview: (token) =>
        run({ verb: "create", plural: "tokenreviews", name: "" }, () => token).pipe(
          Effect.zipRight(Ref.get(tokens)),
          Effect.map((table) => Option.fromNullable(table[token])),
          Effect.mapError(unavailable)
        )
    }

    const control: K8sMemoryControl = {
      actions: store.actions,
      seed: (objects) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => ops.seed(objects, now))).pipe(
          Effect.tap(() => store.flush())
        ),
      getCr: (plural, name) => Effect.sync(() => Option.fromNullable(store.get(crResource(plural), namespace, name))),
      objects: (apiVersion, kind) => Effect.sync(() => ops.objectsOf(apiVersion, kind)),
      failNext: (count, fault) => Effect.sync(() => store.failNext(count, fault)),
      clearFaults: Effect.sync(() => store.clearFaults()),
      delayNext: (count, delay, match) => Effect.sync(() => store.delayNext(count, delay, match)),
      closeWatches: Effect.asVoid(PubSub.publish(hub, { _tag: "close" })),
      openWatches: Effect.sync(() => store.openWatches),
      compactHistory: Effect.sync(() => store.compact()),
      setWatchHistory: (size) => Effect.sync(() => store.setHistory(size)),
      setAllowed: (rules) => Ref.set(allow, rules),
      registerToken: (token, user) => Ref.update(tokens, (t) => ({ ...t, [token]: user })),
      setPodLog: (ns, pod, container, text, previous) => Effect.sync(() => logs.set(ns, pod, container, text, previous))
    }
    return { service, control }
  })

export class K8sMemory extends Context.Tag("@kubemend/core/K8sMemory")<K8sMemory, K8sMemoryControl>() {
  /** Provides both `K8s` (the service) and `K8sMemory` (the control handle). */
  static layer(options: K8sMemoryOptions): Layer.Layer<K8s | K8sMemory> {
    return Layer.effectContext(
      Effect.map(make(options), ({ control, service }) => Context.make(K8s, service).pipe(Context.add(K8sMemory, control)))
    )
  }
}

/** The recorded actions so far. */
export const actions: Effect.Effect<ReadonlyArray<K8sAction>, never, K8sMemory> = Effect.flatMap(
  K8sMemory,
  (c) => Ref.get(c.actions)
)
