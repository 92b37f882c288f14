import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect } from "effect"
import { DevKube } from "@kubemend/devkit/kube/index"
import { K8s } from "../src/K8s.ts"
import * as K8sLive from "../src/K8s/Live.ts"
import { k8sContract, rr } from "./K8s/Contract.ts"
import { apiGroup, namespace } from "./K8s/Harness.ts"
import { liveLayer } from "./K8s/LiveHarness.ts"

k8sContract("live against the dev API server", liveLayer)

describe("K8s live layer", () => {
  it.live("maps kinds the static table does not know through discovery (a CRD installed at run time)", () =>
    Effect.scoped(Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      const k8s = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig() })
      kube.seed([
        {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: "widgets.example.com" },
          spec: {
            group: "example.com",
            scope: "Namespaced",
            names: { plural: "widgets", kind: "Widget" },
            versions: [{ name: "v1", served: true, storage: true }]
          }
        },
        { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w1", namespace: "apps" }, spec: { size: 3 } }
      ])
      const widget = yield* k8s.getResource({ kind: "Widget", namespace: "apps", name: "w1" })
      expect(widget).toMatchObject({ apiVersion: "example.com/v1", kind: "Widget", spec: { size: 3 } })
      const byPlural = yield* k8s.listResources({ kind: "widgets", namespace: "apps" })
      expect(byPlural.items.map((o) => o.metadata.name)).toEqual(["w1"])
    })))

  it.live("talks HTTPS with the kubeconfig's CA", () =>
    Effect.scoped(Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup, tls: true })
      expect(kube.url.startsWith("https://")).toBe(true)
      const k8s = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig() })
      yield* k8s.createCr("remediationrequests", rr("a"))
      expect((yield* k8s.getCr("remediationrequests", "a")).metadata.name).toBe("a")
      expect((yield* k8s.listResources({ kind: "ConfigMap", namespace: "default" })).items).toEqual([])
    })))

  it.live("an unusable kubeconfig fails the layer with K8sUnavailable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(K8sLive.make({ namespace, kubeconfig: "clusters: []\ncontexts: []\n" }))
      expect(error._tag).toBe("K8sUnavailable")
      const bad = "clusters: [{name: c, cluster: {server: 'https://undefined:undefined'}}]\n" +
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
      expect((yield* Effect.flip(K8sLive.make({ namespace, kubeconfig: bad })))._tag).toBe("K8sUnavailable")
    }))

  it.live("a server that is not there fails fast as K8sUnavailable", () =>
    Effect.gen(function* () {
      const kubeconfig = [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1', insecure-skip-tls-verify: true}}]",
        "users: [{name: u, user: {token: t}}]",
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x"
      ].join("\n")
      const k8s = yield* K8sLive.make({ namespace, kubeconfig })
      const error = yield* Effect.flip(k8s.getCr("remediationrequests", "a"))
      expect(error._tag).toBe("K8sUnavailable")
    }))
})

describe("K8s live layerConfig", () => {
  it.live("reads its options from Config", () =>
    Effect.scoped(Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      const layer = K8sLive.layerConfig({
        namespace: Config.string("namespace"),
        apiGroup: Config.string("apiGroup"),
        kubeconfig: Config.string("kubeconfig"),
        requestTimeout: Config.duration("requestTimeout")
      })
      const provider = ConfigProvider.fromMap(
        new Map([
          ["namespace", "team-a"],
          ["apiGroup", apiGroup],
          ["kubeconfig", kube.kubeConfig()],
          ["requestTimeout", "2 seconds"]
        ])
      )
      const created = yield* Effect.flatMap(K8s, (k8s) => k8s.createCr("remediationrequests", rr("a"))).pipe(
        Effect.provide(layer),
        Effect.withConfigProvider(provider)
      )
      expect(created.metadata.namespace).toBe("team-a")
    })))
})
