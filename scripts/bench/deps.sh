#!/usr/bin/env bash
# Install the Debian packages `make bench` needs (peers and loads); only the missing ones.
set -euo pipefail

pkgs=(
	libbpf-tools	# runqlat, runqslower (libbpf CO-RE)
	bpftrace	# runqlat.bt
	rt-tests	# hackbench
	linux-perf	# perf bench sched pipe
	strace		# start-up phases
	bpftool python3
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "bench/deps.sh: missing packages: ${missing[*]}; run as root (sudo make bench)" >&2
	exit 1
fi
echo "bench/deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
