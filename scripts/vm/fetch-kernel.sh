#!/usr/bin/env bash
# Fetch one Debian kernel for the VM self-test and cache its vmlinuz.
#
# Usage: scripts/vm/fetch-kernel.sh KEY        (KEY: 6.1 | 5.10 | 6.12)
# Prints the cache directory (holding vmlinuz, config, info) on stdout;
# progress goes to stderr. Exits non-zero if the kernel cannot be had.
#
# The package is the current dependency of Debian's `linux-image-amd64`
# metapackage in the suite that carries that kernel series. It is only
# downloaded (`apt-get download`), never installed. 6.1 comes from the
# machine's own apt sources when they carry it (Debian 12); everything else
# through a temporary source list used for this download only, kept with its
# package lists under build/vm/apt/ and never added to the machine's sources.
#
# Environment: VM_DIR (default build/vm), VM_REFRESH=1 (re-resolve and
# re-download even if cached), VM_DEBIAN_MIRROR (default: the machine's
# Debian mirror, else http://deb.debian.org/debian).
set -euo pipefail

key=${1:?usage: fetch-kernel.sh 6.1|5.10|6.12}
VM_DIR=${VM_DIR:-build/vm}
case $key in
6.1)  specs=("system" "bookworm bookworm-security") ;;
5.10) specs=("bullseye bullseye-security") ;;
6.12) specs=("bookworm-backports" "trixie trixie-security") ;;
*) echo "fetch-kernel: unknown kernel '$key' (known: 6.1 5.10 6.12)" >&2; exit 2 ;;
esac

log() { echo "fetch-kernel[$key]: $*" >&2; }

kdir=$VM_DIR/kernels/$key
if [[ ${VM_REFRESH:-0} != 1 && -s $kdir/vmlinuz && -s $kdir/info ]]; then
	log "cached: $(. "$kdir/info"; echo "$PACKAGE $VERSION")"
	echo "$kdir"
	exit 0
fi

mirror=${VM_DEBIAN_MIRROR:-}
if [[ -z $mirror ]]; then
	mirror=$(grep -hoE 'https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list \
		/etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		head -n1 | tr -d ' ' || true)
	mirror=${mirror%/}
	mirror=${mirror:-http://deb.debian.org/debian}
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# apt options for a private source list; empty for the machine's own sources.
apt_opts=()
private_apt() {
	local name=${1// /+} s uri
	local d; d=$(realpath -m "$VM_DIR/apt/$name")
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	: >"$d/sources.list"
	for s in $1; do
		uri=$mirror
		[[ $s == *-security ]] && uri=${mirror%/debian}/debian-security
		echo "deb [signed-by=$keyring] $uri $s main" >>"$d/sources.list"
	done
	apt_opts=(-o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache"
		-o APT::Sandbox::User=root)
}
resolve() {   # prints the linux-image-<ver>-amd64 that linux-image-amd64 depends on
	apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }' || true
}

mkdir -p "$kdir"
dl=$kdir/download
rm -rf "$dl" && mkdir -p "$dl"
pkg=
for spec in "${specs[@]}"; do
	if [[ $spec == system ]]; then
		apt_opts=(-o APT::Sandbox::User=root)
		pkg=$(resolve)
		if [[ $pkg != linux-image-"$key".* ]]; then
			log "machine's apt lists give '${pkg:-nothing}', running apt-get update"
			apt-get -qq update >&2 || true
			pkg=$(resolve)
		fi
		where="the machine's apt sources"
	else
		private_apt "$spec"
		where="temporary source list ($mirror: $spec)"
		log "apt-get update with $where"
		apt-get -qq "${apt_opts[@]}" update >&2 || log "apt-get update reported errors for $spec"
		pkg=$(resolve)
	fi
	if [[ $pkg != linux-image-"$key".* ]]; then
		log "linux-image-amd64 in $where is '${pkg:-absent}', not $key.x"
		pkg=; continue
	fi
	log "downloading $pkg from $where"
	if (cd "$dl" && apt-get -qq "${apt_opts[@]}" download "$pkg" >&2); then
		break
	elif [[ $spec == system ]]; then   # stale lists: the package may be superseded
		log "download failed; apt-get update and resolve again"
		apt-get -qq update >&2 || true
		pkg=$(resolve)
		[[ $pkg == linux-image-"$key".* ]] &&
			(cd "$dl" && apt-get -qq "${apt_opts[@]}" download "$pkg" >&2) && break
	fi
	log "download of $pkg failed"
	pkg=
done
if [[ -z $pkg ]]; then
	log "could not fetch a $key kernel"
	exit 1
fi

deb=$(ls "$dl"/"$pkg"_*.deb)
rm -rf "$dl/x" && mkdir "$dl/x"
# Only ./boot is needed: skip the ~400 MB of modules a full `dpkg-deb -x` writes.
dpkg-deb --fsys-tarfile "$deb" | tar -xf - -C "$dl/x" ./boot
vmlinuz=$(ls "$dl"/x/boot/vmlinuz-*)
release=${vmlinuz##*/vmlinuz-}
cp "$vmlinuz" "$kdir/vmlinuz.new"
cp "$dl/x/boot/config-$release" "$kdir/config" 2>/dev/null || true
{
	printf 'PACKAGE=%q\nVERSION=%q\nRELEASE=%q\nSOURCE=%q\n' \
		"$pkg" "$(dpkg-deb -f "$deb" Version)" "$release" "$where"
} >"$kdir/info"
mv "$kdir/vmlinuz.new" "$kdir/vmlinuz"
rm -rf "$dl"
log "cached $pkg ($release) in $kdir"
echo "$kdir"
