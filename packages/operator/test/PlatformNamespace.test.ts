/**
 * One platform per namespace, and its grants stay in it, against the dev API server: a second platform CR in a
 * namespace is refused (status and a Warning event name the CR that runs it; nothing is rendered for it), and the
 * grants to call storage and the agent are RoleBindings in the platform's namespace, so the same-named
 * ServiceAccounts of a platform in another namespace are refused by a SubjectAccessReview like storage's.
 */
import { describe, expect, it } from "@effect/vitest"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { K8s } from "@kubemend/core/K8s"
import { decodePlatformSpec } from "@kubemend/core/domain/Platform/index"
import { Effect, Either } from "effect"
import { renderClusterRbac } from "../src/platform/Rbac.ts"
import { apiGroup, crName, namespace, platform, platformApiVersion, spec, world } from "./PlatformHarness.ts"

const rbacApi = "rbac.authorization.k8s.io/v1"

describe("platform namespace", () => {
  it.live("a second platform CR in the namespace is refused with a status naming the first, an event, and nothing rendered", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle()
      const objectsBefore = w.kube.list("apps/v1", "Deployment", namespace).length
      w.kube.put({ ...platform(), metadata: { name: "second", namespace } })
      yield* w.reconcileNamed("second")

      const second = w.kube.get(platformApiVersion, "Kubemend", "second", namespace)!
      const status = second.status as { phase: string; message: string; conditions: ReadonlyArray<Record<string, string>> }
      expect(status.phase).toBe("Error")
      expect(status.message).toContain(`is run by platform Kubemend "${crName}"`)
      expect(status.conditions.find((c) => c.type === "BYOValidated")).toMatchObject({ status: "False", reason: "NamespaceTaken" })
      expect(second.metadata.finalizers ?? []).toEqual([])
      const events = w.kube.list("v1", "Event", namespace).filter((e) => (e as any).involvedObject.name === "second")
      expect(events.map((e) => (e as any).reason)).toEqual(["NamespaceTaken"])
      const ownedBySecond = (kind: string, ns?: string) =>
        w.kube.list(kind === "Deployment" ? "apps/v1" : kind.endsWith("Binding") || kind === "ClusterRole" ? rbacApi : "v1", kind, ns)
          .filter((o) =>
            o.metadata.labels?.[`${apiGroup}/owner-name`] === "second" ||
            ((o.metadata.ownerReferences ?? []) as ReadonlyArray<{ name?: string }>).some((r) => r.name === "second")
          )
      for (
        const [kind, ns] of [["Deployment", namespace], ["ConfigMap", namespace], ["RoleBinding", namespace], ["ClusterRole"], ["ClusterRoleBinding"]] as const
      ) {
        expect(ownedBySecond(kind, ns), kind).toEqual([])
      }
      expect(w.kube.list("apps/v1", "Deployment", namespace)).toHaveLength(objectsBefore)

      // The first platform is undisturbed.
      yield* w.reconcile
      expect(w.status().phase).toBe("Running")
    })))

  it.live("storage and agent grants are RoleBindings in the namespace: another namespace's same-named accounts are refused", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle()
      const bindings = w.kube.list(rbacApi, "RoleBinding", namespace).map((b) => [b.metadata.name, (b as any).roleRef.name])
      expect(bindings.sort()).toEqual([
        ["agent-client-gateway", `${namespace}-agent-client`],
        ["agent-client-operator", `${namespace}-agent-client`],
        ["storage-client-agent", `${namespace}-storage-client`],
        ["storage-client-gateway", `${namespace}-storage-client`],
        ["storage-client-operator", `${namespace}-storage-client`],
        ["storage-client-signals", `${namespace}-storage-client`]
      ])
      expect(w.clusterRoleBindings().filter((b) => /-(storage|agent)-client$/.test((b as any).roleRef.name))).toEqual([])

      // A second platform in team-b, RBAC as the operator renders it.
      const other = renderClusterRbac(Either.getOrThrow(decodePlatformSpec(spec())), {
        namespace: "team-b",
        name: crName,
        apiGroup,
        toolPrefix: "svc",
        operator: { namespace: "kubemend-operator", name: "kubemend-operator" }
      })
      w.kube.seed([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-b" } },
        ...other.clusterRoles,
        ...other.clusterRoleBindings,
        ...other.roleBindings
      ])

      const k8s = yield* Effect.provide(K8s, K8sLive.layer({ namespace, apiGroup, kubeconfig: w.kube.kubeConfig() }))
      const may = (ns: string, sa: string, service: string, where: string) =>
        k8s.subjectAccessReview({
          user: `system:serviceaccount:${ns}:${sa}`,
          groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`],
          verb: "create",
          group: "",
          resource: "services",
          namespace: where,
          name: service
        })
      expect(yield* may(namespace, "kubemend-gateway", "kubemend-storage", namespace)).toBe(true)
      expect(yield* may(namespace, "kubemend-gateway", "kubemend-agent", namespace)).toBe(true)
      expect(yield* may("kubemend-operator", "kubemend-operator", "kubemend-storage", namespace)).toBe(true)
      expect(yield* may("team-b", "kubemend-gateway", "kubemend-storage", namespace)).toBe(false)
      expect(yield* may("team-b", "kubemend-gateway", "kubemend-agent", namespace)).toBe(false)
      expect(yield* may("team-b", "kubemend-gateway", "kubemend-storage", "team-b")).toBe(true)
      expect(yield* may(namespace, "kubemend-gateway", "kubemend-storage", "team-b")).toBe(false)
    })))
})
