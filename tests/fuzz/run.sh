#!/usr/bin/env bash
# Run every libFuzzer harness built in $1/fuzz for $2 seconds each, starting
# from its committed corpus (tests/fuzz/corpus/NAME, read only: new inputs go
# to $1/fuzz/corpus/NAME). A crash, leak, sanitizer report or timeout fails
# the stage and leaves the input in $1/fuzz/crash-NAME-*: fix the code and
# add the input to the corpus as a regression.
set -u
cd "$(dirname "$0")/../.."
out=${1:-build/fuzz}
secs=${2:-20}
fail=0 n=0 start=$(date +%s)

# Longest input worth trying per parser (their inputs are small files).
max_len() {
	case $1 in
	podlist|nodemanager|report) echo 65536 ;;
	cpumanager) echo 4096 ;;
	config|journal|nodeslo|node) echo 16384 ;;
	mountinfo|meminfo|memstat) echo 8192 ;;
	classify) echo 4096 ;;
	*) echo 256 ;;
	esac
}

for src in tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	name=${name#fuzz_}
	bin=$out/fuzz/fuzz_$name
	seeds=tests/fuzz/corpus/$name
	work=$out/fuzz/corpus/$name
	mkdir -p "$work"
	n=$((n + 1))
	log=$out/fuzz/$name.log
	dict=()
	[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
	"$bin" "${dict[@]}" -max_total_time="$secs" -max_len="$(max_len "$name")" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$out/fuzz/crash-$name-" -print_final_stats=1 \
		"$work" "$seeds" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	if [ $rc -eq 0 ]; then
		echo "fuzz $name: ${execs:-?} runs, $cov, no finding"
	else
		echo "FAILED: fuzz $name (exit $rc); the end of $log:"
		tail -40 "$log"
		fail=$((fail + 1))
	fi
done
echo "fuzz: $n harnesses, $fail failed, $(( $(date +%s) - start )) s"
[ "$fail" -eq 0 ]
