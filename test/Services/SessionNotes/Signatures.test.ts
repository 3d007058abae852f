import { describe, expect, it } from "vitest"
import { PNG } from "pngjs"
import { checkSignaturePng } from "../../../src/Services/SessionNotes/Signatures.js"

const pngBytes = (width: number, height: number) => PNG.sync.write(new PNG({ width, height }))
const uri = (bytes: Uint8Array) => `data:image/png;base64,${Buffer.from(bytes).toString("base64")}`

describe("checkSignaturePng", () => {
  it("accepts a PNG and returns its bytes", () => {
    const bytes = pngBytes(10, 5)
    expect(checkSignaturePng(uri(bytes))).toEqual({ bytes: new Uint8Array(bytes) })
  })

  it("reads the dimensions from the header before decoding: a huge image is refused without allocating its pixels", () => {
    const bytes = Buffer.from(pngBytes(1, 1))
    // 100,000 × 100,000 in the IHDR (the CRC is not even checked before the size is).
    bytes.writeUInt32BE(100_000, 16)
    bytes.writeUInt32BE(100_000, 20)
    expect(checkSignaturePng(uri(bytes))).toEqual({ problem: "is too large (maximum is 2000×2000 pixels)" })
  })

  it("refuses more than 256 KB of image", () => {
    const bytes = Buffer.concat([Buffer.from(pngBytes(1, 1)), Buffer.alloc(300 * 1024)])
    expect(checkSignaturePng(uri(bytes))).toEqual({ problem: "is too large (maximum is 256 KB)" })
  })

  it("refuses a PNG whose data does not decode (bad CRC, truncated) and anything that is not a PNG", () => {
    const bytes = Buffer.from(pngBytes(4, 4))
    bytes[bytes.length - 20] = (bytes[bytes.length - 20]! + 1) % 256
    expect(checkSignaturePng(uri(bytes))).toEqual({ problem: "is not a valid PNG image" })
    expect(checkSignaturePng(uri(pngBytes(4, 4).subarray(0, 40)))).toEqual({ problem: "is not a valid PNG image" })
    expect(checkSignaturePng("data:image/gif;base64,R0lGODlhAQABAAAAACw=")).toEqual({ problem: "must be a PNG image (data:image/png;base64,…)" })
    expect(checkSignaturePng("data:image/png;base64,")).toEqual({ problem: "can't be blank" })
  })
})
