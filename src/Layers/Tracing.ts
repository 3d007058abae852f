/**
 * OpenTelemetry export when OTEL_EXPORTER_OTLP_ENDPOINT is set. Without it, Effect's own tracer
 * still creates the spans (so logs carry trace ids) and nothing is exported.
 *
 * The OpenTelemetry SDK is imported when a layer below is built, not with this module: an
 * instance that exports no traces never loads it (it is a sizeable part of idle memory).
 */
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../Services/AppConfig.js"

/** Traces through the given processor (tests pass an in-memory exporter). */
export const tracingWith = (serviceName: string, spanProcessor: SpanProcessor) =>
  Layer.unwrapEffect(Effect.promise(() =>
    import("@effect/opentelemetry/NodeSdk").then((NodeSdk) =>
      NodeSdk.layer(() => ({ resource: { serviceName }, spanProcessor })))
  ))

const otlpProcessor = (endpoint: string) =>
  Effect.promise(async () => {
    const [{ BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http")
    ])
    return new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` }))
  })

export const TracingLive = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Option.match(config.otelEndpoint, {
    onNone: () => Layer.empty,
    onSome: (endpoint) =>
      Layer.unwrapEffect(Effect.map(otlpProcessor(endpoint), (processor) => tracingWith(config.otelServiceName, processor)))
  })))
