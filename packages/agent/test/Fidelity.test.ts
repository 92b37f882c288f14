/**
 * What the agent must see and decide like the original: Events without a group, cluster-scoped kinds, kinds served
 * by two non-core groups, parameters (the model's choice plus TARGET_RESOURCE_*), and discovery filtered by the
 * incident's remediation target rather than the last owner lookup. Against the dev API server over HTTP.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { KubeObject } from "@kubemend/core/K8s"
import { ScriptedLlm, type Script } from "@kubemend/devkit/ScriptedLlm"
import { AgentOnDevKube, appNs, awaitEnd, client, cluster, incident, wf } from "./Harness.ts"

const restartDeploy = "33333333-3333-4333-8333-333333333333"
const restartSts = "44444444-4444-4444-8444-444444444444"
const scaleId = "55555555-5555-4555-8555-555555555555"
const labelled = (w: ReturnType<typeof wf>, component: string) => ({ ...w, labels: { ...w.labels, component: [component] } })
const catalog = [
  labelled(
    wf(restartDeploy, "restart-deployment", "RestartDeployment", [
      { name: "TARGET_RESOURCE_NAME", type: "string", description: "deployment", required: true }
    ]),
    "deployment"
  ),
  labelled(wf(restartSts, "restart-statefulset", "RestartStatefulSet", []), "apps/v1/StatefulSet"),
  wf(scaleId, "scale-deployment", "ScaleReplicas", [
    { name: "REPLICAS", type: "integer", description: "replicas", required: true, minimum: 1, maximum: 20 },
    { name: "MODE", type: "string", description: "how", required: false, default: "soft" },
    { name: "TARGET_RESOURCE_API_VERSION", type: "string", description: "api version", required: true }
  ])
]

const crd = (group: string) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `gateways.${group}` },
  spec: { group, scope: "Namespaced", names: { plural: "gateways", kind: "Gateway" }, versions: [{ name: "v1", served: true, storage: true }] }
})

const seed: ReadonlyArray<KubeObject> = [
  ...cluster(),
  crd("gateway.networking.k8s.io") as never,
  crd("networking.istio.io") as never,
  {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "node-a" },
    spec: { unschedulable: true },
    status: { conditions: [{ type: "Ready", status: "False", reason: "KubeletNotReady" }] }
  },
  {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "checkout.1", namespace: appNs },
    reason: "BackOff",
    type: "Warning",
    message: "Back-off restarting failed container",
    involvedObject: { kind: "Pod", name: "checkout-7d9f-abcde", namespace: appNs }
  },
  { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "db", namespace: appNs, uid: "uid-db" }, spec: {} },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "db-0",
      namespace: appNs,
      ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "uid-db", controller: true }]
    },
    spec: {}
  }
]

const script = (signal: string, turns: Script["turns"]): Script => ({ name: signal, match: `signal_name: ${signal}`, turns })
const noAction = { json: { root_cause: "Seen", confidence: 0.7, actionable: false } }

const scripts = [
  script("EventsNoGroup", [{ toolCalls: [{ name: "cluster_list", arguments: { kind: "Event" } }] }, noAction]),
  script("NodeLevel", [{ toolCalls: [{ name: "cluster_get", arguments: { kind: "Node", name: "node-a" } }] }, noAction]),
  script("TwoGroups", [
    { toolCalls: [{ name: "cluster_list", arguments: { kind: "Gateway" } }] },
    { toolCalls: [{ name: "cluster_list", arguments: { kind: "Gateway", api_version: "gateway.networking.k8s.io/v1" } }] },
    noAction
  ]),
  script("Stubborn", [{ toolCalls: [{ name: "cluster_list", arguments: { kind: "Gateway" } }] }]),
  script("Params", [{
    json: { root_cause: "Too few replicas", confidence: 0.8, actionable: true, selected_workflow: { workflow_id: scaleId, parameters: { REPLICAS: 3 } } }
  }]),
  script("Neighbour", [
    { toolCalls: [{ name: "resolve_owner", arguments: { kind: "Pod", name: "checkout-7d9f-abcde" } }] },
    { toolCalls: [{ name: "resolve_owner", arguments: { kind: "Pod", name: "db-0" } }] },
    { toolCalls: [{ name: "list_available_actions", arguments: {} }] },
    { json: { root_cause: "checkout crash loop", confidence: 0.8, actionable: true, selected_workflow: { workflow_id: restartDeploy, parameters: {} } } }
  ])
]

const toolMessages = (signal: string) =>
  Effect.map(ScriptedLlm, (s) => {
    const last = s.requests.filter((r) => r.body?.messages?.[1]?.content?.includes(`signal_name: ${signal}`)).at(-1)
    return ((last?.body.messages ?? []) as Array<{ role: string; content?: unknown }>).filter((m) => m.role === "tool").map((m) => String(m.content))
  })

const run = (signal: string) =>
  Effect.gen(function* () {
    const api = yield* client
    const { session_id } = yield* api.incident.analyze({ payload: incident(signal) as never })
    assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
    return yield* api.incident.sessionResult({ path: { session_id } })
  })

layer(AgentOnDevKube({ scripts, seed, workflows: catalog, config: { ambiguousKindRetries: 2 } }), { excludeTestServices: true })(
  "investigation fidelity",
  (it) => {
    it.effect("Events without a group are core/v1 Events, not an ambiguity that ends the run", () =>
      Effect.gen(function* () {
        const result = yield* run("EventsNoGroup")
        assert.strictEqual(result.needs_human_review, false)
        const [events] = yield* toolMessages("EventsNoGroup")
        assert.include(events, "Back-off restarting failed container")
      }))

    it.effect("cluster-scoped kinds are served: a Node with its conditions", () =>
      Effect.gen(function* () {
        yield* run("NodeLevel")
        const [node] = yield* toolMessages("NodeLevel")
        assert.include(node, "KubeletNotReady")
        assert.notInclude(node, "does not serve")
      }))

    it.effect("a kind served by two non-core groups gets a correction naming them; with api_version it works", () =>
      Effect.gen(function* () {
        const result = yield* run("TwoGroups")
        assert.strictEqual(result.needs_human_review, false)
        const [correction, listed] = yield* toolMessages("TwoGroups")
        assert.include(correction, "gateway.networking.k8s.io, networking.istio.io")
        assert.include(listed, "\"count\":0")
      }))

    it.effect("omitting the group again and again escalates to rca_incomplete", () =>
      Effect.gen(function* () {
        const result = yield* run("Stubborn")
        assert.strictEqual(result.needs_human_review, true)
        assert.strictEqual(result.human_review_reason, "rca_incomplete")
      }))

    it.effect("parameters are the model's choice plus the TARGET_RESOURCE_* the workflow declares, without copied defaults", () =>
      Effect.gen(function* () {
        const result = yield* run("Params")
        assert.strictEqual(result.needs_human_review, false)
        assert.deepStrictEqual(result.selected_workflow?.parameters, { REPLICAS: 3, TARGET_RESOURCE_API_VERSION: "apps/v1" })
      }))

    it.effect("discovery follows the incident's remediation target, not a neighbour's owner lookup", () =>
      Effect.gen(function* () {
        const result = yield* run("Neighbour")
        const [, , actions] = yield* toolMessages("Neighbour")
        assert.include(actions, "RestartDeployment")
        assert.notInclude(actions, "RestartStatefulSet")
        assert.deepStrictEqual(result.selected_workflow?.parameters, { TARGET_RESOURCE_NAME: "checkout" })
      }))
  }
)
