/**
 * The platform reconciler renders high availability from `spec.highAvailability` against the dev API server:
 * two replicas of every service by default, spread over nodes, each with a PodDisruptionBudget; per-service
 * replicas; autoscalers when enabled (the Deployment then leaves replicas to them); budgets and autoscalers removed
 * when switched off.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { namespace, spec, world } from "./PlatformHarness.ts"

const names = (objects: ReadonlyArray<{ metadata: { name: string } }>) => objects.map((o) => o.metadata.name).sort()
const workloads = ["kubemend-agent", "kubemend-gateway", "kubemend-signals", "kubemend-storage"]

describe("high availability of the rendered services", () => {
  it.live("defaults: 2 replicas each, topology spread over nodes, a PodDisruptionBudget each, no autoscaler; then per-service replicas and autoscalers", () =>
    Effect.scoped(Effect.gen(function* () {
      const w = yield* world()
      yield* w.settle()
      expect(w.status().phase).toBe("Running")
      const pdbs = () => w.kube.list("policy/v1", "PodDisruptionBudget", namespace)
      const hpas = () => w.kube.list("autoscaling/v2", "HorizontalPodAutoscaler", namespace)
      for (const svc of ["gateway", "agent", "storage", "signals"]) {
        const d = w.deployment(svc) as any
        expect(d.spec.replicas, svc).toBe(2)
        expect(d.spec.template.spec.topologySpreadConstraints).toEqual([{
          maxSkew: 1,
          topologyKey: "kubernetes.io/hostname",
          whenUnsatisfiable: "ScheduleAnyway",
          labelSelector: { matchLabels: { "app.kubernetes.io/name": svc, "app.kubernetes.io/instance": "kubemend" } }
        }])
      }
      expect(names(pdbs())).toEqual(workloads)
      const gatewayPdb = pdbs().find((p) => p.metadata.name === "kubemend-gateway") as any
      expect(gatewayPdb.spec).toEqual({
        maxUnavailable: 1,
        selector: { matchLabels: { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "kubemend" } }
      })
      expect(gatewayPdb.metadata.ownerReferences).toMatchObject([{ kind: "Kubemend", name: "kubemend", controller: true }])
      expect(hpas()).toEqual([])
      // Until gateway state is shared, a client stays on one gateway pod; the agent's sessions are its own, so the
      // analysis controller's polls reach the replica it submitted to. Storage and signal ingestion balance freely.
      for (const svc of ["gateway", "agent"]) {
        expect((w.kube.get("v1", "Service", `kubemend-${svc}`, namespace) as any).spec.sessionAffinity, svc).toBe("ClientIP")
      }
      for (const svc of ["storage", "signals"]) {
        expect((w.kube.get("v1", "Service", `kubemend-${svc}`, namespace) as any).spec.sessionAffinity, svc).toBeUndefined()
      }
      expect(w.status().services.map((s: any) => s.desiredReplicas)).toEqual([2, 2, 2, 2])

      // Storage down to one pod (no budget: it would block every drain), the gateway up to 4, spread required.
      w.updateSpec(spec((s) => {
        s.highAvailability = { replicas: { dataStorage: 1, apiFrontend: 4 }, topologySpread: { whenUnsatisfiable: "DoNotSchedule" } }
      }))
      yield* w.reconcile
      expect((w.deployment("storage") as any).spec.replicas).toBe(1)
      expect((w.deployment("gateway") as any).spec.replicas).toBe(4)
      expect((w.deployment("agent") as any).spec.template.spec.topologySpreadConstraints[0].whenUnsatisfiable).toBe("DoNotSchedule")
      expect(names(pdbs())).toEqual(workloads.filter((n) => n !== "kubemend-storage"))

      // Autoscaling: an HPA per service from its replicas to maxReplicas on CPU; the Deployments leave replicas to it.
      w.updateSpec(spec((s) => {
        s.highAvailability = { replicas: { apiFrontend: 3 }, autoscaling: { enabled: true, maxReplicas: 8, targetCPUUtilizationPercentage: 60 } }
      }))
      yield* w.reconcile
      expect(names(hpas())).toEqual(workloads)
      const gatewayHpa = hpas().find((h) => h.metadata.name === "kubemend-gateway") as any
      expect(gatewayHpa.spec).toEqual({
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "kubemend-gateway" },
        minReplicas: 3,
        maxReplicas: 8,
        metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } } }]
      })
      // The autoscaler's count stands: a reconcile applies the live replicas, never resetting them.
      w.kube.put({ ...w.deployment("gateway")!, spec: { ...(w.deployment("gateway") as any).spec, replicas: 7 } })
      yield* w.reconcile
      expect((w.deployment("gateway") as any).spec.replicas).toBe(7)

      // Everything off: one pod each, no budgets, no autoscalers. (Dropping the spread constraints relies on real
      // server-side apply field ownership, which the dev API server's merge-patch apply does not model.)
      w.updateSpec(spec((s) => {
        s.highAvailability = {
          replicas: { apiFrontend: 1, agent: 1, dataStorage: 1, gateway: 1, console: 1 },
          podDisruptionBudgets: false,
          topologySpread: { enabled: false }
        }
      }))
      yield* w.reconcile
      expect(pdbs()).toEqual([])
      expect(hpas()).toEqual([])
      expect((w.deployment("agent") as any).spec.replicas).toBe(1)
    })))
})
