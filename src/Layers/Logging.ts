/**
 * Structured JSON logs, one line each, carrying the trace and span ids of the current span so a
 * log line leads to its trace. Annotations must hold ids and counts only (no personal data).
 */
import { Cause, Context, Effect, FiberRef, FiberRefs, HashMap, Layer, Logger, Option, Tracer } from "effect"
import { AppConfig } from "../Services/AppConfig.js"

const currentSpan = (fiberRefs: FiberRefs.FiberRefs): Option.Option<Tracer.AnySpan> =>
  Context.getOption(FiberRefs.getOrDefault(fiberRefs, FiberRef.currentContext), Tracer.ParentSpan)

export const jsonLogger = Logger.make(({ annotations, cause, context, date, logLevel, message }) => {
  const span = currentSpan(context)
  const line: Record<string, unknown> = {
    time: date.toISOString(),
    level: logLevel.label,
    message: Array.isArray(message) && message.length === 1 ? message[0] : message
  }
  if (Option.isSome(span)) {
    line.trace_id = span.value.traceId
    line.span_id = span.value.spanId
  }
  for (const [key, value] of HashMap.toEntries(annotations)) line[key] = value
  if (!Cause.isEmpty(cause)) line.cause = Cause.pretty(cause, { renderErrorCause: false }).split("\n")[0]
  process.stdout.write(`${JSON.stringify(line)}\n`)
})

export const LoggingLive = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Layer.mergeAll(
    config.logFormat === "json" ? Logger.replace(Logger.defaultLogger, jsonLogger) : Logger.pretty,
    Logger.minimumLogLevel(config.logLevel)
  )))
