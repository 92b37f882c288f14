/**
 * The process's prom-client registries. Every metric registers in both, so a scraper asking for OpenMetrics gets
 * it and everyone else gets the classic text exposition format.
 */
import { Context, Effect } from "effect"
import * as Prom from "prom-client"

/**
 * The metric namespace of each service, which its default process series (`process_*`, `nodejs_*`) carry too, so
 * a scrape document holds only the service's own names: document 1 says the gateway's are all `af_`; the agent's,
 * storage's and the operator's namespaces are document 3's. `audit_events_dropped_total` keeps its shared name,
 * as document 3 lists it, since its `service` label says whose it is.
 */
export const serviceNamespaces: Readonly<Record<string, string>> = {
  gateway: "af_",
  agent: "aiagent_api_",
  storage: "datastorage_",
  signals: "gateway_",
  console: "console_",
  operator: "svc_"
}

/** The prefix of the default process series in this process (`runService` sets it from the service's name). */
export class DefaultMetricsPrefix extends Context.Reference<DefaultMetricsPrefix>()("@kubemend/core/DefaultMetricsPrefix", {
  defaultValue: () => ""
}) {}

export class Metrics extends Effect.Service<Metrics>()("@kubemend/core/Metrics", {
  effect: Effect.gen(function* () {
    const prefix = yield* DefaultMetricsPrefix
    const text = new Prom.Registry()
    const openMetrics = new Prom.Registry<Prom.OpenMetricsContentType>()
    openMetrics.setContentType(Prom.openMetricsContentType)
    const registers = [text, openMetrics] as Array<Prom.Registry>
    Prom.collectDefaultMetrics({ register: text, prefix })
    // prom-client's totals of active handles, requests and resources are gauges named `_total`, which Prometheus
    // reserves for counters (promtool check metrics refuses them); the same counts stay in their per-type gauges.
    for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]) {
      text.removeSingleMetric(`${prefix}${name}`)
    }

    const render = (accept: string | undefined) =>
      Effect.promise(async () => {
        const registry = accept?.includes("application/openmetrics-text") ? openMetrics : text
        return { contentType: registry.contentType as string, body: await registry.metrics() }
      })

    // Metrics are created once per process name; tests build layers repeatedly, so look up before creating.
    const counter = <L extends string>(config: Prom.CounterConfiguration<L>): Prom.Counter<L> =>
      (text.getSingleMetric(config.name) as Prom.Counter<L> | undefined) ?? new Prom.Counter({ ...config, registers })
    const gauge = <L extends string>(config: Prom.GaugeConfiguration<L>): Prom.Gauge<L> =>
      (text.getSingleMetric(config.name) as Prom.Gauge<L> | undefined) ?? new Prom.Gauge({ ...config, registers })
    const histogram = <L extends string>(config: Prom.HistogramConfiguration<L>): Prom.Histogram<L> =>
      (text.getSingleMetric(config.name) as Prom.Histogram<L> | undefined) ?? new Prom.Histogram({ ...config, registers })

    return { registers, render, counter, gauge, histogram } as const
  })
}) {}
