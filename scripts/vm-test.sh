#!/usr/bin/env bash
# VM self-test: boot Debian kernels in qemu (TCG) with a busybox initramfs
# holding the project's statically linked BPF tests, and check the results.
# See docs/vm-test.md.
#
# Usage: scripts/vm-test.sh [--kernels "6.1 5.10 6.12"] [--timeout SECONDS]
#                           [--no-build] [--fetch-only] [--verbose] [--append ARGS]
# Environment equivalents: KERNELS, VM_TIMEOUT, VM_VERBOSE=1, VM_APPEND;
# VM_DIR (default build/vm), VM_STATIC_DIR (binaries for the initramfs,
# default build/static), VM_TESTS (names of the test programs to include,
# default all), VM_REFRESH=1 (re-fetch kernels), VM_MEM (MiB, default 1024),
# VM_SMP (default 2), VM_ACCEL (qemu -accel, default tcg,thread=single).
#
# Without --kernels every known kernel that can be fetched runs; 6.1 is
# required (no 6.1 -> failure), the others are skipped with a warning if they
# cannot be fetched. A kernel named explicitly must be fetched.
# Exit status: 0 only if every booted kernel reported VM-RESULT with 0 failed.
set -euo pipefail

cd "$(dirname "$0")/.."
KNOWN_KERNELS=(6.1 5.10 6.12)
REQUIRED_KERNEL=6.1
kernels=${KERNELS:-}
timeout_s=${VM_TIMEOUT:-600}	# the boot and every test: 190-250 s on 6.1 here
verbose=${VM_VERBOSE:-0}
append=${VM_APPEND:-}
build=1 fetch_only=0
export VM_DIR=${VM_DIR:-build/vm}

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit "${1:-0}"; }
while (($#)); do
	case $1 in
	--kernels) kernels=${2:?}; shift ;;
	--timeout) timeout_s=${2:?}; shift ;;
	--append) append=${2:?}; shift ;;
	--no-build) build=0 ;;
	--fetch-only) fetch_only=1 ;;
	--verbose|-v) verbose=1 ;;
	-h|--help) usage ;;
	*) echo "vm-test: unknown argument '$1'" >&2; usage 2 >&2 ;;
	esac
	shift
done

