#!/usr/bin/env bash
# Run the unit tests and the end-to-end daemon tests (test_enforce and
# test_faults, against the sanitized daemon) from an ASan+UBSan build in $1. Any sanitizer report, from
# any process (the daemon included), fails the stage: ASan's are written to
# $1/reports/, UBSan's (GCC's runtime ignores log_path) are found in the
# tests' output and the daemon's log; all are printed at the end.
set -u
cd "$(dirname "$0")/.."
out=${1:-build/asan}
reports=$out/reports
mkdir -p "$reports"
rm -f "$out"/*.out
export ASAN_OPTIONS="log_path=$PWD/$reports/asan:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS="log_path=$PWD/$reports/ubsan:print_stacktrace=1:halt_on_error=1"
export KOORD_BPF_BIN=$out/koord-bpf
export KOORD_TEST_KEEP=1	# the daemons' logs, read below
start=$(date +%s)
fail=0

units=()
for t in "$out"/tests/test_*; do
	[ -f "tests/unit/$(basename "$t").c" ] && units+=("$t")
done
tests/run-unit.sh "${units[@]}" >"$reports/../unit.out" 2>&1 || fail=1
tail -1 "$reports/../unit.out"

# the end-to-end tests driving the sanitized daemon
for t in test_enforce test_faults; do
	echo "== $out/tests/$t (daemon: $KOORD_BPF_BIN)"
	"$out/tests/$t" 2>&1 | tee "$reports/../$t.out"
	rc=${PIPESTATUS[0]}
	if [ $rc -eq 77 ] && [ "${CI:-}" != true ]; then
		echo "SKIPPED: $t under sanitizers (see the reason above)"
	elif [ $rc -eq 77 ]; then
		echo "FAILED: $out/tests/$t skipped, and under CI it must run (see the reason above)"
		fail=1
	elif [ $rc -ne 0 ]; then
		echo "FAILED: $out/tests/$t"
		fail=1
	fi
done
# UBSan's reports: in the tests' output and the daemons' logs (named there
# as a pattern of the files a test left: unquoted below, it expands)
logs=$(sed -n 's/^# daemon logs: //p' "$reports"/../test_*.out)
for f in "$reports"/../*.out $logs; do
	[ -f "$f" ] && grep -q -e 'runtime error:' -e 'Sanitizer' "$f" &&
		grep -B2 -A20 -e 'runtime error:' -e 'Sanitizer' "$f" >"$reports/from-$(basename "$f")"
done

n=0
for r in "$reports"/*; do
	[ -e "$r" ] || continue
	n=$((n + 1))
	echo "---- sanitizer report $r"
	cat "$r"
done
echo "sanitizers: $n reports, $(( $(date +%s) - start )) s"
[ $n -eq 0 ] && [ $fail -eq 0 ] || { echo "daemon tests' files kept:" $logs; exit 1; }
rm -rf $logs
