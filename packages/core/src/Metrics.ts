/**
 * The process's prom-client registries. Every metric registers in both, so a scraper asking for OpenMetrics gets
 * it and everyone else gets the classic text exposition format.
 */
import { Effect } from "effect"
import * as Prom from "prom-client"

export class Metrics extends Effect.Service<Metrics>()("@kubemend/core/Metrics", {
  sync: () => {
    const text = new Prom.Registry()
    const openMetrics = new Prom.Registry<Prom.OpenMetricsContentType>()
    openMetrics.setContentType(Prom.openMetricsContentType)
    const registers = [text, openMetrics] as Array<Prom.Registry>
    Prom.collectDefaultMetrics({ register: text })

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
  }
}) {}
