#!/usr/bin/env bash
# Screenshot an HTML report with headless Chromium, to look at it as a person would.
#   scripts/render_report.sh report/index.html report.png
# Exits 77 (the CTest/automake "skipped" code) when no Chromium is installed.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 HTML PNG" >&2
  exit 2
fi
html=$1
png=$2
if [[ ! -f $html ]]; then
  echo "error: $html: no such file" >&2
  exit 2
fi

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [[ -z $browser ]]; then
  echo "skipped: chromium not found"
  exit 77
fi

html_abs=$(realpath "$html")
mkdir -p "$(dirname "$png")"
png_abs=$(realpath "$png")
rm -f "$png_abs"
# A private profile directory keeps runs independent of each other and of any user profile.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# Chromium writes its own diagnostics on stderr even on success; keep them for a failure.
if ! "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
     --user-data-dir="$profile" --screenshot="$png_abs" --window-size=1400,2000 \
     "file://$html_abs" >"$profile/log" 2>&1; then
  cat "$profile/log" >&2
  echo "error: $browser failed to render $html" >&2
  exit 1
fi
if [[ ! -s $png_abs ]]; then
  cat "$profile/log" >&2
  echo "error: $browser produced no screenshot at $png" >&2
  exit 1
fi
echo "$png"
