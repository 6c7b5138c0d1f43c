#!/usr/bin/env bash
# Churn soak: while koord-bpf runs, KOORD_CHURN_N (default 2,000; the
# 10,000 of the soak in docs/testing.md take ~6 min here, at ~17 ms per
# cgroup mkdir or rmdir) BE pod cgroups, each running one short-lived
# process, are created and removed, 50 at a time, through 256 container slots (so
# every slot is given back and reused several times). Afterwards none of their ids may be left
# in the collector's maps keyed by container (cg_slot, cg_class, read with bpftool; cg_slot
# holding a container's counter slot, given back at rmdir), the
# maps' entry counts must be back near their baseline, the daemon's RSS flat,
# no map may have been full, and the log must hold no error or warning.
set -u
cd "$(dirname "$0")/../.."
n=${KOORD_CHURN_N:-2000}
. tests/lib/testlib.sh
command -v bpftool >/dev/null || { echo "bpftool missing: run scripts/deps.sh"; exit 1; }

tmp=$(mktemp -d /tmp/koord-churn-XXXXXX)

find_root
cgdir=$root/koord-churn-$$
mkdir -p "$cgdir/kubepods/besteffort"

start_daemon "$tmp/daemon.log" --max-containers 256

# the daemon's maps by name, from the ids its fds hold
declare -A map
for id in $(grep -h '^map_id:' /proc/$daemon/fdinfo/* | awk '{print $2}' | sort -un); do
	name=$(bpftool -j map show id "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])')
	map[$name]=$id
done
keys() { # keys NAME: the cgroup ids (first 8 bytes of each key) in the map, one a line
	bpftool -j map dump id "${map[$1]}" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(int.from_bytes(bytes(int(b, 16) for b in e["key"][:8]), "little"))'
}
rss() { awk '/^VmRSS:/ {print $2}' /proc/$daemon/status; }
map_full() { # the collector's slots-full and map-full events so far
	curl -s --max-time 5 "http://127.0.0.1:$port/metrics" |
		awk '/^koord_bpf_collector_events_total\{kind="(container_slots_full|task_map_full)"\}/ {s += $2} END {print s + 0}'
}
sleep 3
declare -A base
for m in cg_slot cg_class; do base[$m]=$(keys $m | wc -l); done
rss0=$(rss)
full0=$(map_full)
echo "# baseline: cg_slot ${base[cg_slot]}, cg_class ${base[cg_class]} entries; RSS $rss0 kB"

# the churn: each pod runs one sleep 10 ms (it waits, switches, exits)
start=$(date +%s)
python3 - "$cgdir/kubepods/besteffort" "$n" "$tmp/ids" <<'EOF' &
import os, subprocess, sys
base, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ids = []
for b in range(0, n, 50):
	procs, dirs = [], []
	for i in range(b, min(n, b + 50)):
		pod = "%s/pod%08x-0000-4000-8000-%012x" % (base, i, i)
		os.mkdir(pod)
		ids.append(os.stat(pod).st_ino)
		dirs.append(pod)
		procs.append(subprocess.Popen(["sleep", "0.01"], preexec_fn=lambda c=pod:
			open(c + "/cgroup.procs", "w").write(str(os.getpid()))))
	for p in procs:
		p.wait()
	for d in dirs:
		os.rmdir(d)
with open(out, "w") as f:
	f.write("\n".join(map(str, ids)) + "\n")
EOF
churn=$!
pids+=($churn)
rss_max=$rss0
while kill -0 $churn 2>/dev/null; do
	r=$(rss)
	[ -n "$r" ] && [ "$r" -gt "$rss_max" ] && rss_max=$r
	sleep 1
done
wait $churn
rc=$?
secs=$(( $(date +%s) - start ))
check "$n pod cgroups with a process each created and removed ($secs s)" [ $rc -eq 0 -a "$(wc -l < "$tmp/ids")" -eq $n ]

# entries go when a cgroup is removed (cgroup_rmdir) or at the next walk (classes): 20 s at most
left() { # left MAP: how many of the churned ids are still in it
	keys "$1" | sort -u | comm -12 - <(sort -u "$tmp/ids") | wc -l
}
for i in $(seq 40); do
	[ "$(left cg_slot)" -eq 0 ] && [ "$(left cg_class)" -eq 0 ] && break
	sleep 0.5
done
for m in cg_slot cg_class; do
	now=$(keys $m | wc -l)
	check "$m: none of the churned cgroups is left ($(left $m)); $now entries, baseline ${base[$m]}" \
		[ "$(left $m)" -eq 0 -a "$now" -le $(( base[$m] + base[$m] / 10 + 20 )) ]
done
rss1=$(rss)
echo "# RSS: $rss0 kB at the start, at most $rss_max kB during the churn, $rss1 kB after"
check "RSS flat: $rss1 kB after, $rss0 kB before (within 20% + 2 MB)" \
	[ "$rss1" -le $(( rss0 + rss0 / 5 + 2048 )) ]
check "no map was full during the churn" [ "$(map_full)" -eq "$full0" ]
check "the daemon still answers /healthz" [ "$(curl -s --max-time 5 "http://127.0.0.1:$port/healthz")" = ok ]
stop_clean $daemon "$tmp/daemon.log"
summary test_churn
