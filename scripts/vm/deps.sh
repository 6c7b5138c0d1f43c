#!/usr/bin/env bash
# Install the Debian packages the VM self-test needs, only those missing.
# Usage: scripts/vm/deps.sh [extra-package ...]
set -euo pipefail

pkgs=(
	qemu-system-x86 busybox-static cpio          # boot + initramfs
	clang bpftool gcc make                       # probe + static test binaries
	libbpf-dev libelf-dev zlib1g-dev libjson-c-dev
	"$@"
)
# A libelf.a built against zstd (elfutils >= 0.189 on newer Debian) needs libzstd.a too.
libelf_a=$(gcc -print-file-name=libelf.a 2>/dev/null || true)
if [[ -f $libelf_a ]] && nm -u "$libelf_a" 2>/dev/null | grep -q ' ZSTD_'; then
	pkgs+=(libzstd-dev)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "vm-deps: installing missing packages: ${missing[*]}"
if [[ $(id -u) != 0 ]]; then
	echo "vm-deps: need root to install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}"; then
	apt-get update
	apt-get install -y --no-install-recommends "${missing[@]}"
fi
