#!/bin/sh
# What the tests need from the machine beyond npm packages: ffmpeg and ffprobe (clinic video
# tests) and Chromium (the typed client in a real browser). Missing ones at their default paths are
# installed from Debian's packages when this can (root, or sudo without a password); otherwise it
# stops at once with one message saying what to install. A path set in the environment that does
# not exist is reported, never "fixed" by installing elsewhere.
# Run by `npm test` (pretest), by the test run's global setup (for `npx vitest run …`) and by .ci/run.
set -eu

ffmpeg="${FFMPEG_PATH:-/usr/bin/ffmpeg}"
ffprobe="${FFPROBE_PATH:-/usr/bin/ffprobe}"
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"

# Fills $packages (Debian packages to install) and $unfixable (paths set in the environment).
check() {
  packages=""
  unfixable=""
  if [ ! -x "$ffmpeg" ] || [ ! -x "$ffprobe" ]; then
    if [ -n "${FFMPEG_PATH:-}${FFPROBE_PATH:-}" ]; then
      unfixable="$unfixable FFMPEG_PATH=$ffmpeg FFPROBE_PATH=$ffprobe"
    else
      packages="$packages ffmpeg"
    fi
  fi
  if [ ! -x "$chromium" ]; then
    if [ -n "${CHROMIUM_PATH:-}" ]; then unfixable="$unfixable CHROMIUM_PATH=$chromium"; else packages="$packages chromium"; fi
  fi
}

fail() {
  echo "The tests need ffmpeg and ffprobe (5.1+) and Chromium;$1" >&2
  echo "Install them with: apt-get install -y --no-install-recommends ffmpeg chromium (Debian/Ubuntu, as root)" >&2
  echo "or set FFMPEG_PATH, FFPROBE_PATH and CHROMIUM_PATH to existing binaries, then run the tests again." >&2
  exit 1
}

check
[ -z "$packages$unfixable" ] && exit 0
[ -n "$unfixable" ] && fail " not found:$unfixable."

as_root=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root="sudo -n"; else fail " missing here:$packages (installing needs root)."; fi
fi
command -v apt-get >/dev/null 2>&1 || fail " missing here:$packages (no apt-get to install them with)."

echo "Installing Debian's$packages for the tests" >&2
# Several test runs may start at once on a fresh machine: wait for apt's lock rather than fail.
apt="$as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=600"
# shellcheck disable=SC2086 # word splitting of $apt and $packages is intended
{ $apt update && $apt install -y --no-install-recommends $packages; } >&2 || fail " installing$packages failed (see above)."
check
[ -z "$packages" ] || fail " still missing after installing:$packages."
