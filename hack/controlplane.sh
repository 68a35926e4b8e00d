#!/usr/bin/env bash
# Builds the pinned Kubernetes binaries the test suites and the demo run from
# the Go module proxy, reusing what is already built.
#
#   hack/controlplane.sh [SET] [BINARY...]
#
#   hack/controlplane.sh            kube-apiserver, kube-scheduler, etcd; print the directory
#   export KUBEBUILDER_ASSETS="$(hack/controlplane.sh)"
#   hack/controlplane.sh node       the node suite's (test/node) kube-controller-manager,
#                                   kube-proxy, kubelet, kubectl, containerd and
#                                   containerd-shim-runc-v2; print their directory
#   hack/controlplane.sh node kube-controller-manager
#                                   only the named binaries of the set (what
#                                   `make demo` needs); the directory is the set's
#
# The versions come from hack/controlplane/go.mod, hack/node/go.mod (the same
# k8s.io/kubernetes, checked) and hack/containerd/go.mod: modules of their own,
# so the project's go.mod never depends on k8s.io/kubernetes or containerd.
# Binaries land in ${ISAMATCH_CACHE:-$ROOT/.cache}/<set>/<version>/ (set
# controlplane or node); binaries of a matching $HOME/.cache/isamatch/<set>/<version>/
# are reused by fresh clones, and every build is also copied there. A directory's
# binaries count only when its stamp file matches the current inputs
# (versions, go.mod/go.sum, Go toolchain, platform, build flags); a build of
# some binaries adds them to a directory whose stamp matches.
#
# The binaries of one module are built by one `go build`, so the packages
# they share compile once and both cores stay busy while one binary links.
#
# Progress goes to stderr; the last line on stdout is the absolute directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD_DIR="$ROOT/hack/controlplane"

