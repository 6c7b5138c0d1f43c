#!/usr/bin/env bash
# koord-bpf under valgrind (memcheck) for a short real workload: a server-like
# probe and a CPU hog on CPU 0 in kubepods-shaped cgroups, enforcement on, the
# endpoints scraped, ~10 s of periods, then SIGTERM. valgrind must report no
# error and no definite leak, the daemon must exit 0 having acted, and every
# cpu setting of the tree must be back to its original. Only libbpf's bpf(2)
# attributes are suppressed (tests/bpf/valgrind.supp says why).
set -u
cd "$(dirname "$0")/../.."
bin=build/koord-bpf
. tests/lib/testlib.sh
if ! command -v valgrind >/dev/null; then echo "valgrind missing: run scripts/deps.sh"; exit 1; fi

tmp=$(mktemp -d /tmp/koord-valgrind-XXXXXX)

find_root
rel=/koord-valgrind-$$
cgdir=$root$rel
be=$rel/kubepods/besteffort
mkdir -p "$root$be/pod7a8b9c0d-5555-4b4b-8c8c-0123456789ab/hog" \
	"$root$rel/kubepods/burstable/pod5f6e3c1a-4444-4a4a-9b9b-0123456789ab/probe"
run_in() { # run_in CGROUP_DIR COMMAND...: on CPU 0, for at most 300 s
	local d=$1; shift
	(echo 0 > "$d/cgroup.procs" && exec taskset -c 0 timeout 300 "$@") &
	pids+=($!)
}
run_in "$root$be/pod7a8b9c0d-5555-4b4b-8c8c-0123456789ab/hog" sh -c 'while :; do :; done'
run_in "$root$rel/kubepods/burstable/pod5f6e3c1a-4444-4a4a-9b9b-0123456789ab/probe" \
	python3 -c 'import time
while True: time.sleep(0.001)'

snapshot() { # every cpu setting of the tree, one "path:value" a line
	find "$cgdir" \( -name cpu.idle -o -name cpu.shares -o -name cpu.cfs_quota_us \
		-o -name cpu.cfs_period_us -o -name cpu.weight -o -name cpu.max \) | sort | xargs grep -H ''
}
before=$(snapshot)
port=$(free_port)
cat > "$tmp/config.json" <<EOF
{"resourceUsedThresholdWithBE": {"enable": true, "cpuSuppressPolicy": "cfsQuota",
  "cpuSuppressThresholdPercent": 12},
 "koordBPF": {"cgroupRoots": ["$rel/kubepods"], "stateDir": "$tmp/state", "period": 0.5,
  "effect": {"windows": 1}}}
EOF

start=$(date +%s)
# --max-containers: other cgroups of the machine (other tests) must not fill the maps
valgrind --suppressions=tests/bpf/valgrind.supp --leak-check=full --errors-for-leak-kinds=definite \
	--error-exitcode=99 --log-file="$tmp/valgrind.log" \
	$bin --config "$tmp/config.json" --listen 127.0.0.1:$port --max-containers 16384 \
	2>"$tmp/daemon.log" &
vg=$!
pids+=($vg)
for i in $(seq 1200); do
	grep -q 'serving http' "$tmp/daemon.log" && break
	kill -0 $vg 2>/dev/null || break
	sleep 0.1
done
check "the daemon starts under valgrind ($(( $(date +%s) - start )) s)" grep -q 'serving http' "$tmp/daemon.log"
shares_is() { [ "$(cat "$root$be/cpu.shares" 2>/dev/null)" = "$1" ]; }
for i in $(seq 300); do shares_is 2 && break; sleep 0.1; done
check "it acts: the BE root gets the lowest weight" shares_is 2
# ~10 s of periods, every endpoint asked in turn (valgrind runs one thread at a time: slow answers)
end=$(( $(date +%s) + 10 ))
declare -A ok=([metrics]=0 [api/containers]=0 [healthz]=0)
while [ "$(date +%s)" -lt $end ]; do
	for u in "${!ok[@]}"; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/$u")" = 200 ] &&
			ok[$u]=$((ok[$u] + 1))
	done
done
check "its endpoints answer 200 (/metrics ${ok[metrics]}, /api/containers ${ok[api/containers]}, /healthz ${ok[healthz]} times)" \
	[ "${ok[metrics]}" -gt 0 -a "${ok[api/containers]}" -gt 0 -a "${ok[healthz]}" -gt 0 ]
kill -TERM $vg
for i in $(seq 600); do kill -0 $vg 2>/dev/null || break; sleep 0.1; done
wait $vg
rc=$?
check "SIGTERM: exit 0 with no valgrind error (got $rc)" [ "$rc" -eq 0 ]
check "valgrind: 0 errors" grep -q 'ERROR SUMMARY: 0 errors' "$tmp/valgrind.log"
check "valgrind: nothing definitely lost" \
	grep -qE 'definitely lost: 0 bytes|no leaks are possible' "$tmp/valgrind.log"
check "every cpu setting of the tree is back to its original" [ "$(snapshot)" = "$before" ]
if [ $fail -gt 0 ]; then
	sed 's/^/#   /' "$tmp/daemon.log"
	grep -A30 -E '== [A-Z].*(Invalid|uninitialised|unaddressable|definitely)' "$tmp/valgrind.log" | head -80
fi
grep -E 'ERROR SUMMARY|definitely lost|total heap usage' "$tmp/valgrind.log" | sed 's/^==[0-9]*==/#/'
echo "# $(( $(date +%s) - start )) s"
summary test_valgrind
