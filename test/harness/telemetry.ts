/**
 * The server's telemetry while the harness runs: spans through an in-memory exporter and every
 * log line at every level, captured by the `observability` layer given to the app. `scan` drains
 * what was captured and looks in it for every email, phone number, name, password and token the
 * harness generated; a long campaign scans after each batch, so memory stays bounded.
 */
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Cause, HashMap, Layer, List, Logger, LogLevel } from "effect"
import { tracingWith } from "../../src/Layers/Tracing.js"
import type { SecretHit, Secrets } from "./secrets.js"

export interface TelemetryScan {
  readonly spans: number
  readonly logLines: number
  readonly hits: ReadonlyArray<SecretHit>
}

export class Telemetry {
  private readonly exporter = new InMemorySpanExporter()
  private logLines: Array<{ readonly where: string; readonly text: string }> = []
  private scanned = { spans: 0, logLines: 0 }
  private readonly found: Array<SecretHit> = []

  /** Tracing into memory and a logger that keeps every line, for the app's `observability`. */
  readonly layer: Layer.Layer<never> = Layer.mergeAll(
    tracingWith("harness", new SimpleSpanProcessor(this.exporter)),
    Logger.replace(Logger.defaultLogger, Logger.make(({ annotations, cause, logLevel, message: parts, spans }) => {
      const message = Array.isArray(parts) && parts.length === 1 ? parts[0] : parts
      this.logLines.push({
        where: `log ${logLevel.label} ${JSON.stringify(message).slice(0, 80)}`,
        text: JSON.stringify({
          message,
          annotations: Object.fromEntries(HashMap.toEntries(annotations)),
          spans: List.toArray(spans).map((s) => s.label),
          cause: Cause.isEmpty(cause) ? undefined : Cause.pretty(cause, { renderErrorCause: true })
        })
      })
    })),
    Logger.minimumLogLevel(LogLevel.All)
  )

  /** Everything a span carries that an exporter would send, bar the resource. */
  private static spanText(span: ReadableSpan): string {
    return JSON.stringify({
      name: span.name,
      attributes: span.attributes,
      events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })),
      status: span.status,
      links: span.links.map((l) => l.attributes)
    })
  }

  /** Scans and forgets what was captured since the last scan; returns the totals so far. */
  scan(secrets: Secrets): TelemetryScan {
    const spans = this.exporter.getFinishedSpans()
    this.exporter.reset()
    const lines = this.logLines
    this.logLines = []
    for (const span of spans) this.found.push(...secrets.find(Telemetry.spanText(span), `span ${span.name}`))
    for (const line of lines) this.found.push(...secrets.find(line.text, line.where))
    this.scanned = { spans: this.scanned.spans + spans.length, logLines: this.scanned.logLines + lines.length }
    return { ...this.scanned, hits: [...this.found] }
  }
}

/** One line per hit, naming where it was. */
export const describeHits = (hits: ReadonlyArray<SecretHit>): Array<string> =>
  hits.map((hit) => `${hit.kind} ${JSON.stringify(hit.value)} in ${hit.where}: …${hit.excerpt}…`)
