/**
 * What a workload did and uses: `cluster_pod_logs` (a container's current or previous log, its tail, capped in
 * size; the output is scrubbed like every tool's) and `cluster_resource_usage` (metrics.k8s.io usage of pods, with
 * each container's requests and limits beside it, or of nodes).
 */
import { Effect, Schema } from "effect"
import { K8s, type KubeObject } from "@kubemend/core/K8s"
import { AgentConfig } from "../AgentConfig.ts"
import type { RunState } from "./Run.ts"
import { failed, ok, opt, tool } from "./ToolKit.ts"

const Name = Schema.String.pipe(Schema.pattern(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/))
const Count = Schema.Number.pipe(Schema.between(1, 100_000))
const Text = Schema.String.pipe(Schema.maxLength(512))

const defaultTail = 200
const maxTail = 5000
/** A log read stops here even when the output budget is larger: the tail is what tells. */
const maxLogBytes = 256 * 1024
const metricsVersion = "metrics.k8s.io/v1beta1"

const rec = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {})

const failure = (e: { readonly _tag: string; readonly message?: string | undefined; readonly status?: number | undefined }, what: string) =>
  e._tag === "K8sNotFound"
    ? failed(`${what} not found`)
    : e.status === 400
    ? failed(`${what}: ${e.message ?? "bad request"}`)
    : failed(`${what}: the cluster API is unavailable (${e.message ?? e._tag})`)

export const make = Effect.gen(function* () {
  const k8s = yield* K8s
  const config = yield* AgentConfig
  const namespaceOf = (run: RunState, namespace: string | undefined) => namespace ?? run.session.request.resource_namespace

  const logs = tool(
    "cluster_pod_logs",
    `Read a pod container's log: the last tail_lines lines (default ${defaultTail}); previous=true reads the container ` +
      "that crashed before the current one (crash loops, OOM kills). Name the container when the pod has several.",
    Schema.Struct({
      name: Name,
      namespace: opt(Name),
      container: opt(Name),
      previous: opt(Schema.Boolean),
      tail_lines: opt(Count),
      since_seconds: opt(Count)
    }),
    (a, run) => {
      const namespace = namespaceOf(run, a.namespace)
      const tailLines = Math.min(Math.round(a.tail_lines ?? defaultTail), maxTail)
      return k8s.podLog({
        namespace,
        name: a.name,
        ...(a.container === undefined ? {} : { container: a.container }),
        ...(a.previous === true ? { previous: true } : {}),
        tailLines,
        ...(a.since_seconds === undefined ? {} : { sinceSeconds: Math.round(a.since_seconds) }),
        limitBytes: Math.min(maxLogBytes, config.maxToolOutputSize)
      }).pipe(
        Effect.map((text) =>
          ok({
            pod: `${namespace}/${a.name}`,
            ...(a.container === undefined ? {} : { container: a.container }),
            previous: a.previous === true,
            lines: text === "" ? 0 : text.split("\n").filter((l) => l !== "").length,
            log: text === "" ? "(empty)" : text
          })
        ),
        Effect.catchAll((e) => Effect.succeed(failure(e, `log of pod ${namespace}/${a.name}`)))
      )
    }
  )

  /** Each container's usage with the pod's requests and limits for it (an OOM reads as usage near the limit). */
  const withResources = (metrics: KubeObject, pod: KubeObject | undefined) => {
    const specs = (rec(pod?.spec)["containers"] ?? []) as ReadonlyArray<Record<string, unknown>>
    const containers = (metrics["containers"] ?? []) as ReadonlyArray<Record<string, unknown>>
    return {
      name: metrics.metadata.name,
      ...(metrics.metadata.namespace === undefined ? {} : { namespace: metrics.metadata.namespace }),
      timestamp: metrics["timestamp"],
      window: metrics["window"],
      containers: containers.map((c) => {
        const resources = rec(specs.find((s) => s["name"] === c["name"])?.["resources"])
        return { name: c["name"], usage: c["usage"], requests: resources["requests"] ?? null, limits: resources["limits"] ?? null }
      })
    }
  }

  const usage = tool(
    "cluster_resource_usage",
    "Current CPU and memory usage from metrics.k8s.io: of pods (one by name, or by label selector, with each " +
      "container's requests and limits) or of nodes (kind Node).",
    Schema.Struct({
      kind: Schema.Literal("Pod", "Node"),
      name: opt(Name),
      namespace: opt(Name),
      label_selector: opt(Text)
    }),
    (a, run) =>
      Effect.gen(function* () {
        const namespace = namespaceOf(run, a.namespace)
        const metricsKind = a.kind === "Pod" ? "PodMetrics" : "NodeMetrics"
        const items = a.name === undefined
          ? (yield* k8s.listResources({
            kind: metricsKind,
            apiVersion: metricsVersion,
            namespace,
            ...(a.label_selector === undefined ? {} : { labelSelector: a.label_selector })
          })).items
          : [yield* k8s.getResource({ kind: metricsKind, apiVersion: metricsVersion, namespace, name: a.name })]
        if (a.kind === "Node") return ok({ nodes: items.map((n) => ({ name: n.metadata.name, timestamp: n["timestamp"], usage: n["usage"] })) })
        const pods = yield* Effect.forEach(items.slice(0, 50), (m) =>
          Effect.map(Effect.option(k8s.getResource({ kind: "Pod", apiVersion: "v1", namespace, name: m.metadata.name })), (p) =>
            withResources(m, p._tag === "Some" ? p.value : undefined)))
        return ok({ pods })
      }).pipe(
        Effect.catchAll((e) =>
          Effect.succeed(
            e._tag === "K8sUnknownKind"
              ? failed("the cluster does not serve metrics.k8s.io (no metrics-server); try prometheus_query")
              : failure(e, `${a.kind} usage`)
          )
        )
      )
  )

  return [logs, usage] as const
})
