#!/usr/bin/env bash
# Soak the test suite: run `make test` RUNS times, each on a fresh clone of
# this repository's HEAD, quiet and under a background load, and report how
# many passed. A run's log is kept; a failing run's failed checks are shown.
#
# Usage: sudo scripts/soak.sh [-n RUNS] [--load quiet|loaded|both] [--target TARGET]
#                             [--dir DIR]
#   -n RUNS        runs of each kind (default 10)
#   --load KIND    quiet, loaded (stress-ng --cpu 1 --cpu-load 30, unpinned) or both (default)
#   --target T     the make target (default test: the README's test command)
#   --dir DIR      where the clones and logs go (default /tmp/koord-soak); kept
# The VM kernels the clone's VM stage needs are seeded from this checkout's
# build/vm/kernels when it has them (they are downloads, not build outputs).
# Exit status: 0 only if every run passed.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD runs=10 load=both target=test dir=/tmp/koord-soak

usage() { sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit "${1:-0}"; }
while (($#)); do
	case $1 in
	-n) runs=${2:?}; shift ;;
	--load) load=${2:?}; shift ;;
	--target) target=${2:?}; shift ;;
	--dir) dir=${2:?}; shift ;;
	-h|--help) usage ;;
	*) echo "soak: unknown argument '$1'" >&2; usage 2 >&2 ;;
	esac
	shift
done
case $load in quiet) kinds=(quiet) ;; loaded) kinds=(loaded) ;; both) kinds=(quiet loaded) ;;
*) echo "soak: --load is quiet, loaded or both" >&2; exit 2 ;; esac
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "soak: -n takes a positive count" >&2; exit 2; }
if [[ ${kinds[*]} == *loaded* ]] && ! command -v stress-ng >/dev/null; then
	apt-get update -qq && apt-get install -y -qq stress-ng >/dev/null ||
		{ echo "soak: cannot install stress-ng" >&2; exit 1; }
fi

mkdir -p "$dir"
summary=$dir/summary.txt
head=$(git -C "$repo" rev-parse --short HEAD)
echo "soak of $head: make $target, $runs run(s) of: ${kinds[*]}" | tee "$summary"
loader=
stop_load() { [[ -n $loader ]] && kill "$loader" 2>/dev/null && wait "$loader" 2>/dev/null; loader=; }
trap 'stop_load; exit 130' INT TERM

declare -A passed=()
failed_any=0
for kind in "${kinds[@]}"; do
	passed[$kind]=0
	for ((i = 1; i <= runs; i++)); do
		clone=$dir/$kind-$i log=$dir/$kind-$i.log
		rm -rf "$clone"
		git clone -q --no-hardlinks "$repo" "$clone" || { echo "soak: clone failed" >&2; exit 1; }
		at=$(git -C "$clone" rev-parse --short HEAD)	# HEAD may move between runs
		if [[ -d $repo/build/vm/kernels ]]; then
			mkdir -p "$clone/build/vm" && cp -a "$repo/build/vm/kernels" "$clone/build/vm/"
		fi
		if [[ $kind == loaded ]]; then
			stress-ng --cpu 1 --cpu-load 30 --quiet &
			loader=$!
		fi
		t0=$(date +%s)
		make -C "$clone" "$target" >"$log" 2>&1
		rc=$?
		stop_load
		secs=$(($(date +%s) - t0))
		if ((rc == 0)); then
			passed[$kind]=$((passed[$kind] + 1))
			echo "$kind run $i at $at: pass ($secs s)" | tee -a "$summary"
		else
			failed_any=1
			echo "$kind run $i at $at: FAIL ($secs s, exit $rc; $log)" | tee -a "$summary"
			grep -E '^not ok|FAILED|ERROR|Error [0-9]' "$log" | head -n 12 | sed 's/^/    /' |
				tee -a "$summary"
		fi
		rm -rf "$clone"
	done
done
for kind in "${kinds[@]}"; do
	echo "$kind: ${passed[$kind]}/$runs passed" | tee -a "$summary"
done
exit $failed_any
