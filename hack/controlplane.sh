#!/usr/bin/env bash
# Builds the pinned Kubernetes binaries the test suites run from the Go module
# proxy, reusing what is already built.
#
#   hack/controlplane.sh            kube-apiserver, kube-scheduler, etcd; print the directory
#   export KUBEBUILDER_ASSETS="$(hack/controlplane.sh)"
#   hack/controlplane.sh node       the node suite's (test/node) kube-controller-manager,
#                                   kube-proxy, kubelet, kubectl, containerd and
#                                   containerd-shim-runc-v2; print their directory
#
# The versions come from hack/controlplane/go.mod, hack/node/go.mod (the same
# k8s.io/kubernetes, checked) and hack/containerd/go.mod: modules of their own,
# so the project's go.mod never depends on k8s.io/kubernetes or containerd.
# Binaries land in ${ISAMATCH_CACHE:-$ROOT/.cache}/<set>/<version>/ (set
# controlplane or node); a complete copy in $HOME/.cache/isamatch/<set>/<version>/
# is reused by fresh clones, and every build is also copied there. A directory
# counts as complete only when its stamp file matches the current inputs
# (versions, go.mod/go.sum, Go toolchain, platform, build flags).
#
# Progress goes to stderr; the last line on stdout is the absolute directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD_DIR="$ROOT/hack/controlplane"
SET="${1:-controlplane}"
case "$SET" in
controlplane) BINARIES=(etcd kube-apiserver kube-scheduler) ;;
node) BINARIES=(containerd containerd-shim-runc-v2 kubelet kube-proxy kube-controller-manager kubectl) ;;
*)
	printf 'usage: %s [controlplane|node]\n' "$0" >&2
	exit 2
	;;
esac
NODE_MOD_DIR="$ROOT/hack/node"
CONTAINERD_MOD_DIR="$ROOT/hack/containerd"

log() { printf 'controlplane: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "go not found in PATH; install Go $(sed -n 's/^go //p' "$MOD_DIR/go.mod") or newer"

# modversion MODULE [DIR] prints the version DIR/go.mod (default
# hack/controlplane) requires.
modversion() {
	awk -v m="$1" '$1 == "require" { $1 = ""; $0 = $0 } $1 == m && $2 ~ /^v/ { print $2; exit }' "${2:-$MOD_DIR}/go.mod"
}
KUBE_VERSION="$(modversion k8s.io/kubernetes)"
ETCD_VERSION="$(modversion go.etcd.io/etcd/server/v3)"
[[ -n "$KUBE_VERSION" && -n "$ETCD_VERSION" ]] || die "cannot read versions from $MOD_DIR/go.mod"
if [[ "$SET" == node ]]; then
	node_kube="$(modversion k8s.io/kubernetes "$NODE_MOD_DIR")"
	[[ "$node_kube" == "$KUBE_VERSION" ]] ||
		die "hack/node/go.mod requires k8s.io/kubernetes ${node_kube:-nothing}, hack/controlplane/go.mod $KUBE_VERSION: run (cd hack/node && go get k8s.io/kubernetes@$KUBE_VERSION && go mod tidy)"
	CONTAINERD_VERSION="$(modversion github.com/containerd/containerd/v2 "$CONTAINERD_MOD_DIR")"
	[[ -n "$CONTAINERD_VERSION" ]] || die "cannot read the containerd version from $CONTAINERD_MOD_DIR/go.mod"
	VERSION_DIR="$KUBE_VERSION-containerd-$CONTAINERD_VERSION"
else
	VERSION_DIR="$KUBE_VERSION"
fi

CACHE="${ISAMATCH_CACHE:-$ROOT/.cache}"
mkdir -p "$CACHE/$SET"
CACHE="$(cd "$CACHE" && pwd)"
OUT="$CACHE/$SET/$VERSION_DIR"
HOME_OUT="${HOME:-/root}/.cache/isamatch/$SET/$VERSION_DIR"

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
# containerd without cgo: no btrfs snapshotter (it needs cgo and libbtrfs);
# overlayfs and native, which the node suite uses, are pure Go.
CONTAINERD_TAGS="no_btrfs"
CONTAINERD_LDFLAGS="-s -w -X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION:-} -X github.com/containerd/containerd/v2/version.Revision=module-${CONTAINERD_VERSION:-}"

if [[ "$SET" == node ]]; then
	STAMP="$(
		printf 'kubernetes %s\ncontainerd %s\ngo %s\nplatform %s\n' "$KUBE_VERSION" "$CONTAINERD_VERSION" "$GO_VERSION" "$GOOS_GOARCH"
		printf 'kube-ldflags %s\ncontainerd-ldflags %s\ncontainerd-tags %s\nflags -trimpath CGO_ENABLED=0\n' "$KUBE_LDFLAGS" "$CONTAINERD_LDFLAGS" "$CONTAINERD_TAGS"
		cat "$NODE_MOD_DIR/go.mod" "$NODE_MOD_DIR/go.sum" "$CONTAINERD_MOD_DIR/go.mod" "$CONTAINERD_MOD_DIR/go.sum" | sha256sum | sed 's/ .*//; s/^/modules /'
	)"
