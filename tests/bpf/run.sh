#!/usr/bin/env bash
# Run the BPF tests (root, real cgroups). A test exits 77 only when root, BTF
# or a cpu cgroup hierarchy are truly missing; under CI that is a failure.
set -u
cd "$(dirname "$0")/../.."
pass=0 fail=0 skip=0
for t in build/tests/test_* tests/bpf/test_*.sh; do
	case "$t" in build/tests/test_*) [ -f "tests/bpf/$(basename "$t").c" ] || continue ;; esac
	echo "== $t"
	if [ "${t##*.}" = sh ]; then bash "$t"; else "$t"; fi
	rc=$?
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)); echo "SKIPPED: $t (see the reason above)" ;;
	*) fail=$((fail + 1)); echo "FAILED: $t" ;;
	esac
done
if [ "$skip" -gt 0 ] && [ "${CI:-}" = true ]; then
	echo "BPF tests must run in CI: $skip skipped"
	fail=$((fail + skip))
fi
echo "bpf: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
