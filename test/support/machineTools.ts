/**
 * The machine's binaries the tests use beyond npm packages, at the paths
 * `scripts/test-prerequisites.sh` checks (and installs when it can) before every run.
 */
export const ffmpegPath = process.env["FFMPEG_PATH"] ?? "/usr/bin/ffmpeg"
export const ffprobePath = process.env["FFPROBE_PATH"] ?? "/usr/bin/ffprobe"
export const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
