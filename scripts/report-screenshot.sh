#!/usr/bin/env bash
# Renders a backtest's report.html in headless Chromium and checks the picture is a real page, not a blank.
# Usage: scripts/report-screenshot.sh DIR   (DIR holds report.html; the PNG is written beside it)
set -euo pipefail
dir="${1:?usage: scripts/report-screenshot.sh DIR}"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "no chromium on PATH (Debian: apt-get install chromium)" >&2
  exit 2
fi
profile="$(mktemp -d)"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1000,1400 \
  --screenshot="$dir/report.png" "file://$(cd "$dir" && pwd)/report.html" >/dev/null 2>&1
rm -rf "$profile"
size=$(wc -c < "$dir/report.png")
# A blank white page of this size compresses to a few kilobytes; the report with its two charts is far larger.
if [ "$size" -lt 20000 ]; then
  echo "report.png is only $size bytes: the page did not render" >&2
  exit 1
fi
echo "rendered $dir/report.png ($size bytes)"
