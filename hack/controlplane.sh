#!/usr/bin/env bash
# Builds the pinned control-plane binaries the test suites run (kube-apiserver,
# kube-scheduler, etcd) from the Go module proxy, reusing what is already built.
#
#   hack/controlplane.sh            build if needed; print the directory
#   export KUBEBUILDER_ASSETS="$(hack/controlplane.sh)"
#
# The versions come from hack/controlplane/go.mod (a module of its own, so the
# project's go.mod never depends on k8s.io/kubernetes). Binaries land in
# ${ISAMATCH_CACHE:-$ROOT/.cache}/controlplane/<kube version>/; a complete copy
# in $HOME/.cache/isamatch/controlplane/<kube version>/ is reused by fresh
# clones, and every build is also copied there. A directory counts as complete
# only when its stamp file matches the current inputs (versions, go.mod/go.sum,
# Go toolchain, platform, build flags).
#
# Progress goes to stderr; the last line on stdout is the absolute directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD_DIR="$ROOT/hack/controlplane"
BINARIES=(etcd kube-apiserver kube-scheduler)

log() { printf 'controlplane: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "go not found in PATH; install Go $(sed -n 's/^go //p' "$MOD_DIR/go.mod") or newer"

# modversion MODULE prints the version hack/controlplane/go.mod requires.
modversion() {
	awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$MOD_DIR/go.mod"
}
KUBE_VERSION="$(modversion k8s.io/kubernetes)"
ETCD_VERSION="$(modversion go.etcd.io/etcd/server/v3)"
[[ -n "$KUBE_VERSION" && -n "$ETCD_VERSION" ]] || die "cannot read versions from $MOD_DIR/go.mod"

CACHE="${ISAMATCH_CACHE:-$ROOT/.cache}"
mkdir -p "$CACHE/controlplane"
CACHE="$(cd "$CACHE" && pwd)"
OUT="$CACHE/controlplane/$KUBE_VERSION"
HOME_OUT="${HOME:-/root}/.cache/isamatch/controlplane/$KUBE_VERSION"

export GOWORK=off CGO_ENABLED=0
GOOS_GOARCH="$(go env GOOS)/$(go env GOARCH)"
GO_VERSION="$(go env GOVERSION)"

# The release time of the pinned module is the build date: reproducible, and
# close to what the upstream release binaries report.
KUBE_DATE="$(cd "$MOD_DIR" && go list -m -f '{{if .Time}}{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' k8s.io/kubernetes 2>/dev/null || true)"
KUBE_DATE="${KUBE_DATE:-1970-01-01T00:00:00Z}"
KV="${KUBE_VERSION#v}"
KUBE_MAJOR="${KV%%.*}"
KUBE_MINOR="$(cut -d. -f2 <<<"$KV")"
KUBE_LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	KUBE_LDFLAGS+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$KUBE_MAJOR -X $pkg.gitMinor=$KUBE_MINOR"
	KUBE_LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$KUBE_DATE"
done
# etcd's version is a constant of go.etcd.io/etcd/api/v3/version; its git SHA
# is not in the module, so it says so rather than print a made-up one.
ETCD_LDFLAGS="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ETCD_VERSION"

STAMP="$(
	printf 'kubernetes %s\netcd %s\ngo %s\nplatform %s\n' "$KUBE_VERSION" "$ETCD_VERSION" "$GO_VERSION" "$GOOS_GOARCH"
	printf 'kube-ldflags %s\netcd-ldflags %s\nflags -trimpath CGO_ENABLED=0\n' "$KUBE_LDFLAGS" "$ETCD_LDFLAGS"
	cat "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" | sha256sum | sed 's/ .*//; s/^/modules /'
)"

# complete DIR succeeds when DIR holds every binary and a matching stamp.
complete() {
	local b
	[[ -f "$1/.stamp" ]] && [[ "$(cat "$1/.stamp")" == "$STAMP" ]] || return 1
	for b in "${BINARIES[@]}"; do [[ -x "$1/$b" ]] || return 1; done
}

# install_copy SRC DST copies a complete directory atomically: to a temporary
# sibling first, then renamed into place.
install_copy() {
	local tmp
	mkdir -p "$(dirname "$2")"
	tmp="$(mktemp -d "$(dirname "$2")/.tmp.XXXXXX")" || return 1
	chmod 0755 "$tmp"
	cp -p "$1"/* "$1/.stamp" "$tmp"/ || { rm -rf "$tmp"; return 1; }
	rm -rf "$2" && mv -T "$tmp" "$2"
}

# heartbeat BIN START logs every 30s while BIN compiles; on TERM it ends at
# once (a plain "while sleep" loop would wait for its sleep to finish).
heartbeat() {
	local s
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	while :; do
		sleep 30 &
		s=$!
		wait "$s"
		log "[$1] still compiling ($((SECONDS - $2))s)"
	done
}

# One build at a time per cache: a second caller waits, then finds it done.
exec 9>"$CACHE/controlplane/.lock"
if ! flock -n 9; then
	log "another build holds $CACHE/controlplane/.lock; waiting"
	flock 9
fi

if complete "$OUT"; then
	log "kubernetes $KUBE_VERSION, etcd $ETCD_VERSION: up to date in $OUT"
elif [[ "$HOME_OUT" != "$OUT" ]] && complete "$HOME_OUT"; then
	log "kubernetes $KUBE_VERSION, etcd $ETCD_VERSION: reusing $HOME_OUT"
	install_copy "$HOME_OUT" "$OUT"
else
	log "building kubernetes $KUBE_VERSION (kube-apiserver, kube-scheduler) and etcd $ETCD_VERSION into $OUT"
	log "a cold build takes about 6-10 minutes on 2 cores; later runs reuse it"
	TMP="$(mktemp -d "$CACHE/controlplane/.tmp.XXXXXX")"
	chmod 0755 "$TMP"
	HEARTBEAT=""
	cleanup() {
		[[ -n "$HEARTBEAT" ]] && kill "$HEARTBEAT" 2>/dev/null || true
		rm -rf "$TMP"
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	start_all=$SECONDS
	for bin in "${BINARIES[@]}"; do
		case "$bin" in
		etcd) pkg=go.etcd.io/etcd/server/v3 ldflags="$ETCD_LDFLAGS" ;;
		*) pkg="k8s.io/kubernetes/cmd/$bin" ldflags="$KUBE_LDFLAGS" ;;
		esac
		start=$SECONDS
		log "[$bin] go build $pkg"
		heartbeat "$bin" "$start" &
		HEARTBEAT=$!
		(cd "$MOD_DIR" && go build -mod=mod -trimpath -ldflags "$ldflags" -o "$TMP/$bin" "$pkg") ||
			die "go build $pkg failed (GOPROXY=$(go env GOPROXY))"
		kill "$HEARTBEAT" 2>/dev/null || true
		wait "$HEARTBEAT" 2>/dev/null || true
		HEARTBEAT=""
		log "[$bin] built in $((SECONDS - start))s: $("$TMP/$bin" --version 2>&1 | head -n1)"
	done
	printf '%s\n' "$STAMP" >"$TMP/.stamp"
	rm -rf "$OUT"
	mv -T "$TMP" "$OUT"
	trap - EXIT INT TERM
	log "all built in $((SECONDS - start_all))s"
	if [[ "$HOME_OUT" != "$OUT" ]]; then
		install_copy "$OUT" "$HOME_OUT" && log "copied to $HOME_OUT for later clones" ||
			log "warning: could not copy to $HOME_OUT"
	fi
fi

echo "$OUT"
