#!/bin/sh
# bench-charm-table.sh [FILE...]
#
# Reads the output of the bench program's charm/ family (files, or
# standard input), such as
#
#   CHARM_ANCHOR=/path/to/anchor go run ./tests/bench -run charm/ -reps 5 | tee charm.txt
#   scripts/bench-charm-table.sh charm.txt
#
# and prints a Markdown table: a row per figure, a column per target
# (2pe: one process; 2proc: two processes), each cell
# "Charm++ / ours (ratio, ratio_ci)" with the medians of the pairs. The
# ratio is ours ÷ Charm++: below 1 we are faster for a time (us, ms, s),
# above 1 for a rate (GUP/s). Lines of other benchmarks are ignored; a
# figure missing for a target (a run that failed or was skipped) shows "–".
awk '
$1 == "bench" && $2 ~ /^charm\// {
	name = $2
	target = name; sub(/.*\//, "", target)
	row = name; sub(/\/[^\/]*$/, "", row); sub(/^charm\//, "", row)
	delete kv
	for (i = 3; i <= NF; i++) {
		n = index($i, "=")
		if (n > 0) kv[substr($i, 1, n - 1)] = substr($i, n + 1)
	}
	if (!(row in unit)) order[++rows] = row
	unit[row] = kv["unit"]
	cell[row, target] = sprintf("%s / %s (%s, %s)", kv["baseline"], kv["value"], kv["ratio"], kv["ratio_ci"])
}
END {
	if (rows == 0) { print "bench-charm-table: no charm/ lines in the input" > "/dev/stderr"; exit 1 }
	print "| figure | unit | 2 PEs, one process: Charm++ / ours (ratio, ratio_ci) | 2 processes: Charm++ / ours (ratio, ratio_ci) |"
	print "|---|---|---|---|"
	for (i = 1; i <= rows; i++) {
		r = order[i]
		a = ((r, "2pe") in cell) ? cell[r, "2pe"] : "–"
		b = ((r, "2proc") in cell) ? cell[r, "2proc"] : "–"
		printf "| %s | %s | %s | %s |\n", r, unit[r], a, b
	}
}' "$@"