log() { printf 'controlplane: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=hack/lib/gobuild.sh
. "$ROOT/hack/lib/gobuild.sh"

SET=controlplane
if [[ $# -gt 0 && ( "$1" == controlplane || "$1" == node ) ]]; then
	SET="$1"
	shift
fi
case "$SET" in
controlplane) ALL=(etcd kube-apiserver kube-scheduler) ;;
node) ALL=(containerd containerd-shim-runc-v2 kubelet kube-proxy kube-controller-manager kubectl) ;;
esac
# BINARIES are the ones asked for, in the set's order.
BINARIES=()
for want in "$@"; do
	[[ " ${ALL[*]} " == *" $want "* ]] ||
		die "$want: not a binary of the $SET set; usage: $0 [controlplane|node] [BINARY...] (controlplane: etcd kube-apiserver kube-scheduler; node: containerd containerd-shim-runc-v2 kubelet kube-proxy kube-controller-manager kubectl)"
done
for b in "${ALL[@]}"; do
	if [[ $# -eq 0 || " $* " == *" $b "* ]]; then BINARIES+=("$b"); fi
done
NODE_MOD_DIR="$ROOT/hack/node"
CONTAINERD_MOD_DIR="$ROOT/hack/containerd"

command -v go >/dev/null || die "go not found in PATH; install Go $(sed -n 's/^go //p' "$MOD_DIR/go.mod") or newer"

# modversion MODULE [DIR] prints the version DIR/go.mod (default
# hack/controlplane) requires.
modversion() {
	awk -v m="$1" '$1 == "require" { $1 = ""; $0 = $0 } $1 == m && $2 ~ /^v/ { print $2; exit }' "${2:-$MOD_DIR}/go.mod"
}
PINNED_KUBE_VERSION="$(modversion k8s.io/kubernetes)"
ETCD_VERSION="$(modversion go.etcd.io/etcd/server/v3)"
[[ -n "$PINNED_KUBE_VERSION" && -n "$ETCD_VERSION" ]] || die "cannot read versions from $MOD_DIR/go.mod"
KUBE_VERSION="${KUBE_VERSION:-$PINNED_KUBE_VERSION}"
[[ "$KUBE_VERSION" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "KUBE_VERSION=$KUBE_VERSION: want a release vMAJOR.MINOR.PATCH such as v1.31.14 (go list -m -versions k8s.io/kubernetes lists them)"
if [[ "$SET" == node && "$KUBE_VERSION" != "$PINNED_KUBE_VERSION" ]]; then
	die "KUBE_VERSION=$KUBE_VERSION: the node set is built only at the pinned $PINNED_KUBE_VERSION; unset KUBE_VERSION"
fi
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

# KUBE_MOD_DIR is the module kube-apiserver and kube-scheduler are built
# from: hack/controlplane at the pinned version; for a KUBE_VERSION override,
# a module generated under $CACHE/controlplane/modules/<version> requiring
# that k8s.io/kubernetes alone, with its staging modules replaced by their
# matching v0.MINOR.PATCH releases as k8s.io/kubernetes itself does. etcd
# stays the pinned one (the API server speaks etcd's stable v3 API).
KUBE_MOD_DIR="$MOD_DIR"
if [[ "$KUBE_VERSION" != "$PINNED_KUBE_VERSION" ]]; then
	KUBE_MOD_DIR="$CACHE/$SET/modules/$KUBE_VERSION"
	if [[ ! -f "$KUBE_MOD_DIR/go.sum" ]]; then
		log "generating the module of kubernetes $KUBE_VERSION in $KUBE_MOD_DIR"
		upstream="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
		[[ -f "$upstream" ]] || die "k8s.io/kubernetes@$KUBE_VERSION: not on the module proxy ($(go env GOPROXY)); go list -m -versions k8s.io/kubernetes lists what is"
		staging="$(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$upstream")"
		[[ -n "$staging" ]] || die "k8s.io/kubernetes@$KUBE_VERSION: no staging replacements in its go.mod"
		tmp="$(mktemp -d "$CACHE/$SET/.mod.XXXXXX")"
		{
			printf '// Generated by hack/controlplane.sh for KUBE_VERSION=%s.\n' "$KUBE_VERSION"
			printf 'module github.com/isamatch/isamatch/hack/controlplane/generated\n\ngo %s\n\n' "$(sed -n 's/^go //p' "$MOD_DIR/go.mod")"
			printf 'require k8s.io/kubernetes %s\n\nreplace (\n' "$KUBE_VERSION"
			for m in $staging; do printf '\t%s => %s v0.%s\n' "$m" "$m" "${KUBE_VERSION#v1.}"; done
			printf ')\n'
		} >"$tmp/go.mod"
		printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver"\n\t_ "k8s.io/kubernetes/cmd/kube-scheduler"\n)\n' >"$tmp/tools.go"
		(cd "$tmp" && go mod tidy >&2) || { rm -rf "$tmp"; die "go mod tidy of kubernetes $KUBE_VERSION failed"; }
		mkdir -p "$(dirname "$KUBE_MOD_DIR")"
		rm -rf "$KUBE_MOD_DIR" && mv -T "$tmp" "$KUBE_MOD_DIR"
	fi
fi
GOOS_GOARCH="$(go env GOOS)/$(go env GOARCH)"
GO_VERSION="$(go env GOVERSION)"

# The release time of the pinned module is the build date: reproducible, and
# close to what the upstream release binaries report.
KUBE_DATE="$(cd "$KUBE_MOD_DIR" && go list -m -f '{{if .Time}}{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' k8s.io/kubernetes 2>/dev/null || true)"
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
		mods=("$MOD_DIR/go.mod" "$MOD_DIR/go.sum")
		[[ "$KUBE_MOD_DIR" == "$MOD_DIR" ]] || mods+=("$KUBE_MOD_DIR/go.mod" "$KUBE_MOD_DIR/go.sum")
		cat "${mods[@]}" | sha256sum | sed 's/ .*//; s/^/modules /'
	)"
fi

# stamped DIR succeeds when DIR's stamp matches the current inputs.
stamped() { [[ -f "$1/.stamp" ]] && [[ "$(cat "$1/.stamp")" == "$STAMP" ]]; }

# has DIR BIN succeeds when DIR is stamped and holds BIN.
has() { stamped "$1" && [[ -x "$1/$2" ]]; }

# merge SRC DST BIN... puts the binaries BIN of SRC into DST: beside the ones
# DST already holds when DST's stamp matches (each file renamed into place,
# so a running binary is never overwritten), else as a fresh directory that
# replaces DST whole (built in a temporary sibling, then renamed).
merge() {
	local src="$1" dst="$2" b tmp
	shift 2
	mkdir -p "$(dirname "$dst")"
	if stamped "$dst"; then
		for b in "$@"; do
			cp -p "$src/$b" "$dst/.$b.tmp" && mv -f "$dst/.$b.tmp" "$dst/$b" || return 1
		done
		return 0
	fi
	tmp="$(mktemp -d "$(dirname "$dst")/.tmp.XXXXXX")" || return 1
	chmod 0755 "$tmp"
	for b in "$@"; do cp -p "$src/$b" "$tmp/" || { rm -rf "$tmp"; return 1; }; done
	printf '%s\n' "$STAMP" >"$tmp/.stamp"
	rm -rf "$dst" && mv -T "$tmp" "$dst"
}

# pkgof BIN prints BIN's main package, modof BIN the module directory it is
# built from, tagsof BIN its build tags and ldflagsof BIN its linker flags.
pkgof() {
	case "$1" in
	etcd) echo go.etcd.io/etcd/server/v3 ;;
	containerd*) echo "github.com/containerd/containerd/v2/cmd/$1" ;;
	*) echo "k8s.io/kubernetes/cmd/$1" ;;
	esac
}
modof() {
	case "$1" in
	etcd) echo "$MOD_DIR" ;;
	containerd*) echo "$CONTAINERD_MOD_DIR" ;;
	*) if [[ "$SET" == node ]]; then echo "$NODE_MOD_DIR"; else echo "$KUBE_MOD_DIR"; fi ;;
	esac
}
tagsof() { case "$1" in containerd*) echo "$CONTAINERD_TAGS" ;; esac; }
ldflagsof() {
	case "$1" in
	etcd) echo "$ETCD_LDFLAGS" ;;
	containerd*) echo "$CONTAINERD_LDFLAGS" ;;
	*) echo "$KUBE_LDFLAGS" ;;
	esac
}

