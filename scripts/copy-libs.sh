#!/usr/bin/env bash
# copy-libs.sh BINARY ROOT: copy the shared libraries BINARY loads (ldd), and
# the loader, into ROOT at their paths (for the image: deploy/Dockerfile).
set -euo pipefail
bin=$1 root=$2
libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
[ -n "$libs" ] || { echo "copy-libs.sh: ldd found no libraries for $bin" >&2; exit 1; }
for l in $libs; do
	mkdir -p "$root$(dirname "$l")"
	cp -L "$l" "$root$l"
done
