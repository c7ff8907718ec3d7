#!/usr/bin/env bash
# Runs the benchmark program and prints its figures as a Markdown table,
# headed by the date, the machine and the exact command, for
# docs/benchmarks.md. Arguments go to the benchmark program, for example:
#
#   scripts/bench-table.sh -run '^runtime/manytomany$' -reps 9
#
# Only the lines that start with "bench " become rows; everything else the
# program prints (progress, notes) goes to standard error.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go run ./tests/bench "$@" | tee /dev/stderr >"$out"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || true)
echo
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores (${cpu:-unknown CPU}), $(uname -sr), $(go env GOVERSION),"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown):"
quote() { # an argument as a shell would need it, in single quotes if need be
	if [[ $1 =~ ^[A-Za-z0-9_./=:,+-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}
printf '`go run ./tests/bench'
for a in "$@"; do printf ' '; quote "$a"; done
printf '`\n\n'
echo "| benchmark | value | baseline | ratio | ratio_ci | pairs |"
echo "|---|---|---|---|---|---|"
awk '$1 == "bench" {
	name = $2; delete f
	for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2) }
	unit = ("unit" in f) ? " " f["unit"] : ""
	printf "| `%s` | %s%s | %s%s | %s | %s | %s |\n", name, f["value"], unit, f["baseline"], unit,
		f["ratio"], ("ratio_ci" in f) ? f["ratio_ci"] : "", ("pairs" in f) ? f["pairs"] : ""
}' "$out"
