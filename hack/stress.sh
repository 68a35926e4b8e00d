#!/usr/bin/env bash
# Runs the README's two commands again and again on a fresh clone, quiet
# and beside busy CPU hogs, and prints how often each passed, per suite:
#
#   hack/stress.sh                  # make demo 10 times and make test 5 times, quiet, then with 2 hogs
#   hack/stress.sh -d 3 -t 1 -h 2   # 3 demos and 1 test run, with 2 hogs only
#
# -d N   make demo runs per condition (default 10)
# -t N   make test runs per condition (default 5)
# -h N   hogs: run only the condition with N busy processes (default: 0, then 2)
# -k     keep the clone and the logs (printed at the end)
#
# Not part of make test: one condition of the defaults takes hours on 2
# cores. The clone is of HEAD (commit first); built control planes and node
# binaries are reused from $HOME/.cache/isamatch as any fresh clone does.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

demos=10 tests=5 conditions=(0 2) keep=false
while getopts "d:t:h:k" opt; do
	case "$opt" in
	d) demos="$OPTARG" ;;
	t) tests="$OPTARG" ;;
	h) conditions=("$OPTARG") ;;
	k) keep=true ;;
	*)
		sed -n '2,14p' "$0" >&2
		exit 2
		;;
	esac
done
for n in "$demos" "$tests" "${conditions[@]}"; do
	[[ "$n" =~ ^[0-9]+$ ]] || {
		echo "stress: '$n' is not a whole number; see hack/stress.sh's header" >&2
		exit 2
	}
done

work="$(mktemp -d "${TMPDIR:-/tmp}/isamatch-stress-XXXXXX")"
clone="$work/clone"
git clone -q "$ROOT" "$clone"
echo "stress: fresh clone of $(git -C "$clone" rev-parse --short HEAD) in $clone; logs in $work"

hogs=()
stop_hogs() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	hogs=()
}
cleanup() {
	stop_hogs
	if ! $keep; then rm -rf "$work"; fi
}
trap cleanup EXIT

declare -A pass runs
record() { # key ok
	runs[$1]=$((${runs[$1]:-0} + 1))
	if [[ "$2" == 0 ]]; then pass[$1]=$((${pass[$1]:-0} + 1)); fi
}

for h in "${conditions[@]}"; do
	stop_hogs
	for ((i = 0; i < h; i++)); do
		(while :; do :; done) &
		hogs+=($!)
	done
	cond="hogs=$h"
	for ((i = 1; i <= demos; i++)); do
		log="$work/demo-$h-$i.log"
		rc=0
		(cd "$clone" && timeout 60m make demo) >"$log" 2>&1 </dev/null || rc=$?
		record "$cond make demo" "$rc"
		echo "stress: $cond make demo run $i: exit $rc ($log)"
	done
	for ((i = 1; i <= tests; i++)); do
		log="$work/test-$h-$i.log"
		rc=0
		# -count=1: a cached result of an earlier run would count as a pass.
		(cd "$clone" && timeout 80m make test GOTEST_FLAGS=-count=1) >"$log" 2>&1 </dev/null || rc=$?
		record "$cond make test" "$rc"
		echo "stress: $cond make test run $i: exit $rc ($log)"
		# Per package: go test prints "ok  <pkg>" or "FAIL	<pkg>".
		while read -r status pkg; do
			record "$cond   ${pkg#github.com/isamatch/isamatch/}" "$([[ $status == ok ]] && echo 0 || echo 1)"
		done < <(grep -E '^(ok|FAIL)[[:space:]]+github.com/isamatch/isamatch/(test|rebalance)' "$clone/.cache/test.log" | awk '{print $1, $2}')
	done
done
stop_hogs

echo
echo "passed / runs"
while IFS= read -r k; do
	printf '%-45s %s / %s\n' "$k" "${pass[$k]:-0}" "${runs[$k]}"
done < <(printf '%s\n' "${!runs[@]}" | sort)
$keep && echo "kept: $work"
fail=0
for k in "${!runs[@]}"; do [[ "${pass[$k]:-0}" == "${runs[$k]}" ]] || fail=1; done
exit $fail
