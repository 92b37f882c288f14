/** Starting the dev API server: wires the parts, listens on loopback, and builds the DevKube handle. */
import { PodLogBook } from "@kubemend/core/K8s/PodLogs"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { ResourceApi } from "./Api.ts"
import type { DevKube } from "./DevKube.ts"
import { Faults } from "./Faults.ts"
import { kubeConfigYaml } from "./KubeConfig.ts"
import { Objects } from "./Objects.ts"
import { Authorizer } from "./Rbac.ts"
import { ResourceRegistry, storageKey } from "./Resources.ts"
import { Tokens } from "./Reviews.ts"
import { type RecordedRequest, requestHandler } from "./Router.ts"
import { parseYaml, resolveKind, seedObjects } from "./Seed.ts"
import { ApiError } from "./Status.ts"
import { Store } from "./Store.ts"
import { generateTls } from "./Tls.ts"
import { WatchHub } from "./Watch.ts"

export interface DevKubeOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Default 127.0.0.1. */
  readonly host?: string
  /** API group of the platform CRs. Default `kubemend.io`. */
  readonly apiGroup?: string
  /** Version of the platform CRs. Default `v1alpha1`. */
  readonly crVersion?: string
  /** How many changes watches can replay; older resourceVersions answer 410. Default 1000. */
  readonly watchHistory?: number
  /** Interval of BOOKMARK events on watches that allow them. Default 1000 ms. */
  readonly bookmarkIntervalMs?: number
  /** Serve HTTPS with a freshly generated CA (see `caPem`). Default false. */
  readonly tls?: boolean
}

const requestLogLimit = 10_000

export const start = async (options: DevKubeOptions = {}): Promise<DevKube> => {
  const apiGroup = options.apiGroup ?? "kubemend.io"
  const registry = new ResourceRegistry(apiGroup, options.crVersion ?? "v1alpha1")
  const store = new Store(options.watchHistory ?? 1000)
  const objects = new Objects(store, registry)
  const watches = new WatchHub(store, objects, options.bookmarkIntervalMs ?? 1000)
  const faults = new Faults(watches)
  const tokens = new Tokens(store)
  const api = new ResourceApi(objects, new Authorizer(store), tokens, watches)
  const log: Array<RecordedRequest> = []
  const logs = new PodLogBook()
  for (const name of ["default", "kube-system", "kube-public"]) {
    seedObjects(objects, [{ apiVersion: "v1", kind: "Namespace", metadata: { name } }])
  }

  const host = options.host ?? "127.0.0.1"
  let address = ""
  const handler = requestHandler({
    registry,
    api,
    faults,
    tokens,
    record: (r) => {
      log.push(r)
      if (log.length > requestLogLimit) log.splice(0, log.length - requestLogLimit)
    },
    serverAddress: () => address,
    schemaOf: (rt) => objects.schemaFor(rt),
    podLog: (namespace, name, query) => {
      const rt = registry.find("", "v1", "pods")!
      return logs.read(namespace, name, objects.find(rt, namespace, name), query)
    }
  })
  const tls = options.tls ? await generateTls([host, "localhost"]) : undefined
  const server = tls ? https.createServer({ key: tls.keyPem, cert: tls.certPem }, handler) : http.createServer(handler)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, host, () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  address = `${host}:${port}`
  const url = `${tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`

  const removeObject = (apiVersion: string, kind: string, name: string, namespace?: string) => {
    try {
      return objects.delete(resolveKind(registry, apiVersion, kind), namespace, name).deleted
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return false
      throw e
    }
  }

  return {
    url,
    port,
    apiGroup,
    ...(tls ? { caPem: tls.caPem } : {}),
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        watches.closeAll()
        server.close(() => resolve())
        server.closeAllConnections()
      }),
    get: (apiVersion, kind, name, namespace) => {
      const rt = resolveKind(registry, apiVersion, kind)
      const found = objects.find(rt, namespace, name)
      return found === undefined ? undefined : objects.present(rt, found)
    },
    list: (apiVersion, kind, namespace) => {
      const rt = resolveKind(registry, apiVersion, kind)
      return store.list(storageKey(rt), rt.namespaced ? namespace : undefined).map((o) => objects.present(rt, o))
    },
    put: (object) => seedObjects(objects, [object])[0]!,
    delete: removeObject,
    seed: (items) => seedObjects(objects, items),
    seedYaml: (text) => seedObjects(objects, parseYaml(text)),
    registerServiceAccountToken: (namespace, name, tokenOptions) => tokens.registerServiceAccount(namespace, name, tokenOptions),
    registerToken: (token, user) => tokens.register(token, user),
    revokeToken: (token) => tokens.revoke(token),
    requests: () => [...log],
    clearRequests: () => {
      log.length = 0
    },
    kubeConfig: (kubeOptions) => kubeConfigYaml(url, tls?.caPem, kubeOptions),
    resourceVersion: () => String(store.resourceVersion),
    compactHistory: () => store.compact(),
    setWatchHistory: (size) => store.setHistoryLimit(size),
    sendBookmarks: () => watches.bookmarkAll(),
    openWatches: () => watches.count,
    setPodLog: (namespace, pod, container, text, previous) => logs.set(namespace, pod, container, text, previous)
  }
}

/** The dev Kubernetes API server (real REST protocol on loopback, for tests and the local platform). */
export const DevKubeApiServer = { start }
