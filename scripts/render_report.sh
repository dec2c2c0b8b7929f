#!/usr/bin/env bash
# Look at an HTML report with headless Chromium, as a person would.
#   scripts/render_report.sh report/index.html report.png [W,H]   screenshot of a W x H window
#                                                                 (default 1400,2000)
#   scripts/render_report.sh --overflow report/index.html [W]     prints "SCROLL_WIDTH WINDOW_WIDTH"
#                                                                 of the page in a W-pixel-wide
#                                                                 window (default 1280, a laptop):
#                                                                 the page scrolls sideways when
#                                                                 the first is larger
# Exits 77 (the CTest/automake "skipped" code) when no Chromium is installed.
set -euo pipefail

usage() {
  echo "usage: $0 HTML PNG [W,H] | $0 --overflow HTML [W]" >&2
  exit 2
}
mode=shot
if [[ ${1:-} == --overflow ]]; then
  mode=overflow
  shift
  [[ $# -ge 1 && $# -le 2 ]] || usage
  html=$1
  width=${2:-1280}
  [[ $width =~ ^[1-9][0-9]*$ ]] || { echo "error: width must be a positive integer, got '$width'" >&2; exit 2; }
else
  [[ $# -ge 2 && $# -le 3 ]] || usage
  html=$1
  png=$2
  size=${3:-1400,2000}
  [[ $size =~ ^[1-9][0-9]*,[1-9][0-9]*$ ]] || { echo "error: size must be W,H in pixels, got '$size'" >&2; exit 2; }
fi
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
# A private profile directory keeps runs independent of each other and of any user profile.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile")

if [[ $mode == overflow ]]; then
  # A copy beside the page (so its images load) with a script that records the widths once laid
  # out; --dump-dom prints the DOM after the script ran. The report itself has no script.
  probe="$(dirname "$html_abs")/.overflow-probe-$$.html"
  trap 'rm -rf "$profile" "$probe"' EXIT
  sed 's#</body>#<script>window.addEventListener("load", () => document.body.setAttribute("data-widths", document.documentElement.scrollWidth + " " + window.innerWidth))</script></body>#' \
    "$html_abs" >"$probe"
  if ! dom=$("$browser" "${flags[@]}" --window-size="$width,800" --virtual-time-budget=5000 --dump-dom \
               "file://$probe" 2>"$profile/log"); then
    cat "$profile/log" >&2
    echo "error: $browser failed to load $html" >&2
    exit 1
  fi
  widths=$(grep -o 'data-widths="[0-9]* [0-9]*"' <<<"$dom" | head -n 1 | cut -d'"' -f2 || true)
  if [[ -z $widths ]]; then
    echo "error: no layout widths from $browser for $html" >&2
    exit 1
  fi
  echo "$widths"
  exit 0
fi

mkdir -p "$(dirname "$png")"
png_abs=$(realpath "$png")
rm -f "$png_abs"
# Chromium writes its own diagnostics on stderr even on success; keep them for a failure.
if ! "$browser" "${flags[@]}" --screenshot="$png_abs" --window-size="$size" \
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
