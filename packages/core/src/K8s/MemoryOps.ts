/**
 * Request bodies of the in-memory layer: what the API server does for get/list/create/patch/delete/watch, over the
 * MemoryStore. Each returns its answer or an HttpFailure; `Run` wraps one in the gate and the request policy.
 */
import { Effect, Option, PubSub, type Scope, Stream } from "effect"
import type { KubeList, KubeObject } from "../K8s.ts"
import { type Change, type K8sAction, type MemoryStore, patchObject, type Signal } from "./MemoryStore.ts"
import { apiVersionOf, type ResourceMapping } from "./RestMapper.ts"
import { HttpFailure } from "./Retry.ts"
import { labelFilter, matchesFields } from "./Selectors.ts"
import type { RawWatchEvent } from "./Watch.ts"

export type Run = <A>(
  action: K8sAction,
  body: (now: number) => A | HttpFailure,
  retryConflicts?: boolean
) => Effect.Effect<A, HttpFailure>

/** Kubernetes timestamps have second precision. */
const timestamp = (now: number) => new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z")

const notFound = (kind: string, name: string) => new HttpFailure({ status: 404, message: `${kind} "${name}" not found` })

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

const withoutVersion = (o: KubeObject): KubeObject => {
  const { resourceVersion: _, ...metadata } = o.metadata
  return { ...o, metadata: metadata as KubeObject["metadata"] }
}

const isClose = (s: Signal): s is { readonly _tag: "close" } => "_tag" in s

