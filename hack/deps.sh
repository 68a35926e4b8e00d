#!/usr/bin/env bash
# Installs the Debian packages the test suites and the demo need, when they are
# missing. Called by `make test`, `make demo`, `make bench` and .ci/run, so a
# newcomer on a fresh machine installs nothing by hand.
#   docker-registry: the image registry (distribution protocol) the suites and
#                    the demo push test images to.
#   gcc-riscv64-linux-gnu, binutils-riscv64-linux-gnu: build the RISC-V ELF
#                    fixtures of pkg/imageisa (hack/elf-fixtures.sh); its
#                    tests rebuild them and fail under CI=true without them.
#   binutils-riscv64-linux-gnu, binutils-aarch64-linux-gnu,
#   binutils-x86-64-linux-gnu: assemble the labeler's probe programs
#                    (hack/probes) that hack/images puts in its image.
# `hack/deps.sh node` (make test-node) also installs what the real node of
# test/node needs beside the binaries hack/controlplane.sh builds:
#   runc:                        the OCI runtime containerd's shim runs
#   containernetworking-plugins: bridge, host-local, loopback, portmap in /usr/lib/cni
#   iptables, conntrack:         kube-proxy (iptables mode) and the bridge plugin's masquerade
#   qemu-user-static:            the QEMU user-mode emulators the emulation specs register
#                                as binfmt_misc handlers (and pkg/probe's tests run directly);
#                                installing it registers nothing without binfmt-support
# Needs root or passwordless sudo to install; otherwise it prints the command.
set -euo pipefail

APT_PACKAGES=(docker-registry gcc-riscv64-linux-gnu binutils-riscv64-linux-gnu binutils-aarch64-linux-gnu binutils-x86-64-linux-gnu)
case "${1:-}" in
"") ;;
node) APT_PACKAGES+=(runc containernetworking-plugins iptables conntrack qemu-user-static) ;;
*)
	printf 'usage: %s [node]\n' "$0" >&2
	exit 2
	;;
esac

say() { printf 'deps: %s\n' "$*" >&2; }

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$pkg")
	fi
done
if ((${#missing[@]} == 0)); then
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	say "missing ${missing[*]} and no apt-get here: install the equivalent package (a registry binary named docker-registry on PATH)"
	exit 1
fi
sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
	if ! sudo -n true 2>/dev/null; then
		say "missing ${missing[*]}; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
		exit 1
	fi
	sudo=(sudo -n)
fi
say "apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q </dev/null >&2
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2
# The package enables a registry service on :5000; the suites run their own
# registries on loopback, so do not leave that one listening.
if command -v systemctl >/dev/null && systemctl is-active --quiet docker-registry 2>/dev/null; then
	say "stopping the docker-registry system service"
	"${sudo[@]}" systemctl stop docker-registry || true
fi
