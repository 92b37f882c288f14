/** The contract harness over the dev Kubernetes API server, with the live layer talking to it over loopback HTTP. */
import { Context, Duration, Effect, Layer } from "effect"
import { DevKube } from "@kubemend/devkit/kube/index"
import { K8s } from "../../src/K8s.ts"
import * as K8sLive from "../../src/K8s/Live.ts"
import { apiGroup, K8sHarness, type MakeLayer, namespace } from "./Harness.ts"

const split = (plural: string) => {
  const [resource, subresource] = plural.split("/")
  return { resource: resource!, ...(subresource === undefined ? {} : { subresource }) }
}

export const liveLayer: MakeLayer = ({ watchHistory, ...settings }) =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup, ...(watchHistory === undefined ? {} : { watchHistory }) })
      kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }])
      const service = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig(), ...settings })
      let grants = 0
      const harness = K8sHarness.of({
        seed: (objects) => Effect.sync(() => void kube.seed(objects)),
        failNext: (count, f) =>
          Effect.sync(() =>
            kube.faults.failNext(count, {
              status: f.status,
              ...(f.verb === undefined ? {} : { verb: f.verb }),
              ...(f.plural === undefined ? {} : split(f.plural)),
              ...(f.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: f.retryAfterSeconds })
            })
          ),
        delayNext: (count, delay, match) =>
          Effect.sync(() =>
            void kube.faults.addLatency(Duration.toMillis(Duration.decode(delay)), {
              verb: match.verb,
              ...split(match.plural)
            }, count)
          ),
        closeWatches: Effect.sync(() => void kube.faults.closeWatches()),
        openWatches: Effect.sync(() => kube.openWatches()),
        setPodLog: (ns, pod, container, text, previous) => Effect.sync(() => kube.setPodLog(ns, pod, container, text, previous)),
        grant: (g) =>
          Effect.sync(() => {
            const name = `contract-grant-${++grants}`
            kube.seed([
              {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRole",
                metadata: { name },
                rules: [{ apiGroups: [g.apiGroup], resources: [g.resource], verbs: [g.verb], resourceNames: [...g.names] }]
              },
              {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRoleBinding",
                metadata: { name },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
                subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: g.group }]
              }
            ])
          }),
        registerToken: (token, user) => Effect.sync(() => kube.registerToken(token, user)),
        count: (verb, plural) =>
          Effect.sync(() => {
            const { resource, subresource } = split(plural)
            return kube.requests().filter((r) => r.verb === verb && r.resource === resource && r.subresource === subresource).length
          })
      })
      return Context.make(K8s, service).pipe(Context.add(K8sHarness, harness))
    })
  )
