/**
 * The Cluster service over HTTP, with client-node's KubeConfig doing auth and TLS and core's request policy
 * (deadline, 409 and 429 retries, error mapping). Bodies are sent as the exact JSON/YAML we rendered: client-node's
 * `KubernetesObjectApi` runs them through its typed serializer (which renames `x-kubernetes-*` and `default` in
 * schemas and turns timestamps into Dates on the way back) and has neither the status subresource nor watches.
 */
import type { KubeConfig } from "@kubernetes/client-node"
import { type K8sUnavailable, type KubeObject } from "@kubemend/core/K8s"
import { loadKubeConfig, makeCall } from "@kubemend/core/K8s/Client"
import { defaultApiGroup, resolveSettings } from "@kubemend/core/K8s/Config"
import { watchLines } from "@kubemend/core/K8s/RawRequests"
import { HttpFailure, notFoundConflictOr, unavailable } from "@kubemend/core/K8s/Retry"
import { toKubeList } from "@kubemend/core/K8s/Shared"
import { toRawEvent } from "@kubemend/core/K8s/Watch"
import { Effect, Layer, Option, Stream } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import * as YAML from "yaml"
import { Cluster, type ClusterOptions, type ClusterService, type CollectionRef, type ObjectRef } from "../Cluster.ts"
import { collectionPath, objectPath } from "./Kinds.ts"

type Query = Readonly<Record<string, string | undefined>>

interface RawRequest {
  readonly method: "GET" | "PATCH" | "DELETE"
  readonly path: string
  readonly query?: Query
  readonly body?: string
  readonly contentType?: string
}

/** One request; resolves with the parsed JSON body of a 2xx answer, rejects with HttpFailure otherwise. */
const send = (kc: KubeConfig, r: RawRequest) => async (signal: AbortSignal): Promise<unknown> => {
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new HttpFailure({ status: undefined, message: "kubeconfig has no current cluster" })
  const url = new URL(cluster.server.replace(/\/+$/, "") + r.path)
  for (const [k, v] of Object.entries(r.query ?? {})) if (v !== undefined) url.searchParams.set(k, v)
  const options: https.RequestOptions = {}
  await kc.applyToHTTPSOptions(options)
  const client = url.protocol === "https:" ? https : http
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = client.request(url, {
      ...options,
      method: r.method,
      headers: {
        ...options.headers,
        accept: "application/json",
        ...(r.contentType === undefined ? {} : { "content-type": r.contentType })
      },
      signal
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(r.body)
  })
  if (status < 200 || status > 299) {
    let message = `HTTP ${status}`
    try {
      const s = JSON.parse(text) as { message?: unknown }
      if (typeof s.message === "string") message = s.message
    } catch {
      if (text !== "") message = text.slice(0, 300)
    }
    throw new HttpFailure({ status, message })
  }
  return text === "" ? {} : (JSON.parse(text) as unknown)
}

export const make = (options: ClusterOptions = {}): Effect.Effect<ClusterService, K8sUnavailable> =>
  Effect.gen(function* () {
    const kc = yield* loadKubeConfig(options.kubeconfig)
    const settings = resolveSettings(options)
    const call = makeCall(settings)
    const apiGroup = options.apiGroup ?? defaultApiGroup
    const manager = options.fieldManager ?? "kubemend-operator"
    const pathOf = (ref: ObjectRef) => objectPath(apiGroup, ref.apiVersion, ref.kind, ref.name, ref.namespace)
    const run = (r: RawRequest, retryConflicts = false) => call((signal) => send(kc, r)(signal), { retryConflicts })
    const listRaw = (ref: CollectionRef) =>
      Effect.suspend(() =>
        run({
          method: "GET",
          path: collectionPath(apiGroup, ref.apiVersion, ref.kind, ref.namespace),
          query: { labelSelector: ref.labelSelector }
        })
      ).pipe(Effect.map((u) => toKubeList(u, ref.apiVersion, ref.kind)))
    const mergePatch = (ref: ObjectRef, suffix: string, body: Record<string, unknown>) =>
      Effect.suspend(() =>
        run({
          method: "PATCH",
          path: pathOf(ref) + suffix,
          body: JSON.stringify(body),
          contentType: "application/merge-patch+json"
        }, true)
      ).pipe(Effect.map((u) => u as KubeObject), Effect.mapError(notFoundConflictOr(ref.kind, ref.name)))

    const service: ClusterService = {
      apply: (object) =>
        Effect.suspend(() =>
          run({
            method: "PATCH",
            path: pathOf({
              apiVersion: object.apiVersion ?? "v1",
              kind: object.kind ?? "",
              name: object.metadata.name,
              ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace })
            }),
            query: { fieldManager: manager, force: "true" },
            body: YAML.stringify(object),
            contentType: "application/apply-patch+yaml"
          })
        ).pipe(
          Effect.map((u) => u as KubeObject),
          Effect.mapError(unavailable),
          Effect.withSpan("Cluster.apply", { attributes: { kind: object.kind, name: object.metadata.name } })
        ),
      get: (ref) =>
        Effect.suspend(() => run({ method: "GET", path: pathOf(ref) })).pipe(
          Effect.map((u) => Option.some(u as KubeObject)),
          Effect.catchIf((e) => e.status === 404, () => Effect.succeed(Option.none())),
          Effect.mapError(unavailable),
          Effect.withSpan("Cluster.get", { attributes: { kind: ref.kind, name: ref.name } })
        ),
      list: (ref) => listRaw(ref).pipe(Effect.mapError(unavailable), Effect.withSpan("Cluster.list", { attributes: { kind: ref.kind } })),
      remove: (ref) =>
        // Background: a Job's pods go with it (the API's default for Jobs orphans them).
        Effect.suspend(() => run({ method: "DELETE", path: pathOf(ref), query: { propagationPolicy: "Background" } })).pipe(
          Effect.as(true),
          Effect.catchIf((e) => e.status === 404, () => Effect.succeed(false)),
          Effect.mapError(unavailable),
          Effect.withSpan("Cluster.remove", { attributes: { kind: ref.kind, name: ref.name } })
        ),
      patch: (ref, patch) => mergePatch(ref, "", patch).pipe(Effect.withSpan("Cluster.patch")),
      patchStatus: (ref, status) => mergePatch(ref, "/status", { status }).pipe(Effect.withSpan("Cluster.patchStatus")),
      listRaw,
      watch: (ref, query) =>
        Stream.suspend(() =>
          watchLines(kc, collectionPath(apiGroup, ref.apiVersion, ref.kind, ref.namespace), {
            resourceVersion: query.resourceVersion,
            allowWatchBookmarks: "true",
            timeoutSeconds: String(query.timeoutSeconds),
            labelSelector: ref.labelSelector
          }, settings.requestTimeout)
        ).pipe(Stream.mapEffect(toRawEvent))
    }
    return service
  })

export const layer = (options: ClusterOptions = {}): Layer.Layer<Cluster, K8sUnavailable> => Layer.effect(Cluster, make(options))
