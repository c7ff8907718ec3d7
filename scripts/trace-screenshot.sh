#!/bin/sh
# Renders a jacobi2d run's trace as a PNG (docs/trace-jacobi2d.png) in
# Chrome DevTools' Performance panel, the trace viewer built into
# Chromium, headless and offline (scripts/trace-devtools.mjs).
#
# It installs what it needs: Chromium and Node.js from Debian with apt-get
# when they are missing (as root, or through sudo), and puppeteer-core
# from npm into a temporary directory that it removes.
#
# Why not Perfetto or chrome://tracing: Perfetto's UI is a web app served
# from ui.perfetto.dev (not on npm, not in Debian); Debian's Chromium 156
# lists chrome://tracing but no longer carries its viewer (the page fails
# with ERR_FAILED even with internal debugging pages enabled).
set -eu
cd "$(dirname "$0")/.."
out=${1:-docs/trace-jacobi2d.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

need() { # need COMMAND PACKAGE...: install the packages if COMMAND is missing
	cmd=$1
	shift
	command -v "$cmd" >/dev/null && return
	if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo=sudo; else
		echo "trace-screenshot: $cmd is missing and neither root nor sudo can install $*" >&2
		exit 1
	fi
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}
need chromium chromium fonts-dejavu-core
need node nodejs
need npm npm

cp scripts/trace-devtools.mjs "$tmp/"
(cd "$tmp" && npm install --silent --no-audit --no-fund --no-save puppeteer-core@25.16.0 >/dev/null)

# Two processes, so that arrows cross from node 0 to node 1.
go run ./examples/jacobi2d -p 4 -nodes 2 -grid 256 -blocks 4 -iters 200 -trace "$tmp/jacobi2d.json"
mkdir -p "$(dirname "$out")"
CHROMIUM=$(command -v chromium) node "$tmp/trace-devtools.mjs" "$tmp/jacobi2d.json" "$tmp/shot.png"
mv "$tmp/shot.png" "$out"
echo "trace-screenshot: wrote $out"
