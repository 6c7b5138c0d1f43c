#!/usr/bin/env bash
# Run the cmocka unit tests given as arguments; one summary line at the end.
set -u
pass=0 fail=0
for t in "$@"; do
	if "$t"; then pass=$((pass + 1)); else echo "FAILED: $t"; fail=$((fail + 1)); fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
