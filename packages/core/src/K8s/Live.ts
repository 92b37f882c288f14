/**
 * The K8s service on `@kubernetes/client-node` 1.4: typed clients for CRs (CustomObjectsApi), Leases, reviews; raw
 * JSON GETs (auth and TLS from the same KubeConfig) for discovery, generic reads and watch streams.
 *
 *   import * as K8sLive from "@kubemend/core/K8s/Live"
 *   K8sLive.layer({ namespace: "kubemend-system", kubeconfig: "in-cluster" })
 */
import { AuthenticationV1Api, AuthorizationV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node"
import { Config, type ConfigError, Duration, Effect, Layer, Option, Stream } from "effect"
import { type CrPlural, K8s, type K8sService, type K8sUnavailable, type KubeList, type KubeObject } from "../K8s.ts"
import { callOptions, type KubeconfigSource, loadKubeConfig, makeCall } from "./Client.ts"
import { crKinds, crVersion, defaultApiGroup, type K8sBaseOptions, resolveSettings } from "./Config.ts"
import { discover } from "./Discovery.ts"
import { getJson, getText, watchLines } from "./RawRequests.ts"
import * as Leases from "./Leases.ts"
import { makeLeaseStore } from "./LiveLeases.ts"
import { redactItems, redactSecret } from "./Redact.ts"
import * as RestMapper from "./RestMapper.ts"
import { conflictOr, notFoundConflictOr, notFoundOr, unavailable } from "./Retry.ts"
import { eventSelector, resourcePath, retriesConflicts, statusPatch, toKubeList, withName } from "./Shared.ts"
import { informer, toRawEvent } from "./Watch.ts"

export interface K8sLiveOptions extends K8sBaseOptions {
  /** Kubeconfig YAML text, `"in-cluster"`, or absent for `KUBECONFIG` / `~/.kube/config`. */
  readonly kubeconfig?: KubeconfigSource
}

/** Logs read without a `limitBytes` stop here (a container can log gigabytes). */
const podLogCap = 1024 * 1024

// The server's JSON; the typed views decode spec/status with the domain schemas.
const asObject = (u: unknown): KubeObject => u as KubeObject

export const make = (options: K8sLiveOptions): Effect.Effect<K8sService, K8sUnavailable> =>
  Effect.gen(function* () {
    const kc: KubeConfig = yield* loadKubeConfig(options.kubeconfig)
    const settings = resolveSettings(options)
    const namespace = options.namespace
    const apiGroup = options.apiGroup ?? defaultApiGroup
    const call = makeCall(settings)
    const custom = kc.makeApiClient(CustomObjectsApi)
    const authz = kc.makeApiClient(AuthorizationV1Api)
    const authn = kc.makeApiClient(AuthenticationV1Api)
    const get = (path: string, query: Readonly<Record<string, string | undefined>> = {}) => call(getJson(kc, path, query))
    const mapper = yield* RestMapper.make({
      discover: discover((path) => get(path)),
      fallback: RestMapper.staticTable(apiGroup),
      ttl: settings.discoveryTTL
    })
    const leases = Leases.make(makeLeaseStore(kc, namespace, call), settings)
    const cr = (plural: CrPlural) => ({ group: apiGroup, version: crVersion, namespace, plural })
    const crApiVersion = `${apiGroup}/${crVersion}`

    const listCrRaw = (plural: CrPlural, labelSelector?: string, fieldSelector?: string) =>
      call((s) =>
        custom.listNamespacedCustomObject({
          ...cr(plural),
          ...(labelSelector === undefined ? {} : { labelSelector }),
          ...(fieldSelector === undefined ? {} : { fieldSelector })
        }, callOptions(s))
      ).pipe(Effect.map((u) => toKubeList(u, crApiVersion, crKinds[plural])))

    const listPath = (m: RestMapper.ResourceMapping, ns: string, query: Readonly<Record<string, string | undefined>>) =>
      get(resourcePath(m, ns), query).pipe(
        Effect.map((u): KubeList => {
          const list = toKubeList(u, RestMapper.apiVersionOf(m), m.kind)
          return { ...list, items: m.group === "" ? redactItems(m.kind, list.items) : list.items }
        })
      )

    const service: K8sService = {
      namespace,
      apiGroup,
      getCr: (plural, name) =>
        call((s) => custom.getNamespacedCustomObject({ ...cr(plural), name }, callOptions(s))).pipe(
          Effect.map(asObject),
          Effect.mapError(notFoundOr(crKinds[plural], name)),
          Effect.withSpan("K8s.getCr", { attributes: { plural, name } })
        ),
      listCr: (plural, opts) =>
        listCrRaw(plural, opts?.labelSelector, opts?.fieldSelector).pipe(
          Effect.mapError(unavailable),
          Effect.withSpan("K8s.listCr", { attributes: { plural } })
        ),
      createCr: (plural, body) =>
        call((s) =>
          custom.createNamespacedCustomObject({
            ...cr(plural),
            body: { ...body, apiVersion: crApiVersion, kind: crKinds[plural], metadata: { ...body.metadata, namespace } }
          }, callOptions(s))
        ).pipe(
          Effect.map(asObject),
          Effect.mapError(conflictOr(crKinds[plural], body.metadata.name)),
          Effect.withSpan("K8s.createCr", { attributes: { plural, name: body.metadata.name } })
        ),
      patchCr: (plural, name, patch) =>
        call((s) => custom.patchNamespacedCustomObject({ ...cr(plural), name, body: patch }, callOptions(s, true)), {
          retryConflicts: retriesConflicts(patch)
        }).pipe(
          Effect.map(asObject),
          Effect.mapError(notFoundConflictOr(crKinds[plural], name)),
          Effect.withSpan("K8s.patchCr", { attributes: { plural, name } })
        ),
      patchCrStatus: (plural, name, status, options) =>
        call(
          (s) => custom.patchNamespacedCustomObjectStatus({ ...cr(plural), name, body: statusPatch(status, options?.resourceVersion) }, callOptions(s, true)),
          {
            retryConflicts: options?.resourceVersion === undefined
          }
        ).pipe(
          Effect.map(asObject),
          Effect.mapError(notFoundConflictOr(crKinds[plural], name)),
          Effect.withSpan("K8s.patchCrStatus", { attributes: { plural, name } })
        ),
      deleteCr: (plural, name) =>
        call((s) => custom.deleteNamespacedCustomObject({ ...cr(plural), name }, callOptions(s))).pipe(
          Effect.asVoid,
          Effect.mapError(notFoundOr(crKinds[plural], name)),
          Effect.withSpan("K8s.deleteCr", { attributes: { plural, name } })
        ),
      watchCr: (plural, opts) => {
        const fieldSelector = withName(opts?.fieldSelector, opts?.name)
        const path = `/apis/${apiGroup}/${crVersion}/namespaces/${namespace}/${plural}`
        return informer({
          list: listCrRaw(plural, opts?.labelSelector, fieldSelector),
          watch: (resourceVersion) =>
            watchLines(kc, path, {
              resourceVersion,
              allowWatchBookmarks: "true",
              timeoutSeconds: String(Math.max(1, Math.round(Duration.toSeconds(settings.watchTimeout)))),
              labelSelector: opts?.labelSelector,
              fieldSelector
            }, settings.requestTimeout).pipe(Stream.mapEffect(toRawEvent))
        }, settings)
      },

      watchEvents: (opts) => {
        const path = opts?.namespace === undefined ? "/api/v1/events" : resourcePath(RestMapper.coreEvent, opts.namespace)
        return informer({
          list: get(path, { fieldSelector: opts?.fieldSelector }).pipe(Effect.map((u) => toKubeList(u, "v1", "Event"))),
          watch: (resourceVersion) =>
            watchLines(kc, path, {
              resourceVersion,
              allowWatchBookmarks: "true",
              timeoutSeconds: String(Math.max(1, Math.round(Duration.toSeconds(settings.watchTimeout)))),
              fieldSelector: opts?.fieldSelector
            }, settings.requestTimeout).pipe(Stream.mapEffect(toRawEvent))
        }, settings)
      },

      getResource: (ref) =>
        mapper.resolve(ref).pipe(
          Effect.flatMap((m) =>
            get(resourcePath(m, ref.namespace, ref.name)).pipe(
              Effect.map((u) => redactSecret({ apiVersion: RestMapper.apiVersionOf(m), kind: m.kind, ...asObject(u) })),
              Effect.mapError(notFoundOr(m.kind, ref.name))
            )
          ),
          Effect.withSpan("K8s.getResource", { attributes: { kind: ref.kind, name: ref.name } })
        ),
      listResources: (ref) =>
        mapper.resolve(ref).pipe(
          Effect.flatMap((m) =>
            listPath(m, ref.namespace, { labelSelector: ref.labelSelector, fieldSelector: ref.fieldSelector }).pipe(
              Effect.mapError(unavailable)
            )
          ),
          Effect.withSpan("K8s.listResources", { attributes: { kind: ref.kind } })
        ),
      listEvents: (filter) =>
        listPath(RestMapper.coreEvent, filter.namespace, { fieldSelector: eventSelector(filter) }).pipe(
          Effect.map((l) => l.items),
          Effect.mapError(unavailable),
          Effect.withSpan("K8s.listEvents")
        ),

      podLog: (ref) =>
        call(getText(kc, `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/pods/${encodeURIComponent(ref.name)}/log`, {
          container: ref.container,
          previous: ref.previous === true ? "true" : undefined,
          tailLines: ref.tailLines === undefined ? undefined : String(ref.tailLines),
          sinceSeconds: ref.sinceSeconds === undefined ? undefined : String(ref.sinceSeconds),
          limitBytes: ref.limitBytes === undefined ? undefined : String(ref.limitBytes)
        }, ref.limitBytes ?? podLogCap)).pipe(
          Effect.mapError(notFoundOr("Pod", ref.name)),
          Effect.withSpan("K8s.podLog", { attributes: { name: ref.name } })
        ),

      acquireLease: leases.acquire,
      takeoverLease: leases.takeover,
      renewLease: leases.renew,
      releaseLease: leases.release,
      listLeases: leases.list,

      subjectAccessReview: (review) =>
        call((s) =>
          authz.createSubjectAccessReview({
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SubjectAccessReview",
              spec: {
                user: review.user,
                groups: [...review.groups],
                resourceAttributes: {
                  verb: review.verb,
                  group: review.group,
                  resource: review.resource,
                  ...(review.namespace === undefined ? {} : { namespace: review.namespace }),
                  ...(review.name === undefined ? {} : { name: review.name })
                }
              }
            }
          }, callOptions(s))
        ).pipe(
          Effect.map((r) => r.status?.allowed === true),
          Effect.mapError(unavailable),
          Effect.withSpan("K8s.subjectAccessReview", { attributes: { user: review.user, resource: review.resource } })
        ),
      tokenReview: (token) =>
        call((s) =>
          authn.createTokenReview({
            body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } }
          }, callOptions(s))
        ).pipe(
          Effect.map((r) => {
            const user = r.status?.user
            if (r.status?.authenticated !== true || user?.username === undefined) return Option.none()
            return Option.some({
              username: user.username,
              groups: user.groups ?? [],
              ...(user.uid === undefined ? {} : { uid: user.uid })
            })
          }),
          Effect.mapError(unavailable),
          Effect.withSpan("K8s.tokenReview")
        )
    }
    return service
  })

export const layer = (options: K8sLiveOptions): Layer.Layer<K8s, K8sUnavailable> => Layer.effect(K8s, make(options))

export const layerConfig = (
  config: Config.Config.Wrap<K8sLiveOptions>
): Layer.Layer<K8s, K8sUnavailable | ConfigError.ConfigError> => Layer.effect(K8s, Effect.flatMap(Config.unwrap(config), make))
