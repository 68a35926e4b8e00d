# shellcheck shell=bash
# Sourced by hack/controlplane.sh and hack/kueue.sh: a `go build` of large
# modules that says how far it got while it runs. The sourcing script
# defines log and die.

# heartbeat LABEL START LOG TOTAL logs every 30s while a build runs: the
# packages compiled so far (go build -v names each one it compiles into
# LOG; cached ones are not compiled, so the count may end below TOTAL). On
# TERM it ends at once (a plain "while sleep" loop would wait for its
# sleep), and by itself once the script ($$) is gone.
heartbeat() {
	local s
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	while :; do
		# Without the script's pipes: a sleep left over by a TERM that came
		# before $! was read must not hold a caller's $(...) open.
		sleep 30 </dev/null >/dev/null 2>&1 &
		s=$!
		wait "$s"
		kill -0 $$ 2>/dev/null || exit 0
		log "[$1] $(wc -l <"$3" 2>/dev/null || echo 0) of at most $4 packages compiled ($((SECONDS - $2))s)"
	done
}

# stop_heartbeat ends the heartbeat of a build in progress, if any (for an
# interrupted script's cleanup too).
GOBUILD_HEARTBEAT=""
stop_heartbeat() {
	[[ -z "$GOBUILD_HEARTBEAT" ]] && return 0
	kill "$GOBUILD_HEARTBEAT" 2>/dev/null || true
	wait "$GOBUILD_HEARTBEAT" 2>/dev/null || true
	GOBUILD_HEARTBEAT=""
}

# progress_build LABEL DIR TAGS LOG "PKG..." GO-BUILD-FLAGS... builds the
# main packages PKG (one string, space-separated) in module DIR with
# `go build -v -mod=mod -trimpath -gcflags=all=-dwarf=false -tags TAGS
# GO-BUILD-FLAGS PKG...` (no debug information: the binaries are stripped
# with -ldflags '-s -w' anyway, and compiling without it takes about a
# fifth less time): first
# `go list -deps` of them for the total (it downloads the modules on first
# use), then the build with a heartbeat. The compiler's output goes to LOG;
# on failure its last lines (not the package names) are shown and the
# script dies.
progress_build() {
	local label="$1" dir="$2" tags="$3" blog="$4" start total rc=0
	local -a pkgs
	read -r -a pkgs <<<"$5"
	shift 5
	start=$SECONDS
	log "[$label] resolving packages in ${dir#"$ROOT"/} (the first run downloads the modules)"
	total="$(cd "$dir" && go list -mod=mod -tags "$tags" -deps "${pkgs[@]}" | wc -l)" ||
		die "go list ${pkgs[*]} failed (GOPROXY=$(go env GOPROXY))"
	log "[$label] go build: $total packages, $((SECONDS - start))s so far"
	: >"$blog"
	heartbeat "$label" "$start" "$blog" "$total" >&2 &
	GOBUILD_HEARTBEAT=$!
	(cd "$dir" && go build -v -mod=mod -trimpath -gcflags=all=-dwarf=false -tags "$tags" "$@" "${pkgs[@]}") 2>"$blog" || rc=$?
	stop_heartbeat
	if ((rc != 0)); then
		grep -v '^[-a-zA-Z0-9._~/]*$' "$blog" | tail -n 40 >&2 || true
		die "go build ${pkgs[*]} failed (GOPROXY=$(go env GOPROXY))"
	fi
	log "[$label] built in $((SECONDS - start))s ($(wc -l <"$blog") packages compiled)"
}
