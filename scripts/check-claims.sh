#!/usr/bin/env bash
# Checks that every claim ID used in a test name (TestT03_..., FuzzS01_...)
# is listed in docs/claims.md. Prints the missing IDs and exits 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
for id in $(grep -rhoE '^func (Test|Fuzz)[TCEXS][0-9]{2}_' --include='*_test.go' . |
	sed -E 's/^func (Test|Fuzz)//; s/_$//' | sort -u); do
	if ! grep -q "^| $id |" docs/claims.md; then
		echo "claim $id is used in a test name but not listed in docs/claims.md"
		missing=1
	fi
done
exit $missing
