#!/bin/sh
# Renders a jacobi2d run's trace as a PNG (docs/trace-jacobi2d.png) with
# headless Chromium from Debian, installing it with apt-get if it is
# missing (as root, or through sudo).
#
# Perfetto's UI (ui.perfetto.dev) is a web app loaded from the internet;
# where there is none, this script draws the trace itself as a static SVG
# timeline (scripts/tracehtml) and photographs that instead.
set -eu
cd "$(dirname "$0")/.."
out=${1:-docs/trace-jacobi2d.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
	if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo=sudo; else
		echo "trace-screenshot: chromium is missing and neither root nor sudo can install it" >&2; exit 1
	fi
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
	chrome=$(command -v chromium)
fi

go run ./examples/jacobi2d -p 4 -grid 256 -blocks 4 -iters 200 -trace "$tmp/jacobi2d.json"
go run ./scripts/tracehtml -in "$tmp/jacobi2d.json" -out "$tmp/jacobi2d.html" -span "${SPAN:-3000}" -from "${FROM:--1}" -title "jacobi2d -p 4 -grid 256 -blocks 4"
mkdir -p "$(dirname "$out")"
"$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1230,262 \
	--screenshot="$tmp/shot.png" "file://$tmp/jacobi2d.html" 2>/dev/null
mv "$tmp/shot.png" "$out"
echo "trace-screenshot: wrote $out"
