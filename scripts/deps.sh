#!/usr/bin/env bash
# Install the Debian packages koord-bpf needs to build, test and demo; only the missing ones.
set -euo pipefail

pkgs=(
	make gcc clang llvm pkg-config  # build
	libclang-rt-14-dev		  # clang's sanitizer and libFuzzer runtimes (only recommended by clang)
	libbpf-dev bpftool libelf-dev zlib1g-dev	# libbpf and skeletons
	libjson-c-dev libmicrohttpd-dev libncurses-dev	# JSON, HTTP, koord-top
	libcurl4-openssl-dev openssl	  # the kubelet client; test certificates
	libcmocka-dev valgrind		  # unit tests, sanitizer and valgrind runs
	stress-ng rt-tests trace-cmd tmux procps python3  # workloads, references, test checks
	python3-yaml			  # deploy/ manifest checks
	prometheus			  # promtool and a real Prometheus: the rules and the dashboard
)
# kubectl kustomize builds deploy/'s base; Debian's kubectl unless one is on the PATH already
command -v kubectl >/dev/null || pkgs+=(kubernetes-client)
# node and npm run the manifests' schema check (tests/deploy/schemas); Debian's unless present
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root (sudo make ...) to install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
