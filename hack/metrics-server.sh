#!/usr/bin/env bash
# Builds the pinned metrics-server from the Go module proxy, reusing what is
# already built: the real-node suite (test/node) packs it into an image and
# installs it with config/components/metrics-server, the component a user
# adds when the cluster has no metrics-server (docs/rebalancing.md).
#
#   hack/metrics-server.sh          build (once); print the directory
#   export ISAMATCH_METRICS_SERVER_ASSETS="$(hack/metrics-server.sh)"
#
# The directory holds the metrics-server binary. The version comes from
# hack/metrics-server/go.mod, a module of its own so that the project's
# go.mod never depends on metrics-server. That module replaces the
# Kubernetes libraries with the versions hack/controlplane.sh builds
# (v0.37.2) and this script builds with the same flags (-trimpath,
# CGO_ENABLED=0), so Go's build cache already holds most of what it
# compiles once the control plane is built. (v0.9.0 is the release that
# works with them: v0.8.0's generated OpenAPI names predate v0.36's
# and it exits at start.)
# Binaries land in ${ISAMATCH_CACHE:-$ROOT/.cache}/metrics-server/<version>/;
# a complete copy in $HOME/.cache/isamatch/metrics-server/<version>/ is
# reused by fresh clones, and every build is also copied there. A directory
# counts as complete only when its stamp file matches the current inputs
# (version, go.mod/go.sum, Go toolchain, platform, build flags).
#
# Progress goes to stderr; the last line on stdout is the absolute directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD_DIR="$ROOT/hack/metrics-server"
MODULE=sigs.k8s.io/metrics-server

log() { printf 'metrics-server: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "go not found in PATH; install Go $(sed -n 's/^go //p' "$MOD_DIR/go.mod") or newer"

VERSION="$(awk -v m="$MODULE" '$1 == "require" { $1 = ""; $0 = $0 } $1 == m && $2 ~ /^v/ { print $2; exit }' "$MOD_DIR/go.mod")"
[[ -n "$VERSION" ]] || die "cannot read the $MODULE version from $MOD_DIR/go.mod"

CACHE="${ISAMATCH_CACHE:-$ROOT/.cache}"
mkdir -p "$CACHE/metrics-server"
CACHE="$(cd "$CACHE" && pwd)"
OUT="$CACHE/metrics-server/$VERSION"
HOME_OUT="${HOME:-/root}/.cache/isamatch/metrics-server/$VERSION"

export GOWORK=off CGO_ENABLED=0
# As metrics-server's own Makefile: its version on client-go's version only.
# component-base's version is the Kubernetes release the libraries
# emulate; set to the metrics-server version it makes the API server
# library emulate Kubernetes 0.9 and metrics-server exits at start.
LDFLAGS="-s -w -X k8s.io/client-go/pkg/version.gitVersion=$VERSION -X k8s.io/client-go/pkg/version.gitCommit=module-$VERSION"
STAMP="$(
	printf 'metrics-server %s\ngo %s\nplatform %s/%s\n' "$VERSION" "$(go env GOVERSION)" "$(go env GOOS)" "$(go env GOARCH)"
	printf 'ldflags %s\nflags -trimpath CGO_ENABLED=0\n' "$LDFLAGS"
	cat "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" | sha256sum | sed 's/ .*//; s/^/modules /'
)"

# complete DIR succeeds when DIR holds the binary and a matching stamp.
complete() {
	[[ -f "$1/.stamp" ]] && [[ "$(cat "$1/.stamp")" == "$STAMP" ]] && [[ -x "$1/metrics-server" ]]
}

# install_copy SRC DST copies a complete directory atomically.
install_copy() {
	local tmp
	mkdir -p "$(dirname "$2")"
	tmp="$(mktemp -d "$(dirname "$2")/.tmp.XXXXXX")" || return 1
	chmod 0755 "$tmp"
	cp -pR "$1"/. "$tmp"/ || { rm -rf "$tmp"; return 1; }
	rm -rf "$2" && mv -T "$tmp" "$2"
}

exec 9>"$CACHE/metrics-server/.lock"
if ! flock -n 9; then
	log "another build holds $CACHE/metrics-server/.lock; waiting"
	flock 9
fi

if complete "$OUT"; then
	log "$MODULE $VERSION: up to date in $OUT"
elif [[ "$HOME_OUT" != "$OUT" ]] && complete "$HOME_OUT"; then
	log "$MODULE $VERSION: reusing $HOME_OUT"
	install_copy "$HOME_OUT" "$OUT"
else
	log "building $MODULE/cmd/metrics-server $VERSION into $OUT"
	log "a few minutes on 2 cores (most Kubernetes packages come from Go's build cache once hack/controlplane.sh has run); later runs reuse it"
	TMP="$(mktemp -d "$CACHE/metrics-server/.tmp.XXXXXX")"
	chmod 0755 "$TMP"
	trap 'rm -rf "$TMP"' EXIT
	trap 'exit 130' INT TERM
	start=$SECONDS
	(cd "$MOD_DIR" && go build -mod=mod -trimpath -gcflags=all=-dwarf=false -ldflags "$LDFLAGS" -o "$TMP/metrics-server" "$MODULE/cmd/metrics-server") ||
		die "go build $MODULE/cmd/metrics-server failed (GOPROXY=$(go env GOPROXY))"
	log "built in $((SECONDS - start))s"
	printf '%s\n' "$STAMP" >"$TMP/.stamp"
	rm -rf "$OUT"
	mv -T "$TMP" "$OUT"
	trap - EXIT INT TERM
	if [[ "$HOME_OUT" != "$OUT" ]]; then
		install_copy "$OUT" "$HOME_OUT" && log "copied to $HOME_OUT for later clones" ||
			log "warning: could not copy to $HOME_OUT"
	fi
fi

echo "$OUT"
