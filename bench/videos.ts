/**
 * `npm run bench:videos`: clinic video processing and uploads.
 *
 * 1. Starts the app as `npm start` runs it (child process, fresh database, local-disk store, job
 *    worker on, VIDEO_CONCURRENCY=2), with clips made here by ffmpeg lavfi (never downloaded).
 * 2. A 60 s 720p VP9/Opus WebM is uploaded and transcoded (target ≤ 30 s from completing the
 *    upload to `completed`); a 60 s 720p H.264/AAC MP4 is remuxed (target ≤ 5 s).
 * 3. `GET /v1/clinic/videos/{id}` p99, idle and while two WebM videos process (target ≤ 2 × idle).
 * 4. A 1 GiB upload through the disk part route (4 parts at once) and its completion, on a freshly
 *    restarted app (the transcodes' memory is not the upload's), sampling the app's RSS (target
 *    ≤ 200 MB; the image runs `--target production`).
 *
 * Database: DATABASE_URL's server (a fresh database, dropped at the end), else an embedded
 * PostgreSQL. Flags: --requests (300 per latency round), --upload-mib (1024), --target (`tsx`
 * default, or `production`: `node dist/main.js` as the image runs it), --upload-only (step 4 alone).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { describeTarget, latencySummary, ms, parseTarget, runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    requests: { type: "string", default: "300" },
    "upload-mib": { type: "string", default: "1024" },
    target: { type: "string", default: "tsx" },
    // Only the 1 GiB upload (no clips, processing or latency rounds): for memory work.
    "upload-only": { type: "boolean", default: false }
  }
})
const target = parseTarget(flags.target)
const requests = Number(flags.requests)
const uploadMib = Number(flags["upload-mib"])

const ffmpeg = (args: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) =>
    execFile("/usr/bin/ffmpeg", ["-nostdin", "-hide_banner", "-loglevel", "error", "-threads", "2", ...args, "-y"], (error) =>
      error ? reject(error) : resolve()))

const rssMb = async (pid: number) => {
  const status = await fs.readFile(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

runBench("videos", async (bench) => {
  const env = { VIDEO_CONCURRENCY: "2", JOBS_ENABLED: "true", JOBS_POLL_INTERVAL_MS: "200", S3_BUCKET: "" }
  let app = await bench.startApp({ target, env })
  let { base, token } = app
  console.log(`app: ${describeTarget(target)}`)
  const call = async (method: string, route: string, body?: unknown) => {
    const started = performance.now()
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { "content-type": "application/json", "x-user-token": token },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, json: (text ? JSON.parse(text) : undefined) as any, elapsed: performance.now() - started }
  }

  /** Creates a video and uploads `file` in parts (`parallel` at once); returns the id once the upload is completed. */
  const upload = async (file: string, contentType: string, parallel = 4, beforeComplete?: () => void) => {
    const { size } = await fs.stat(file)
    const created = await call("POST", "/v1/clinic/videos", { video: { title: "Bench", category: "training" } })
    const id = created.json.video.id as number
    const started = await call("POST", `/v1/clinic/videos/${id}/upload`, { upload: { filename: path.basename(file), content_type: contentType, size_bytes: size } })
    if (started.status !== 201) throw new Error(`upload start: ${started.status} ${JSON.stringify(started.json)}`)
    const plan = started.json.upload as { part_size: number; parts: Array<{ part_number: number; url: string }> }
    const handle = await fs.open(file)
    const etags: Array<{ part_number: number; etag: string }> = []
    const queue = [...plan.parts]
    await Promise.all(Array.from({ length: parallel }, async () => {
      for (let part = queue.shift(); part; part = queue.shift()) {
        const start = (part.part_number - 1) * plan.part_size
        const body = Buffer.alloc(Math.min(plan.part_size, size - start))
        await handle.read(body, 0, body.length, start)
        const response = await fetch(part.url.replace(/^http:\/\/localhost:\d+/, base), { method: "PUT", body })
        if (response.status !== 200) throw new Error(`part ${part.part_number}: ${response.status}`)
        etags.push({ part_number: part.part_number, etag: response.headers.get("etag")! })
      }
    }))
    await handle.close()
    beforeComplete?.()
    const done = await call("POST", `/v1/clinic/videos/${id}/upload/complete`, { parts: etags.sort((a, b) => a.part_number - b.part_number) })
    if (done.status !== 202) throw new Error(`complete: ${done.status} ${JSON.stringify(done.json)}`)
    return { id, completedAt: performance.now() }
  }

  const waitCompleted = async (id: number) => {
    for (;;) {
      const status = await call("GET", `/v1/clinic/videos/${id}/status`)
      if (status.json.status === "completed") return performance.now()
      if (status.json.status === "failed") throw new Error(`video ${id} failed: ${status.json.error_message}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  if (!flags["upload-only"]) {
    const webm = path.join(bench.tmpDir, "clip.webm")
    const mp4 = path.join(bench.tmpDir, "clip.mp4")
    const made = performance.now()
    await ffmpeg(["-f", "lavfi", "-i", "testsrc=duration=60:size=1280x720:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:duration=60",
      "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M", "-c:a", "libopus", "-shortest", webm])
    await ffmpeg(["-f", "lavfi", "-i", "testsrc=duration=60:size=1280x720:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:duration=60",
      "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", mp4])
    console.log(`clips made in ${((performance.now() - made) / 1000).toFixed(1)} s`)

    const w = await upload(webm, "video/webm")
    const webmSeconds = (await waitCompleted(w.id) - w.completedAt) / 1000
    console.log(`60 s 720p WebM → H.264/AAC: ${webmSeconds.toFixed(1)} s (target ≤ 30 s)`)
    const m = await upload(mp4, "video/mp4")
    const mp4Seconds = (await waitCompleted(m.id) - m.completedAt) / 1000
    console.log(`60 s 720p MP4 remux: ${mp4Seconds.toFixed(1)} s (target ≤ 5 s)`)

    const latencies = async () => {
      const samples: Array<number> = []
      for (let i = 0; i < requests; i++) samples.push((await call("GET", `/v1/clinic/videos/${m.id}`)).elapsed)
      return latencySummary(samples)
    }
    const idle = await latencies()
    console.log(`GET video idle: p50 ${ms(idle.p50)}  p99 ${ms(idle.p99)}  max ${ms(idle.max)}`)
    const a = await upload(webm, "video/webm")
    const b = await upload(webm, "video/webm")
    const busy = await latencies()
    const processing = (await call("GET", `/v1/clinic/videos/${a.id}/status`)).json.status
    console.log(`GET video while two process (${processing} at the end): p50 ${ms(busy.p50)}  p99 ${ms(busy.p99)}  max ${ms(busy.max)}  ` +
      `(${(busy.p99 / idle.p99).toFixed(2)} × idle p99, target ≤ 2)`)
    await waitCompleted(a.id)
    await waitCompleted(b.id)
  }

  // 1 GiB of data (a sparse file reads as zeros: the route still streams every byte).
  const big = path.join(bench.tmpDir, "big.bin")
  await fs.writeFile(big, "")
  await fs.truncate(big, uploadMib * 1024 * 1024)
  await app.stop()
  app = await bench.startApp({ target, env, skipBuild: true })
  ;({ base, token } = app)
  const pid = app.child.pid!
  const baseline = await rssMb(pid)
  // The highest RSS while the parts are sent, then while the upload is completed.
  const maxRss = { parts: baseline, completion: baseline }
  let phase: keyof typeof maxRss = "parts"
  const sampler = setInterval(() => void rssMb(pid).then((mb) => (maxRss[phase] = Math.max(maxRss[phase], mb)), () => undefined), 100)
  const uploadStart = performance.now()
  const u = await upload(big, "video/mp4", 4, () => (phase = "completion"))
  clearInterval(sampler)
  const peak = Math.max(maxRss.parts, maxRss.completion)
  console.log(`${uploadMib} MiB disk upload + completion: ${((u.completedAt - uploadStart) / 1000).toFixed(1)} s, RSS ` +
    `${baseline.toFixed(0)} MB idle before, max ${peak.toFixed(0)} MB (parts ${maxRss.parts.toFixed(0)}, completion ` +
    `${maxRss.completion.toFixed(0)}; target ≤ 200 MB)`)
  await call("DELETE", `/v1/clinic/videos/${u.id}`)
})
