#!/usr/bin/env bash
# Runs each native Go fuzz target of pkg/imageisa (the parsers of untrusted
# image bytes) for the given budget, one at a time: hack/fuzz.sh [budget],
# where the budget is seconds ("10", "10s", the default 10) or a count of
# inputs per target ("20000x"). A failing input is written under
# pkg/imageisa/testdata/fuzz/<FuzzName>/ by go test; commit it with the fix.
#
# A budget in seconds can end in a spurious "context deadline exceeded"
# failure: Go's fuzz coordinator before Go 1.27 races its own deadline
# against a worker still running an input (go.dev/issue/75804). That
# failure, when it is the only one and no failing input was written, is
# reported and not counted. A count has no deadline: CI uses one.
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${1:-10}"
if [[ "$budget" =~ ^([0-9]+)s?$ ]] && ((BASH_REMATCH[1] > 0)); then
	fuzztime="${BASH_REMATCH[1]}s"
elif [[ "$budget" =~ ^([0-9]+)x$ ]] && ((BASH_REMATCH[1] > 0)); then
	fuzztime="$budget"
else
	echo "usage: hack/fuzz.sh [budget]  (seconds such as 10 or 10s, or a count of inputs such as 20000x; got '$budget')" >&2
	exit 2
fi
GO="${GO:-go}"
pkg=./pkg/imageisa
corpus=pkg/imageisa/testdata/fuzz
targets=$("$GO" test -list '^Fuzz' "$pkg" | grep '^Fuzz')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in $targets; do
	echo "== $t ($fuzztime)"
	before=$(find "$corpus/$t" -type f 2>/dev/null | sort)
	rc=0
	"$GO" test -run '^$' -fuzz "^${t}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log" || rc=$?
	((rc == 0)) && continue
	after=$(find "$corpus/$t" -type f 2>/dev/null | sort)
	# The coordinator's race prints exactly this failure and nothing else
	# under the target's FAIL line, and writes no input.
	if [[ "$fuzztime" == *s && "$before" == "$after" ]] &&
		[[ "$(sed -n "/^--- FAIL: $t /,/^FAIL\$/p" "$log" | sed '1d;$d' | sed 's/^ *//')" == "context deadline exceeded" ]]; then
		echo "== $t: Go's fuzz coordinator ended on its own deadline (go.dev/issue/75804), no failing input: not counted"
		continue
	fi
	exit "$rc"
done
