#!/usr/bin/env bash
# Builds the pinned Kueue controller manager the leaf-group suite
# (test/leafgroup, docs/leaf-groups.md) runs, from the Go module proxy, reusing
# what is already built.
#
#   hack/kueue.sh                   build (once); print the directory
#   export ISAMATCH_KUEUE_ASSETS="$(hack/kueue.sh)"
#
# The directory holds the kueue binary, Kueue's CRDs (crd/*.yaml, from the
# module's config/components/crd/bases) and its webhook configurations
# (webhook/manifests.yaml): one version of each, from one module.
#
# The version comes from hack/kueue/go.mod, a module of its own so that the
# project's go.mod never depends on Kueue (nor on the k8s.io/kubernetes it
# pulls in). hack/kueue/go.sum starts from Kueue's own go.sum: one of its
# dependencies (sigs.k8s.io/scheduler-library v0.1.0-alpha1) is not in the
# checksum database, so `go mod tidy` there needs Kueue's recorded hash.
# Binaries land in ${ISAMATCH_CACHE:-$ROOT/.cache}/kueue/<version>/; a
# complete copy in $HOME/.cache/isamatch/kueue/<version>/ is reused by fresh
# clones, and every build is also copied there. A directory counts as complete
# only when its stamp file matches the current inputs (version, go.mod/go.sum,
# Go toolchain, platform, build flags).
#
# Progress goes to stderr; the last line on stdout is the absolute directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD_DIR="$ROOT/hack/kueue"
MODULE=sigs.k8s.io/kueue

log() { printf 'kueue: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=hack/lib/gobuild.sh
. "$ROOT/hack/lib/gobuild.sh"

command -v go >/dev/null || die "go not found in PATH; install Go $(sed -n 's/^go //p' "$MOD_DIR/go.mod") or newer"

VERSION="$(awk -v m="$MODULE" '$1 == "require" { $1 = ""; $0 = $0 } $1 == m && $2 ~ /^v/ { print $2; exit }' "$MOD_DIR/go.mod")"
[[ -n "$VERSION" ]] || die "cannot read the $MODULE version from $MOD_DIR/go.mod"

CACHE="${ISAMATCH_CACHE:-$ROOT/.cache}"
mkdir -p "$CACHE/kueue"
CACHE="$(cd "$CACHE" && pwd)"
OUT="$CACHE/kueue/$VERSION"
HOME_OUT="${HOME:-/root}/.cache/isamatch/kueue/$VERSION"

export GOWORK=off CGO_ENABLED=0
LDFLAGS="-s -w -X $MODULE/pkg/version.GitVersion=$VERSION -X $MODULE/pkg/version.GitCommit=module-$VERSION"
STAMP="$(
	printf 'kueue %s\ngo %s\nplatform %s/%s\n' "$VERSION" "$(go env GOVERSION)" "$(go env GOOS)" "$(go env GOARCH)"
	printf 'ldflags %s\nflags -trimpath CGO_ENABLED=0\n' "$LDFLAGS"
	cat "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" | sha256sum | sed 's/ .*//; s/^/modules /'
)"

# complete DIR succeeds when DIR holds the binary, the CRDs, the webhook
# manifests and a matching stamp.
complete() {
	[[ -f "$1/.stamp" ]] && [[ "$(cat "$1/.stamp")" == "$STAMP" ]] &&
		[[ -x "$1/kueue" && -f "$1/webhook/manifests.yaml" ]] &&
		compgen -G "$1/crd/*.yaml" >/dev/null
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

exec 9>"$CACHE/kueue/.lock"
if ! flock -n 9; then
	log "another build holds $CACHE/kueue/.lock; waiting"
	flock 9
fi

if complete "$OUT"; then
	log "$MODULE $VERSION: up to date in $OUT"
elif [[ "$HOME_OUT" != "$OUT" ]] && complete "$HOME_OUT"; then
	log "$MODULE $VERSION: reusing $HOME_OUT"
	install_copy "$HOME_OUT" "$OUT"
else
	log "building $MODULE/cmd/kueue $VERSION into $OUT"
	log "a cold build takes about 8 minutes on 2 cores after the control plane, beside kube-controller-manager (make demo; it pulls in k8s.io/kubernetes of its own release, and shares the rest with the control plane); later runs reuse it"
	TMP="$(mktemp -d "$CACHE/kueue/.tmp.XXXXXX")"
	chmod 0755 "$TMP"
	cleanup() {
		stop_heartbeat
		rm -rf "$TMP"
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	progress_build kueue "$MOD_DIR" "" "$TMP/.build.log" "$MODULE/cmd/kueue" -ldflags "$LDFLAGS" -o "$TMP/kueue"
	rm -f "$TMP/.build.log"
	src="$(cd "$MOD_DIR" && go list -mod=mod -m -f '{{.Dir}}' "$MODULE")"
	[[ -d "$src/config/components/crd/bases" ]] || die "$src has no config/components/crd/bases"
	mkdir -p "$TMP/crd" "$TMP/webhook"
	cp "$src"/config/components/crd/bases/*.yaml "$TMP/crd/"
	cp "$src/config/components/webhook/manifests.yaml" "$TMP/webhook/"
	chmod -R u+w "$TMP"
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
