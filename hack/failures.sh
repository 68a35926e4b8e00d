#!/usr/bin/env bash
# failures.sh LOG: repeat, at the end of a failed `make test`, the lines of LOG
# that say what failed (go test's --- FAIL blocks, go vet's findings, ginkgo's [FAILED],
# [PANICKED] and [TIMEDOUT] messages, panics), so a CI log cut to its tail
# still shows why. Colour codes are stripped.
set -euo pipefail
log="${1:?usage: hack/failures.sh LOG}"
printf '\n==> what failed (repeated from %s)\n' "$log"
sed 's/\x1b\[[0-9;]*m//g' "$log" |
	grep -E -A14 '^\s*--- FAIL|\[FAILED\]|\[PANICKED\]|\[TIMEDOUT\]|^panic:|^FAIL\s|^# \[|^vet: ' |
	grep -v -E '^\s*$' |
	tail -n 120 || true
