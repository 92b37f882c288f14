/**
 * Discovery label matching over HTTP on PostgreSQL, the same rules as core `Storage.layerMemory`: labels compared
 * case-insensitively, `*` and lists, a component by `group/version/Kind` or kind alone, custom labels as conditions.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { client, Harness, harnessLayer, json } from "./support/Harness.ts"

const workflow = (name: string, labels: string, custom = "") => `
apiVersion: kubemend.io/v1alpha1
kind: RemediationWorkflow
metadata: { name: ${name} }
spec:
  version: "1.0.0"
  actionType: RestartDeployment
  description: { what: Restarts the deployment, whenToUse: Stuck pods }
  labels: ${labels}
${custom}  execution: { engine: job, bundle: "ghcr.io/example/restart@sha256:abc" }
`

const call = (path: string, init?: RequestInit) => Effect.flatMap(Harness, (h) => Effect.promise(() => h.fetch(path, init)))

layer(harnessLayer(), { excludeTestServices: true, timeout: "120 seconds" })("discovery label matching", (it) => {
  it.effect("matches labels case-insensitively, with * and lists, components by kind, custom labels as conditions", () =>
    Effect.gen(function* () {
      const api = yield* client
      yield* call("/api/v1/action-types", json({ name: "RestartDeployment", description: { what: "Restart", whenToUse: "Stuck" }, registeredBy: "w" }))
      const register = (content: string) =>
        Effect.flatMap(call("/api/v1/workflows", json({ content })), (r) => r.status === 201 ? Effect.void : Effect.dieMessage(`register answered ${r.status}`))
      yield* register(workflow("prod-lower", "{ severity: [critical, high], component: [deployment], environment: [production], priority: p1 }"))
      yield* register(workflow("gvk-any-env", "{ severity: ['*'], component: [apps/v1/Deployment], environment: ['*'], priority: '*' }"))
      yield* register(workflow("staging-only", "{ severity: [high], component: ['*'], environment: [staging, qa], priority: P1 }"))
      yield* register(
        workflow(
          "cost-constrained",
          "{ severity: ['*'], component: ['*'], environment: ['*'], priority: '*' }",
          "  customLabels: { constraint: [cost-constrained] }\n"
        )
      )

      const names = (urlParams: Record<string, string>) =>
        Effect.map(api.workflows.listWorkflowsByActionType({ path: { action_type: "RestartDeployment" }, urlParams: urlParams as never }), (r) =>
          r.workflows.map((w) => w.workflowName).sort())
      const signal = { severity: "HIGH", component: "apps/v1/Deployment", environment: "Production", priority: "P1" }

      expect(yield* names({ ...signal, custom_labels: "{}" })).toEqual(["gvk-any-env", "prod-lower"])
      expect(yield* names({ ...signal, environment: "QA", custom_labels: "{}" })).toEqual(["gvk-any-env", "staging-only"])
      expect(yield* names({ ...signal, custom_labels: JSON.stringify({ constraint: ["Cost-Constrained"], team: ["sre"] }) }))
        .toEqual(["cost-constrained", "gvk-any-env", "prod-lower"])
      expect(yield* names({ ...signal, component: "v1/Pod", custom_labels: JSON.stringify({ constraint: ["other"] }) })).toEqual([])
      // An operator's listing without custom labels sees every workflow.
      expect((yield* names({})).length).toBe(4)
      const actions = yield* api.workflows.listAvailableActions({ urlParams: { ...signal, environment: "production" } as never })
      expect(
        actions.actionTypes.find((a) =>
          a.actionType === "RestartDeployment"
        )?.workflowCount
      ).toBe(3)
    }))
})
