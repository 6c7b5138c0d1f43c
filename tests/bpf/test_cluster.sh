#!/usr/bin/env bash
# koord-bpf in a cluster, from the outside: a stand-in kubelet (HTTPS on
# loopback, a certificate made here, recorded PodList) and a stand-in YARN
# NodeManager (plain HTTP, recorded containers) beside pods and a YARN task in
# kubepods-like cgroups. The pods' labels override the cgroup classes, series
# carry namespace and pod, a YARN task gets its request, /api/batch counts a
# koord-batch pod as batch; when the kubelet goes away the daemon goes on and
# says so in /healthz and /metrics.
set -u
cd "$(dirname "$0")/../.."
bin=${KOORD_BPF_BIN:-build/koord-bpf}	# the sanitized build sets it
data=tests/unit/data
. tests/bpf/lib.sh

tmp=$(mktemp -d /tmp/koord-cluster-test-XXXXXX)
cgdir=
cleanup() {
	[ "$BASHPID" = "$$" ] || exit 1
	[ -S "$tmp/tmux.sock" ] && tmux -S "$tmp/tmux.sock" kill-server 2>/dev/null
	stop_pids
	[ -n "$cgdir" ] && [ -d "$cgdir" ] && find "$cgdir" -depth -type d -exec rmdir {} \; 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- the stand-ins ----
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/k.key" -out "$tmp/k.crt" >/dev/null 2>&1
echo s3cret > "$tmp/token"
python3 $data/kubelet_server.py "$tmp/k.crt" "$tmp/k.key" s3cret $data "$tmp/port" &
kubelet=$!
pids+=($kubelet)
mkdir -p "$tmp/nm/ws/v1/node" && cp $data/nm-containers.json "$tmp/nm/ws/v1/node/containers"
nm_port=$(free_port)
(cd "$tmp/nm" && exec python3 -m http.server "$nm_port" --bind 127.0.0.1 >/dev/null 2>&1) &
pids+=($!)
check "the stand-in kubelet listens" until_true 10 test -s "$tmp/port"
kport=$(cat "$tmp/port")

# ---- the workload: pods of the recorded PodList, a YARN task ----
root=$(build/koord-interference -d 0.1 --json 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["hierarchy"]["root"])')
rel=/koord-cluster-test-$$
cgdir=$root$rel
lse=$rel/kubepods/burstable/pod11111111-0000-0000-0000-000000000002/c1	# qosClass LSE
typo=$rel/kubepods/burstable/pod11111111-0000-0000-0000-000000000004/c4	# qosClass "lse"
batch=$rel/kubepods/besteffort/pod11111111-0000-0000-0000-000000000003/c3	# koord-batch
etl=$rel/kubepods/burstable/pod11111111-0000-0000-0000-000000000007/c7	# LS, koord-batch
promoted=$rel/kubepods/besteffort/pod11111111-0000-0000-0000-000000000008/c8	# BestEffort, "LS"
yarn=$rel/hadoop-yarn/container_e02_1700000000000_0042_03_000007
for c in "$lse" "$typo" "$batch" "$yarn" "$promoted"; do
	mkdir -p "$root$c"
	# mostly asleep: it runs and waits every few ms without loading the machine
	(echo 0 > "$root$c/cgroup.procs" && exec timeout 120 sh -c 'while :; do sleep 0.005; done') &
	pids+=($!)
done
mkdir -p "$root$etl"	# busy: what decides whether it counts as high priority
(echo 0 > "$root$etl/cgroup.procs" && exec timeout 30 sh -c 'while :; do :; done') &
pids+=($!)

port=$(free_port)
cat > "$tmp/config.json" <<JSON
{"koordBPF": {"listen": "127.0.0.1:$port",
  "kubelet": {"url": "https://\${KOORD_TEST_HOST}:$kport/pods", "tokenFile": "$tmp/token",
              "caFile": "$tmp/k.crt", "intervalSeconds": 1},
  "yarn": {"nodeManagerURL": "http://127.0.0.1:$nm_port/ws/v1/node/containers", "intervalSeconds": 1},
  "batch": {"metricAggregateDurationSeconds": 2}}}
JSON
KOORD_TEST_HOST=127.0.0.1 $bin --config "$tmp/config.json" --period 0.5 --max-containers 65536 \
	2>"$tmp/daemon.err" &
daemon=$!
pids+=($daemon)
url=http://127.0.0.1:$port
scrape() { curl -s --max-time 5 -o "$tmp/m" "$url/metrics" && [ "$(metric "$tmp/m" koord_bpf_kubelet_up)" = 1 ]; }
check "the daemon starts and reads the kubelet" until_true 30 scrape
check "the daemon logs its maps' size: at least 232 bytes per CPU and slot" python3 -c '
import re, sys
m = re.search(r"collector: (\d+) container slots on (\d+) CPUs, maps ([\d.]+) MiB", open(sys.argv[1]).read())
slots, cpus, mib = int(m[1]), int(m[2]), float(m[3])
assert slots == 65536 and cpus >= 1, m[0]
assert 232 * cpus * (slots + 1) <= mib * 2**20 < 4 * 2**30, m[0]
' "$tmp/daemon.err"
sleep 1.5	# the next walk applies the list, NodeManager's too
curl -s --max-time 5 -o "$tmp/m" "$url/metrics"
check "the exposition is valid" python3 tests/bpf/promcheck.py --prefix koord_bpf_ "$tmp/m"
check "8 pods listed" [ "$(metric "$tmp/m" koord_bpf_kubelet_pods)" = 8 ]
check "qosClass LSE overrides burstable; namespace, pod and container labels" grep -qF \
	"koord_bpf_cpu_seconds_total{cgroup=\"$lse\",qos=\"LSE\",pod_uid=\"11111111-0000-0000-0000-000000000002\",container_id=\"c1\",namespace=\"default\",pod=\"cache\",container=\"a\"} " "$tmp/m"
check "an unknown qosClass is unclassified, not online" grep -qF \
	"koord_bpf_cpu_seconds_total{cgroup=\"$typo\",qos=\"UNCLASSIFIED\"," "$tmp/m"
check "... and logged once" [ "$(grep -c 'unknown koordinator.sh/qosClass "lse"' "$tmp/daemon.err")" = 1 ]
check "a BestEffort pod's own label \"LS\" is ignored: it stays BE" grep -qF \
	"koord_bpf_cpu_seconds_total{cgroup=\"$promoted\",qos=\"BE\"," "$tmp/m"
check "... counted (the pod's cgroup and its container's)" \
	[ "$(metric "$tmp/m" koord_bpf_kubelet_qos_labels_ignored)" = 2 ]
check "... and logged once" [ "$(grep -c 'qosClass "LS" ignored: the pod is BestEffort' "$tmp/daemon.err")" = 1 ]
check "NodeManager listed its containers" [ "$(metric "$tmp/m" koord_bpf_nodemanager_containers)" = 2 ]

curl -s --max-time 5 -o "$tmp/api.json" "$url/api/containers"
check "the YARN task: its application, attempt and NodeManager's request; the containers' names" python3 -c '
import json, sys
by = {c["cgroup"]: c for c in json.load(open(sys.argv[1]))["containers"]}
y = by[sys.argv[2]]["yarn"]
assert y == {"application_id": "application_1700000000000_0042", "attempt_id":
             "appattempt_1700000000000_0042_000003", "epoch": 2, "container": 7,
             "vcores": 2, "memory_mb": 4096}, y
c = by[sys.argv[3]]
assert (c["namespace"], c["pod"], c["container"], c["qos"]) == ("batch", "spark-exec", "c", "BE"), c
# a container the status does not name: no name
c = by[sys.argv[4]]
assert (c["pod"], c["container"]) == ("typo", None), c
' "$tmp/api.json" "$yarn" "$batch" "$typo"
# koord-top --from: the daemon's window and names, without a collector of its own (not root)
setpriv --reuid=65534 --regid=65534 --clear-groups build/koord-top --from "$url" -b -n 2 -d 0.5 \
	--json >"$tmp/top.json" 2>"$tmp/top.err"
check "koord-top --from, unprivileged: frames of the daemon's containers with their names" python3 -c '
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
assert len(frames) == 2, len(frames)
for f in frames:
    by = {c["cgroup"]: c for c in f["containers"]}
    c = by[sys.argv[2]]
    assert (c["namespace"], c["pod"], c["container"], c["qos"]) == ("default", "cache", "a", "LSE"), c
    assert f["collector"]["mode"] and f["duration_s"] > 0, f["collector"]
' "$tmp/top.json" "$lse"
setpriv --reuid=65534 --regid=65534 --clear-groups build/koord-top --from "$url" -b -n 1 -d 0.5 \
	--filter LSE >"$tmp/top.txt" 2>>"$tmp/top.err"
check "... and as text, filtered to LSE: the pod's row" grep -qF "$lse" "$tmp/top.txt"
check "... nothing on stderr" [ ! -s "$tmp/top.err" ]

# koord-top and koord-interference measuring here, naming pods from the kubelet themselves
kubelet_args=(--kubelet "https://127.0.0.1:$kport/pods" --kubelet-token-file "$tmp/token"
	      --kubelet-ca-file "$tmp/k.crt")
named() { # named FILE...: in each JSON document, the LSE pod's container by name and label class
	python3 -c '
import json, sys
lse = sys.argv[1]
for path in sys.argv[2:]:
    for line in open(path).read().splitlines() if path.endswith(".jsonl") else [open(path).read()]:
        d = json.loads(line)
        by = {c["cgroup"]: c for c in d["containers"]}
        c = by[lse]
        assert (c["namespace"], c["pod"], c["container"], c["qos"]) == ("default", "cache", "a", "LSE"), c
' "$lse" "$@"
}
build/koord-top -b -n 2 -d 0.5 --json "${kubelet_args[@]}" >"$tmp/own.jsonl" 2>"$tmp/own.err"
check "koord-top --kubelet: its own rows named by the pods, the class from the pod's label" \
	named "$tmp/own.jsonl"
build/koord-top -b -n 1 -d 0.5 --filter LSE "${kubelet_args[@]}" >"$tmp/own.txt" 2>>"$tmp/own.err"
check "... as text: the row says namespace/pod/container after the path" \
	grep -qF "$lse (default/cache/a)" "$tmp/own.txt"
# the typo and self-promoted pods are warned about; nothing else
quiet() { ! grep -v 'unknown koordinator.sh/qosClass\|qosClass "LS" ignored' "$1" | grep -qi 'error\|warn' || { cat "$1"; false; }; }
check "... no error or warning but the qosClass ones" quiet "$tmp/own.err"
build/koord-interference -d 1 --json "${kubelet_args[@]}" >"$tmp/intf.json" 2>"$tmp/intf.err"
check "koord-interference --kubelet: containers named, the class from the pod's label" \
	named "$tmp/intf.json"
build/koord-interference -d 1 "${kubelet_args[@]}" >"$tmp/intf.txt" 2>>"$tmp/intf.err"
check "... as text" grep -qF "$lse (default/cache/a)" "$tmp/intf.txt"
check "... no error or warning but the qosClass ones" quiet "$tmp/intf.err"
build/koord-interference -d 0.5 --json --kubelet "https://127.0.0.1:$kport/pods" \
	--kubelet-ca-file "$tmp/k.crt" >"$tmp/nok.json" 2>"$tmp/nok.err"
check "without the token: said once, and the output names cgroups only" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["containers"] and all(c["pod"] is None for c in d["containers"]), d["containers"][:2]
err = open(sys.argv[2]).read()
assert err.count("kubelet: ") == 1 and "401" in err, err
' "$tmp/nok.json" "$tmp/nok.err"
curl -s --max-time 5 -o "$tmp/batch.json" "$url/api/batch"
check "/api/batch: a koord-batch burstable pod is not high priority, the LSE pod counts at request" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["cpu"]
# high priority: the LSE pod "cache" at its request, 3.1 cores, and the mostly asleep others;
# the busy LS pod of koord-batch priority is in pods_used, and by its class alone it would be
# in hp_used too
assert c["pods_used"] > 0.3 and 3.1 <= c["hp_used"] < 3.3, c
' "$tmp/batch.json"

# ---- the kubelet goes away ----
kill $kubelet; wait $kubelet 2>/dev/null
down() { curl -s --max-time 5 -o "$tmp/m" "$url/metrics" && [ "$(metric "$tmp/m" koord_bpf_kubelet_up)" = 0 ]; }
check "kubelet unreachable: koord_bpf_kubelet_up 0" until_true 10 down
check "/healthz still 200 and says so" bash -c '
	[ "$(curl -s -o "$2/h" -w "%{http_code}" --max-time 5 "$1/healthz")" = 200 ] &&
	grep -q "^ok; kubelet unreachable (.*): classes from the cgroups$" "$2/h"' _ "$url" "$tmp"
sleep 1
curl -s --max-time 5 -o "$tmp/m" "$url/metrics"
check "the last good list still names the pods" grep -qF "namespace=\"default\",pod=\"cache\"" "$tmp/m"
check "the exposition is still valid" python3 tests/bpf/promcheck.py --prefix koord_bpf_ "$tmp/m"

# koord-top --from in a terminal while the daemon stops: the last frame stays, marked stale
sock=$tmp/tmux.sock
tmux -S "$sock" new-session -d -s top -x 200 -y 30 \
	"$PWD/build/koord-top --from $url -d 0.5 --filter LSE; sleep 100"
pane() { tmux -S "$sock" capture-pane -p -t top | grep -qF -- "$1"; }
check "koord-top --from, interactive: the LSE pod's row" until_true 10 pane "$lse (default/cache/a)"
kill -TERM $daemon; wait $daemon; rc=$?
check "SIGTERM: exit 0" [ "$rc" -eq 0 ]
check "koord-top --from: the daemon gone, the frame says STALE" until_true 10 pane "STALE: the frame of"
check "... and keeps the pod's row" pane "$lse (default/cache/a)"
tmux -S "$sock" kill-server
check "no error on stderr but the qosClass ones" bash -c \
	'! grep -v "unknown koordinator.sh/qosClass\|qosClass \"LS\" ignored\|kubelet: https://" "$1" | grep -qi "error\|warn" || { cat "$1"; false; }' \
	_ "$tmp/daemon.err"
echo "test_cluster: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