say() { echo "vm-test: $*"; }
die() { echo "vm-test: ERROR: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

explicit=1
if [[ -z $kernels ]]; then
	explicit=0
	kernels=${KNOWN_KERNELS[*]}
fi

# 1. Host packages (only the missing ones are installed).
scripts/vm/deps.sh

# 2. Static binaries (make vm-test already built them and passes --no-build).
if ((build && !fetch_only)); then
	t=$(now)
	if grep -qE '^[[:space:]]*-?include[[:space:]].*scripts/vm\.mk' Makefile; then
		make vm-static
	else
		make -f Makefile -f scripts/vm.mk vm-static
	fi
	say "static binaries built in $(since "$t") s"
fi

# 3. Kernels.
declare -A kdir=()
selected=() summary=()
t=$(now)
for k in $kernels; do
	if dir=$(scripts/vm/fetch-kernel.sh "$k"); then
		kdir[$k]=$dir
		selected+=("$k")
	elif [[ $k == "$REQUIRED_KERNEL" ]]; then
		die "the required $k kernel could not be fetched"
	elif ((explicit)); then
		die "kernel $k was requested but could not be fetched"
	else
		echo "vm-test: WARNING: optional kernel $k could not be fetched; skipping it" >&2
		summary+=("$k: SKIPPED (could not be fetched)")
	fi
done
if ((!explicit)) && [[ -z ${kdir[$REQUIRED_KERNEL]:-} ]]; then
	die "the required $REQUIRED_KERNEL kernel is missing"
fi
((${#selected[@]})) || die "no kernel selected"
say "kernels ready in $(since "$t") s: ${selected[*]}"
((fetch_only)) && exit 0

# 4. Initramfs.
t=$(now)
initrd=$VM_DIR/initramfs.cpio.gz
scripts/vm/mkinitramfs.sh "$initrd" "${VM_STATIC_DIR:-build/static}"
say "initramfs built in $(since "$t") s"

# 5. Boot each kernel in turn (2 host cores: one VM at a time).
# Single-threaded TCG: with one host thread per vCPU (qemu's default for x86
# TCG) the kernel's int3-based text patching is not kept coherent across the
# vCPUs, and guests died of int3 Oopses or soft lockups (docs/vm-test.md).
# Both vCPUs then take turns on one host thread; the guest still has 2 CPUs.
accel=${VM_ACCEL:-tcg,thread=single}
total_pass=0 total_fail=0 bad=0
for k in "${selected[@]}"; do
	release=$(. "${kdir[$k]}/info"; echo "$RELEASE")
	log=$VM_DIR/$k.log
	say "booting $k ($release), accel $accel, smp ${VM_SMP:-2}, timeout ${timeout_s}s, console -> $log"
	cmd=(qemu-system-x86_64 -accel "$accel" -cpu max -m "${VM_MEM:-1024}" -smp "${VM_SMP:-2}"
		-nographic -no-reboot -nic none
		-kernel "${kdir[$k]}/vmlinuz" -initrd "$initrd"
		-append "console=ttyS0 panic=-1 quiet $append")
	# The console log starts with the accel and the qemu command.
	{
		echo "vm-test: accel $accel, smp ${VM_SMP:-2}, $(qemu-system-x86_64 --version | head -n1)"
		echo "vm-test: qemu command: $(printf "%q " "${cmd[@]}")"
	} >"$log"
	t=$(now)
	set +e
	if ((verbose)); then
		echo "+ $(printf "%q " "${cmd[@]}")"
		# A terminal on stdin stays attached: with --append koord.shell=1 the
		# VM gives a shell instead of running the tests (Ctrl-A X quits qemu).
		if [[ -t 0 ]]; then input=/dev/stdin; else input=/dev/null; fi
		timeout -k 10 --foreground "$timeout_s" "${cmd[@]}" <"$input" 2>&1 | tee -a "$log"
		rc=${PIPESTATUS[0]}
	else
		timeout -k 10 "$timeout_s" "${cmd[@]}" </dev/null >>"$log" 2>&1
		rc=$?
	fi
	set -e
	secs=$(since "$t")
	# Plain text: drop CRs and the firmware's terminal escapes.
	sed -e 's/\r//g; s/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' "$log" >"$log.txt" && mv "$log.txt" "$log"

	result=$(grep -E '^VM-RESULT: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n1 || true)
	p=$(sed -E 's/^VM-RESULT: ([0-9]+) passed, ([0-9]+) failed.*/\1/' <<<"$result")
	f=$(sed -E 's/^VM-RESULT: ([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$result")
	problem=
	if ((rc == 124 || rc == 137)); then
		problem="TIMEOUT after ${timeout_s}s"
	elif grep -qE 'Kernel panic|(^|\] )(BUG|Oops)[: ]' "$log"; then
		problem="KERNEL PANIC/OOPS: $(grep -m1 -E 'Kernel panic|(^|\] )(BUG|Oops)[: ]' "$log")"
	elif [[ -z $result ]]; then
		problem="no VM-RESULT line (qemu exit $rc)"
	elif ((rc != 0)); then
		problem="qemu exited with status $rc"
	elif ((p + f == 0)); then
		problem="no test ran"
	fi
	if [[ -n $result ]]; then
		total_pass=$((total_pass + p)) total_fail=$((total_fail + f))
	fi
	uptime=$(sed -nE 's/^VM: tests done at uptime ([0-9.]+)s/\1/p' "$log" | tail -n1)
	if [[ -z $problem ]] && ((f == 0)); then
		line="$k ($release): PASS $p passed, $f failed; ${secs} s wall, guest uptime ${uptime:-?} s"
	else
		bad=$((bad + 1))
		[[ -n $problem ]] && [[ -z $result || $f == 0 ]] && total_fail=$((total_fail + 1))
		line="$k ($release): FAIL${result:+ ${result#VM-RESULT: }}${problem:+ [$problem]}; ${secs} s wall; log $log"
		echo "---- $log: failed tests and last lines ----" >&2
		grep -E '^VM-TEST-END: .* failed=[1-9]|FAIL|^not ok|VM: .*(FAILED|ABSENT)' "$log" >&2 || true
		echo "----" >&2
		tail -n 25 "$log" >&2
		echo "----" >&2
	fi
	say "$line"
	summary+=("$line")
done

echo
say "summary (${#selected[@]} kernel(s) booted, logs in $VM_DIR):"
for line in "${summary[@]}"; do echo "  $line"; done
echo "vm-test: $total_pass passed, $total_fail failed"
((bad == 0 && total_fail == 0))
