/**
 * OpenTelemetry export when OTEL_EXPORTER_OTLP_ENDPOINT is set. Without it, Effect's own tracer
 * still creates the spans (so logs carry trace ids) and nothing is exported.
 */
import { NodeSdk } from "@effect/opentelemetry"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../Services/AppConfig.js"

/** Traces through the given processor (tests pass an in-memory exporter). */
export const tracingWith = (serviceName: string, spanProcessor: SpanProcessor) =>
  NodeSdk.layer(() => ({ resource: { serviceName }, spanProcessor }))

export const TracingLive = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Option.match(config.otelEndpoint, {
    onNone: () => Layer.empty,
    onSome: (endpoint) =>
      tracingWith(
        config.otelServiceName,
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` }))
      )
  })))
