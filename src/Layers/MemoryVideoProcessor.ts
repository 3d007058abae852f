/**
 * `VideoProcessor` for handler tests, without ffmpeg: a "video" is a file whose text starts with
 * `FAKEVIDEO <format> <video codec> <audio codec> <seconds>`; anything else is not playable.
 * Conversion copies the file; the thumbnail is a fixed small JPEG header. `crashNext` makes the
 * next conversions die (a crashed worker).
 */
import { Context, Effect, Layer, Ref } from "effect"
import * as fs from "node:fs/promises"
import { NotPlayable, VideoProcessor } from "../Services/Videos/VideoProcessor.js"

export const fakeVideo = (seconds: number, format = "mov,mp4,m4a,3gp,3g2,mj2", video = "h264", audio = "aac") =>
  new TextEncoder().encode(`FAKEVIDEO ${format} ${video} ${audio} ${seconds}\n`)

export class MemoryVideoProcessor extends Context.Tag("app/MemoryVideoProcessor")<MemoryVideoProcessor, {
  /** The next `count` conversions die (as a killed worker's would). */
  readonly crashNext: (count: number) => Effect.Effect<void>
  /** Conversions run so far, with whether each transcoded. */
  readonly conversions: Effect.Effect<ReadonlyArray<boolean>>
}>() {
  static readonly layer: Layer.Layer<VideoProcessor | MemoryVideoProcessor> = Layer.effectContext(Effect.gen(function*() {
    const crashes = yield* Ref.make(0)
    const conversions = yield* Ref.make<ReadonlyArray<boolean>>([])
    const processor = VideoProcessor.of({
      available: true,
      probe: (file) =>
        Effect.gen(function*() {
          const text = yield* Effect.promise(() => fs.readFile(file, "utf8"))
          const match = /^FAKEVIDEO (\S+) (\S+) (\S+) ([0-9.]+)\n/.exec(text)
          if (!match) return yield* Effect.fail(new NotPlayable({ reason: "not a fake video" }))
          return {
            format: { format_name: match[1]!, duration: match[4]! },
            streams: [{ codec_type: "video", codec_name: match[2]! }, { codec_type: "audio", codec_name: match[3]! }]
          }
        }),
      convert: (input, output, options) =>
        Effect.gen(function*() {
          const crash = yield* Ref.modify(crashes, (n) => [n > 0, Math.max(0, n - 1)])
          if (crash) return yield* Effect.dieMessage("worker killed")
          yield* Ref.update(conversions, (list) => [...list, options.transcode])
          yield* options.onProgress(0.5)
          yield* Effect.promise(() => fs.copyFile(input, output))
          yield* options.onProgress(1)
        }),
      thumbnail: (_input, output) =>
        Effect.promise(() => fs.writeFile(output, new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 0xff, 0xd9])))
    })
    return Context.make(VideoProcessor, processor).pipe(Context.add(MemoryVideoProcessor, {
      crashNext: (count) => Ref.set(crashes, count),
      conversions: Ref.get(conversions)
    }))
  }))
}
