// @20minutes/s3rver ships no typings; only what the tests use.
declare module "@20minutes/s3rver" {
  import type { AddressInfo } from "node:net"

  interface S3rverOptions {
    readonly address?: string
    readonly port?: number
    readonly silent?: boolean
    readonly directory?: string
    readonly resetOnClose?: boolean
    readonly configureBuckets?: ReadonlyArray<{ readonly name: string; readonly configs?: ReadonlyArray<string | Buffer> }>
  }

  export default class S3rver {
    constructor(options?: S3rverOptions)
    run(): Promise<AddressInfo>
    close(): Promise<void>
  }
}
