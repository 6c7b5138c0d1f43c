#!/usr/bin/env bash
# Build the VM self-test initramfs.
# Usage: scripts/vm/mkinitramfs.sh OUT.cpio.gz [STATIC_DIR]   (default build/static)
#
# Contents: busybox (Debian's busybox-static) and /bin/sh, /init
# (scripts/vm/init), and the payload:
#   /koord/tests/00-probe     STATIC_DIR/probe (smoke test, runs first)
#   /koord/tests/01-skew      STATIC_DIR/skew if built (BPF vs ftrace clock skew)
#   /koord/tests/<name>       STATIC_DIR/tests/* and executables in tests/vm/
#                             (only the names in VM_TESTS, if it is set)
#   /koord/bin/<name>         STATIC_DIR/bin/* (on PATH inside the VM)
set -euo pipefail

out=${1:?usage: mkinitramfs.sh OUT.cpio.gz [STATIC_DIR]}
sdir=${2:-build/static}
here=$(dirname "$0")
stage=${out%.cpio.gz}-root   # (not *.d: the Makefile includes build/*/*.d)

[[ -x $sdir/probe ]] || { echo "mkinitramfs: $sdir/probe missing (make vm-static)" >&2; exit 1; }
[[ -x /bin/busybox ]] || { echo "mkinitramfs: /bin/busybox missing (busybox-static)" >&2; exit 1; }

rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,root,etc,koord/tests,koord/bin}
cp /bin/busybox "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"    # /init installs the other applet links at boot
install -m 0755 "$here/init" "$stage/init"
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
echo "root:x:0:" >"$stage/etc/group"

install -m 0755 "$sdir/probe" "$stage/koord/tests/00-probe"
[[ -x $sdir/skew ]] && install -m 0755 "$sdir/skew" "$stage/koord/tests/01-skew"
for f in "$sdir"/tests/* tests/vm/*; do
	[[ -f $f && -x $f ]] || continue
	if [[ -n ${VM_TESTS:-} && " $VM_TESTS " != *" ${f##*/} "* ]]; then
		continue
	fi
	install -m 0755 "$f" "$stage/koord/tests/${f##*/}"
done
for f in "$sdir"/bin/*; do
	[[ -f $f && -x $f ]] || continue
	install -m 0755 "$f" "$stage/koord/bin/${f##*/}"
done

# Static binaries only: a dynamically linked one would fail inside with ENOENT.
for f in "$stage"/koord/tests/* "$stage"/koord/bin/*; do
	[[ -e $f ]] || continue
	if readelf -l "$f" 2>/dev/null | grep -q 'Requesting program interpreter'; then
		echo "mkinitramfs: $f is dynamically linked" >&2
		exit 1
	fi
done

(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --reproducible --quiet) | gzip -6 >"$out.tmp"
mv "$out.tmp" "$out"
if [[ -n ${VM_TESTS:-} ]]; then
	for t in $VM_TESTS; do
		[[ -e $stage/koord/tests/$t ]] || { echo "mkinitramfs: VM_TESTS names $t, which is not built" >&2; exit 1; }
	done
fi
echo "mkinitramfs: $out ($(du -h "$out" | cut -f1)): $(ls "$stage/koord/tests" | tr '\n' ' ')" >&2
