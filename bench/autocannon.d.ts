/** The part of autocannon 9's programmatic API the bench uses (the package ships no types). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  export interface RawRequest {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
  }

  export interface RequestSpec extends RawRequest {
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest | undefined
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void
  }

  export interface Options {
    url: string
    connections?: number
    duration?: number
    amount?: number
    pipelining?: number
    timeout?: number
    method?: string
    headers?: Record<string, string>
    requests?: ReadonlyArray<RequestSpec>
    bailout?: number
  }

  export interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    sent: number
    p2_5: number
    p50: number
    p75: number
    p90: number
    p97_5: number
    p99: number
    p99_9: number
  }

  export interface Result {
    url: string
    requests: Histogram
    latency: Histogram
    throughput: Histogram
    errors: number
    timeouts: number
    mismatches: number
    non2xx: number
    resets: number
    duration: number
    start: Date
    finish: Date
    connections: number
    statusCodeStats: Record<string, { count: number }>
  }

  export interface Instance extends EventEmitter {
    stop: () => void
  }

  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance

  export default autocannon
}