else
	STAMP="$(
		printf 'kubernetes %s\netcd %s\ngo %s\nplatform %s\n' "$KUBE_VERSION" "$ETCD_VERSION" "$GO_VERSION" "$GOOS_GOARCH"
		printf 'kube-ldflags %s\netcd-ldflags %s\nflags -trimpath CGO_ENABLED=0\n' "$KUBE_LDFLAGS" "$ETCD_LDFLAGS"
		cat "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" | sha256sum | sed 's/ .*//; s/^/modules /'
	)"
fi

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
exec 9>"$CACHE/$SET/.lock"
if ! flock -n 9; then
	log "another build holds $CACHE/$SET/.lock; waiting"
	flock 9
fi

if [[ "$SET" == node ]]; then
	WHAT="kubernetes $KUBE_VERSION node binaries, containerd $CONTAINERD_VERSION"
else
	WHAT="kubernetes $KUBE_VERSION, etcd $ETCD_VERSION"
fi
if complete "$OUT"; then
	log "$WHAT: up to date in $OUT"
elif [[ "$HOME_OUT" != "$OUT" ]] && complete "$HOME_OUT"; then
	log "$WHAT: reusing $HOME_OUT"
	install_copy "$HOME_OUT" "$OUT"
else
	log "building $WHAT (${BINARIES[*]}) into $OUT"
	if [[ "$SET" == node ]]; then
		log "a cold build takes 15-30 minutes on 2 cores after the control plane's; later runs reuse it"
	else
		log "a cold build takes about 6-10 minutes on 2 cores; later runs reuse it"
	fi
	TMP="$(mktemp -d "$CACHE/$SET/.tmp.XXXXXX")"
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
		dir="$MOD_DIR" tags=""
		case "$bin" in
		etcd) pkg=go.etcd.io/etcd/server/v3 ldflags="$ETCD_LDFLAGS" ;;
		containerd*) pkg="github.com/containerd/containerd/v2/cmd/$bin" ldflags="$CONTAINERD_LDFLAGS" dir="$CONTAINERD_MOD_DIR" tags="$CONTAINERD_TAGS" ;;
		*) pkg="k8s.io/kubernetes/cmd/$bin" ldflags="$KUBE_LDFLAGS" ;;
		esac
		[[ "$SET" == node && "$dir" == "$MOD_DIR" ]] && dir="$NODE_MOD_DIR"
		start=$SECONDS
		log "[$bin] go build $pkg"
		heartbeat "$bin" "$start" &
		HEARTBEAT=$!
		(cd "$dir" && go build -mod=mod -trimpath -tags "$tags" -ldflags "$ldflags" -o "$TMP/$bin" "$pkg") ||
			die "go build $pkg failed (GOPROXY=$(go env GOPROXY))"
		kill "$HEARTBEAT" 2>/dev/null || true
		wait "$HEARTBEAT" 2>/dev/null || true
		HEARTBEAT=""
		case "$bin" in
		kubectl) version=(version --client) ;;
		containerd-shim-runc-v2) version=(-v) ;;
		*) version=(--version) ;;
		esac
		log "[$bin] built in $((SECONDS - start))s: $("$TMP/$bin" "${version[@]}" 2>&1 | head -n3 | tr -s '\n\t ' ' ')"
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