# build_group DIR BIN... builds the binaries BIN, all of module DIR with the
# same tags, into $TMP with one `go build` (each main package with its own
# -ldflags), then renames each to BIN and logs its version.
build_group() {
	local dir="$1" b pkg pkgs=()
	shift
	local flags=()
	for b in "$@"; do
		pkg="$(pkgof "$b")"
		pkgs+=("$pkg")
		flags+=(-ldflags "$pkg=$(ldflagsof "$b")")
	done
	mkdir -p "$TMP/.out"
	progress_build "$*" "$dir" "$(tagsof "$1")" "$TMP/.build.log" "${pkgs[*]}" "${flags[@]}" -o "$TMP/.out/"
	for b in "$@"; do
		pkg="$(pkgof "$b")"
		# go build names a binary after its package's last element, the
		# one before a major version suffix (go.etcd.io/etcd/server/v3: server).
		[[ "$pkg" =~ /v[0-9]+$ ]] && pkg="${pkg%/*}"
		mv "$TMP/.out/${pkg##*/}" "$TMP/$b"
		case "$b" in
		kubectl) version=(version --client) ;;
		containerd-shim-runc-v2) version=(-v) ;;
		*) version=(--version) ;;
		esac
		log "[$b] $("$TMP/$b" "${version[@]}" 2>&1 | head -n3 | tr -s '\n\t ' ' ')"
	done
}

# One build of a version at a time per cache: a second caller waits, then
# finds it done.
exec 9>"$CACHE/$SET/.lock-$VERSION_DIR"
if ! flock -n 9; then
	log "another build holds $CACHE/$SET/.lock-$VERSION_DIR; waiting"
	flock 9
fi

if [[ "$SET" == node ]]; then
	WHAT="kubernetes $KUBE_VERSION node binaries, containerd $CONTAINERD_VERSION"
else
	WHAT="kubernetes $KUBE_VERSION, etcd $ETCD_VERSION"
fi
MISSING=()
for b in "${BINARIES[@]}"; do has "$OUT" "$b" || MISSING+=("$b"); done
if ((${#MISSING[@]} == 0)); then
	log "$WHAT: ${BINARIES[*]} up to date in $OUT"
else
	TMP="$(mktemp -d "$CACHE/$SET/.tmp.XXXXXX")"
	chmod 0755 "$TMP"
	cleanup() {
		stop_heartbeat
		rm -rf "$TMP"
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	REUSED=() BUILD=()
	for b in "${MISSING[@]}"; do
		if [[ "$HOME_OUT" != "$OUT" ]] && has "$HOME_OUT" "$b"; then
			cp -p "$HOME_OUT/$b" "$TMP/"
			REUSED+=("$b")
		else
			BUILD+=("$b")
		fi
	done
	((${#REUSED[@]} == 0)) || log "$WHAT: reusing ${REUSED[*]} from $HOME_OUT"
	if ((${#BUILD[@]} > 0)); then
		log "building $WHAT (${BUILD[*]}) into $OUT"
		if [[ "$SET" == node ]]; then
			log "a cold build of the whole set takes about 5 minutes on 2 cores after the control plane's; later runs reuse it"
		else
			log "a cold build takes about 13 minutes on 2 cores, about 20 beside Kueue's (make test, make demo); later runs reuse it"
		fi
		start_all=$SECONDS
		# One `go build` per module and tag set, in the set's order.
		groups=()
		for b in "${BUILD[@]}"; do
			g="$(modof "$b")|$(tagsof "$b")"
			[[ " ${groups[*]-} " == *" $g "* ]] || groups+=("$g")
		done
		for g in "${groups[@]}"; do
			members=()
			for b in "${BUILD[@]}"; do [[ "$(modof "$b")|$(tagsof "$b")" == "$g" ]] && members+=("$b"); done
			build_group "${g%%|*}" "${members[@]}"
		done
		log "all built in $((SECONDS - start_all))s"
	fi
	merge "$TMP" "$OUT" "${MISSING[@]}" || die "could not install into $OUT"
	if ((${#BUILD[@]} > 0)) && [[ "$HOME_OUT" != "$OUT" ]]; then
		merge "$TMP" "$HOME_OUT" "${BUILD[@]}" && log "copied ${BUILD[*]} to $HOME_OUT for later clones" ||
			log "warning: could not copy to $HOME_OUT"
	fi
	cleanup
	trap - EXIT INT TERM
fi

echo "$OUT"
