/**
 * OpenTelemetry: spans for every request (HttpServer/HttpClient add them and carry W3C `traceparent`) and every
 * `Effect.fn` method. Exported over OTLP/HTTP only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; otherwise spans stay
 * in process (trace ids still propagate between services).
 */
import { NodeSdk } from "@effect/opentelemetry"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Config, ConfigProvider, Effect, Layer, Option } from "effect"

export const layerTracing = (serviceName: string) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      // The standard OTel variable, read from the plain environment rather than the service's nested provider.
      const endpoint = yield* Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")).pipe(
        Effect.withConfigProvider(ConfigProvider.fromEnv())
      )
      if (Option.isNone(endpoint)) return Layer.empty
      const url = endpoint.value.replace(/\/$/, "") + "/v1/traces"
      return NodeSdk.layer(() => ({
        resource: { serviceName },
        spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter({ url })) as SpanProcessor
      }))
    })
  )

/** For tests: collect spans with the given processor (e.g. SimpleSpanProcessor over InMemorySpanExporter). */
export const layerTracingWith = (serviceName: string, spanProcessor: SpanProcessor) => NodeSdk.layer(() => ({ resource: { serviceName }, spanProcessor }))
