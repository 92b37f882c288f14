/**
 * A scenario: a seeded dev cluster (objects, container logs, metric series), the model's scripted turns for the
 * root-cause phase and the workflow phase, and the decision the agent must reach. All scenarios run against one
 * agent on its real HTTP server, the dev API server and the dev metrics backend over HTTP.
 */
import { Effect, Layer } from "effect"
import type { KubeObject } from "@kubemend/core/K8s"
import { DevAlerts } from "@kubemend/devkit/Alerts"
import { DevKube } from "@kubemend/devkit/kube/DevKube"
import type { DevSeries } from "@kubemend/devkit/PromQl"
import type { Script, ScriptedTurn } from "@kubemend/devkit/ScriptedLlm"
import type { IncidentRequestEncoded } from "@kubemend/core/domain/Incident"
import { AgentConfig } from "../src/AgentConfig.ts"
import { agentOn, DevKubeCluster, incident } from "../test/Harness.ts"
import { catalog } from "./Cluster.ts"

interface PodLog {
  readonly namespace: string
  readonly pod: string
  readonly container?: string
  readonly text: string
  readonly previous?: boolean
}

interface Decision {
  readonly workflow: string | null
  readonly parameters?: Record<string, unknown>
  readonly needsHumanReview: boolean
  readonly reason?: string
  /** `Kind namespace/name` or `Kind name` of the remediation target. */
  readonly target?: string
}

export interface Scenario {
  readonly signal: string
  readonly incident: Partial<IncidentRequestEncoded>
  readonly objects: ReadonlyArray<KubeObject>
  readonly logs?: ReadonlyArray<PodLog>
  readonly series?: ReadonlyArray<DevSeries>
  readonly rca: ReadonlyArray<ScriptedTurn>
  /** The workflow phase's turns; absent when the analysis needs no workflow. */
  readonly selection?: ReadonlyArray<ScriptedTurn>
  /** Text the model must have read in tool results (what an SRE would have looked at). */
  readonly seen: ReadonlyArray<string>
  readonly expect: Decision
}

/** The opening of the workflow phase's conversation (see Prompt.selectionPrompt). */
export const selectionOpening = "Select a remediation workflow for this incident."

const scriptsOf = (scenarios: ReadonlyArray<Scenario>): ReadonlyArray<Script> =>
  scenarios.flatMap((s) => [
    ...(s.selection === undefined ? [] : [{ name: `${s.signal}-selection`, match: [selectionOpening, `signal_name: ${s.signal}\n`], turns: s.selection }]),
    { name: s.signal, match: `signal_name: ${s.signal}\n`, turns: s.rca }
  ])

export const incidentOf = (s: Scenario) => incident(s.signal, s.incident)

/** The agent with the scenarios' cluster, logs and series, the Prometheus tools pointed at the dev backend. */
export const scenarioLayer = (scenarios: ReadonlyArray<Scenario>) => {
  const metrics = DevAlerts.layer({ alerts: [], series: scenarios.flatMap((s) => s.series ?? []) })
  const logs = Layer.effectDiscard(Effect.map(DevKube, (kube) => {
    for (const s of scenarios) {
      for (const l of s.logs ?? []) kube.setPodLog(l.namespace, l.pod, l.container ?? "app", l.text, l.previous)
    }
  }))
  const cluster = DevKubeCluster(scenarios.flatMap((s) => s.objects))
  const agent = Layer.unwrapEffect(Effect.map(DevAlerts, (backend) =>
    agentOn(Layer.merge(cluster, logs.pipe(Layer.provide(cluster))), {
      scripts: scriptsOf(scenarios),
      workflows: catalog,
      config: { prometheus: { ...AgentConfig.defaults.prometheus, url: backend.url } }
    })))
  return agent.pipe(Layer.provideMerge(metrics))
}
