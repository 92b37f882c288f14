/**
 * Each service's scrape document holds its own names only: the default process series carry the service's
 * namespace (gateway `af_`, …), `audit_events_dropped_total` keeps its shared name, and the document passes
 * `promtool check metrics` (skipped with the reason without promtool, failed under CI).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkMetrics, externalTool } from "@kubemend/devkit/ExternalTool"
import { DefaultMetricsPrefix, Metrics, serviceNamespaces } from "../src/Metrics.ts"

const promtool = externalTool("promtool", ["--version"], "Debian's prometheus package")
if (promtool.skip) console.warn(`MetricsPrefix.test.ts: promtool checks skipped: ${promtool.missing}`)

const scrape = (prefix: string) =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    metrics.counter({ name: "audit_events_dropped_total", help: "Audit events dropped", labelNames: ["service"] }).inc({ service: "x" }, 0)
    return (yield* metrics.render(undefined)).body
  }).pipe(Effect.provide(Metrics.Default), Effect.provideService(DefaultMetricsPrefix, prefix))

/** Metric names of the series in a text exposition. */
const seriesNames = (body: string) => [...new Set(body.split("\n").filter((l) => l !== "" && !l.startsWith("#")).map((l) => l.split(/[{ ]/)[0]!))]

describe("default metrics per service", () => {
  it.effect.each(Object.entries(serviceNamespaces))("%s: every series is %s-prefixed but audit_events_dropped_total", ([, prefix]) =>
    Effect.gen(function* () {
      const body = yield* scrape(prefix)
      const names = seriesNames(body)
      expect(names).toEqual(expect.arrayContaining([`${prefix}process_cpu_user_seconds_total`, `${prefix}nodejs_heap_size_used_bytes`]))
      expect(names.filter((n) => !n.startsWith(prefix))).toEqual(["audit_events_dropped_total"])
      if (!promtool.skip) checkMetrics(promtool, body)
    }))

  it.effect("without a service (tests, the local platform's own process) the series keep their default names", () =>
    Effect.map(scrape(""), (body) => expect(seriesNames(body)).toContain("process_cpu_user_seconds_total")))
})
