#!/usr/bin/env bash
# Runs each native Go fuzz target of pkg/imageisa (the parsers of untrusted
# image bytes) for the given budget, one at a time: hack/fuzz.sh [seconds],
# default 10. A failing input is written under
# pkg/imageisa/testdata/fuzz/<FuzzName>/ by go test; commit it with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
if ! [[ "$secs" =~ ^[0-9]+$ ]] || (( secs < 1 )); then
	echo "usage: hack/fuzz.sh [seconds]  (a positive whole number, got '$secs')" >&2
	exit 2
fi
GO="${GO:-go}"
pkg=./pkg/imageisa
targets=$("$GO" test -list '^Fuzz' "$pkg" | grep '^Fuzz')
for t in $targets; do
	echo "== $t (${secs}s)"
	"$GO" test -run '^$' -fuzz "^${t}\$" -fuzztime "${secs}s" "$pkg"
done