export const makeOps = (env: {
  readonly store: MemoryStore
  readonly table: ReadonlyArray<ResourceMapping>
  readonly namespace: string
  readonly apiGroup: string
  readonly uid: () => string
}) => {
  const { store } = env

  const mappingOf = (apiVersion: string, kind: string): { resource: string; namespaced: boolean } => {
    const m = env.table.find((x) => x.kind === kind && apiVersionOf(x) === apiVersion) ??
      env.table.find((x) => x.kind === kind && apiVersion.startsWith(x.group === "" ? "v" : `${x.group}/`))
    if (m !== undefined) return { resource: `${m.group}/${m.resource}`, namespaced: m.namespaced }
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.lastIndexOf("/")) : ""
    return { resource: `${group}/${kind.toLowerCase()}s`, namespaced: true }
  }

  const get = (resource: string, kind: string, namespace: string, name: string) => store.get(resource, namespace, name) ?? notFound(kind, name)

  const list = (resource: string, namespace: string, label?: string, field?: string): KubeList | HttpFailure => {
    const byLabels = labelFilter(label)
    if (byLabels instanceof HttpFailure) return byLabels
    return {
      items: store.list(resource, namespace).filter((o) => byLabels(o) && matchesFields(o, field)),
      resourceVersion: String(store.rv)
    }
  }

  /** Status is the status subresource's business: a create or an object patch never sets it. */
  const create = (resource: string, body: KubeObject, now: number): KubeObject | HttpFailure => {
    const name = body.metadata.name
    if (typeof name !== "string" || name === "") return new HttpFailure({ status: 422, message: "metadata.name is required" })
    if (store.get(resource, env.namespace, name) !== undefined) {
      return new HttpFailure({ status: 409, message: `${body.kind} "${name}" already exists` })
    }
    const { status: _, ...rest } = body
    const { resourceVersion: __, ...metadata } = body.metadata
    return store.write(resource, {
      ...rest,
      metadata: {
        ...metadata,
        name,
        namespace: env.namespace,
        uid: env.uid(),
        generation: 1,
        creationTimestamp: timestamp(now)
      }
    }, "ADDED").object
  }

  const patch = (
    resource: string,
    kind: string,
    name: string,
    body: Record<string, unknown>,
    statusOnly: boolean
  ): KubeObject | HttpFailure => {
    const current = store.get(resource, env.namespace, name)
    if (current === undefined) return notFound(kind, name)
    const { status, ...objectPatch } = body
    const patched = patchObject(current, statusOnly ? { status, metadata: objectPatch.metadata } : objectPatch, kind)
    if (patched instanceof HttpFailure) return patched
    const { status: _, ...patchedBase } = patched
    const { status: __, ...currentBase } = current
    const next: KubeObject = statusOnly
      ? { ...currentBase, ...(patched.status === undefined ? {} : { status: patched.status }) }
      : { ...patchedBase, ...(current.status === undefined ? {} : { status: current.status }) }
    if (same(withoutVersion(next), withoutVersion(current))) return current
    const generation = typeof current.metadata.generation === "number" ? current.metadata.generation : 1
    const bumped = !statusOnly && !same(next.spec, current.spec)
    return store.write(resource, {
      ...next,
      metadata: { ...next.metadata, generation: bumped ? generation + 1 : generation }
    }, "MODIFIED").object
  }

  const remove = (resource: string, kind: string, namespace: string, name: string): void | HttpFailure => {
    if (store.remove(resource, namespace, name) === undefined) return notFound(kind, name)
  }

  /** What a watcher with these selectors sees of a change; objects leaving the selection are DELETED for it. */
  const view = (c: Change, matches: (o: KubeObject) => boolean): RawWatchEvent | undefined => {
    const now = matches(c.object)
    if (c.type !== "MODIFIED") return now ? { type: c.type, object: c.object } : undefined
    const before = c.previous !== undefined && matches(c.previous)
    if (now) return { type: before ? "MODIFIED" : "ADDED", object: c.object }
    return before ? { type: "DELETED", object: c.object } : undefined
  }

  /** One watch from `rv`: replay of the log, then live changes, until `closeWatches`. */
  const watch = (
    resource: string,
    namespace: string,
    rv: string,
    label?: string,
    field?: string
  ): Effect.Effect<Stream.Stream<RawWatchEvent, HttpFailure>, HttpFailure, Scope.Scope> =>
    Effect.gen(function* () {
      const live = yield* PubSub.subscribe(store.hub)
      store.openWatches++
      yield* Effect.addFinalizer(() => Effect.sync(() => void store.openWatches--))
      const from = Number(rv === "" ? "0" : rv)
      if (!Number.isFinite(from) || from < store.compactedRv) {
        return yield* Effect.fail(new HttpFailure({ status: 410, message: `too old resource version: ${rv}` }))
      }
      const replayedUpTo = store.rv
      const relevant = (c: Change) => c.resource === resource && c.namespace === namespace
      const byLabels = labelFilter(label)
      if (byLabels instanceof HttpFailure) return yield* Effect.fail(byLabels)
      const matches = (o: KubeObject) => byLabels(o) && matchesFields(o, field)
      const toEvent = (c: Change) => (relevant(c) ? view(c, matches) : undefined)
      const backlog = store.log.filter((c) => c.rv > from).map(toEvent).filter((e) => e !== undefined)
      const changes = Stream.fromQueue(live).pipe(
        Stream.takeWhile((s) => !isClose(s)),
        Stream.filterMap((s) => Option.fromNullable(isClose(s) || s.rv <= replayedUpTo ? undefined : toEvent(s)))
      )
      return Stream.concat(Stream.fromIterable(backlog), changes)
    })

  /** Create-or-replace, as a test fixture would; status kept, metadata filled in. */
  const seed = (objects: ReadonlyArray<KubeObject>, now: number): ReadonlyArray<KubeObject> =>
    objects.map((o) => {
      if (o.kind === undefined || o.apiVersion === undefined) {
        throw new Error(`K8sMemory.seed: ${o.metadata.name} needs apiVersion and kind`)
      }
      const { resource, namespaced } = mappingOf(o.apiVersion, o.kind)
      const namespace = namespaced ? o.metadata.namespace ?? env.namespace : undefined
      const current = store.get(resource, namespace ?? "", o.metadata.name)
      const { resourceVersion: _, ...metadata } = o.metadata
      return store.write(resource, {
        ...o,
        metadata: {
          uid: current?.metadata.uid ?? env.uid(),
          creationTimestamp: current?.metadata.creationTimestamp ?? timestamp(now),
          generation: 1,
          ...metadata,
          ...(namespace === undefined ? {} : { namespace })
        }
      }, current === undefined ? "ADDED" : "MODIFIED").object
    })

  const objectsOf = (apiVersion: string, kind: string): ReadonlyArray<KubeObject> => store.all(mappingOf(apiVersion, kind).resource)

  return { get, list, create, patch, remove, watch, seed, objectsOf }
}
