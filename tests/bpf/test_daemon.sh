#!/usr/bin/env bash
# koord-bpf, the daemon's read side, from the outside: with a CPU hog in a
# kubepods-like cgroup (BE) and one in a cgroup whose name holds a quote and a
# backslash, scrape /metrics several times and check every scrape with a strict
# parser of the exposition format (tests/bpf/promcheck.py), counters monotonic
# across scrapes; /api/containers and /healthz; clear errors with exit 1; and
# SIGTERM stops it promptly with nothing left attached.
set -u
cd "$(dirname "$0")/../.."
bin=build/koord-bpf
. tests/bpf/lib.sh

tmp=$(mktemp -d /tmp/koord-daemon-test-XXXXXX)
cgdir=
cleanup() {
	# a forked child that got a signal before its exec runs the traps too: not here
	[ "$BASHPID" = "$$" ] || exit 1
	stop_pids
	remove_tree "$root" "$cgdir"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

errors_with() { # errors_with PATTERN ARGS...: exit 1 and PATTERN on stderr
	local pat=$1 out rc; shift
	out=$(timeout 20 "$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" -eq 1 ] && grep -qF -- "$pat" <<<"$out" || { echo "  got rc=$rc: $out"; return 1; }
}
# Other tests or tools may run alongside: "nothing left attached" is checked for
# the programs this daemon held (prog_id in its fds' fdinfo), by id.
switch_progs() { # switch_progs "IDS": how many of them are tp_switch/raw_switch
	local id n=0
	for id in $1; do
		bpftool prog show id "$id" 2>/dev/null | grep -qE 'name (tp|raw)_switch' && n=$((n + 1))
	done
	echo $n
}
status() { # status URL [curl args]: the HTTP status code
	curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"
}
wait_http() { # wait_http URL: until the server answers at all (30 s at most)
	local i
	for i in $(seq 300); do
		[ "$(status "$1")" != 000 ] && return 0
		sleep 0.1
	done
	return 1
}
catching_term() { # catching_term PID: wait until koord-bpf itself runs and catches SIGTERM
	local i cgt
	for i in $(seq 500); do
		if [[ "$(readlink /proc/"$1"/exe 2>/dev/null)" == */koord-bpf ]]; then
			cgt=$(awk '/^SigCgt:/ {print $2}' /proc/"$1"/status 2>/dev/null)
			[ -n "$cgt" ] && (( (16#$cgt >> 14) & 1 )) && return 0
		fi
		sleep 0.01
	done
}
wait_healthy() { # the BPF load is slow on a busy machine: 30 s at most
	local i
	for i in $(seq 300); do
		[ "$(status "$1/healthz")" = 200 ] && return 0
		sleep 0.1
	done
	return 1
}

check "promcheck rejects what the format forbids" python3 tests/bpf/promcheck.py --selftest

# ---- errors ----
check "bad period: 0" errors_with 'bad period "0"' $bin --period 0 --once
check "bad period: abc" errors_with 'bad period "abc"' $bin --period abc
check "bad period: -1" errors_with 'bad period "-1"' $bin --period -1
for a in localhost:9326 127.0.0.1 127.0.0.1:0 127.0.0.1:65536 127.0.0.1:http 1.2.3:80 '[::1]' '::1:80' '[127.0.0.1]:80' '[::1]:'; do
	check "bad listen address: $a" errors_with "bad listen address \"$a\"" $bin --listen "$a"
done
check "a listen address not on this host" errors_with 'no such address' $bin --listen 192.0.2.1:9326
check "not root is refused" errors_with "must run as root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups $bin --listen 127.0.0.1:$(free_port)
check "bad --class rule" errors_with 'unknown QoS' $bin --class '/x*=FOO' --once
check "bad --counter-source" errors_with 'bad --counter-source "pmu"' $bin --counter-source pmu --once
# a letter means the same in the three programs: -n and -f are koord-top's iterations and filter
check "-n is not a dry run here" errors_with "invalid option -- 'n'" $bin -n --once
check "-f is not the config here" errors_with "invalid option -- 'f'" $bin -f /dev/null --once
# --check-config on the JSON $1: valid, and its output holds each of the other arguments
check_config_says() {
	local json=$1 out rc needle
	shift
	echo "$json" >"$tmp/check.json"
	out=$($bin --check-config "$tmp/check.json" 2>&1); rc=$?
	[ "$rc" -eq 0 ] || { echo "  got rc=$rc: $out"; return 1; }
	for needle; do
		grep -qF "$needle" <<<"$out" || { echo "  no \"$needle\" in: $out"; return 1; }
	done
}
# a NodeSLO value Koordinator accepts and koord-bpf does not support: valid, measure-only, said
check "--check-config: satisfaction lower 0 is valid, ignored, enforcement off" check_config_says \
	'{"resourceUsedThresholdWithBE": {"enable": true, "cpuEvictBESatisfactionLowerPercent": 0, "cpuEvictBESatisfactionUpperPercent": 50}}' \
	"cpuEvictBESatisfactionLowerPercent: must be in (0, 60], got 0: not supported" \
	"enforcement off (values not supported, above)"
# the NodeSLO gives the BE cpu.idle to koordlet's CoreSched: the wake-up priority is off, and why
check "--check-config: cpuPolicy coreSched with BE cpuQOS: the wake-up priority is koordlet's" \
	check_config_says \
	'{"resourceUsedThresholdWithBE": {"enable": true}, "resourceQOSStrategy": {"policies": {"cpuPolicy": "coreSched"}, "beClass": {"cpuQOS": {"enable": true, "schedIdle": 1}}}}' \
	"the BE cpu.idle is the NodeSLO's (schedIdle 1, koordlet sets 1), koord-bpf's wake-up priority is off" \
	"valid; enforcement on, wake-up priority off,"
check "--check-config: a type error still refuses the file" errors_with 'must be true or false' \
	$bin --check-config <(echo '{"resourceUsedThresholdWithBE": {"enable": "true"}}')

# ---- a workload ----
root=$(build/koord-interference -d 0.1 --json 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["hierarchy"]["root"])')
rel=/koord-daemon-test-$$
cgdir=$root$rel
cid=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
hog_rel=$rel/kubepods/besteffort/pod0a1b2c3d-1111-2222-3333-444455556666/$cid
evil_rel=$rel/'we"ird\name'
mkdir -p "$root$hog_rel" "$root$evil_rel"
hog() { # hog CGROUP_DIR: a CPU hog in that cgroup (for at most 300 s)
	(echo 0 > "$1/cgroup.procs" && exec timeout 300 sh -c 'while :; do :; done') &
	pids+=($!)
}
hog "$root$hog_rel"
hog "$root$evil_rel"
sleep 0.2

# ---- /healthz before the first period, and SIGTERM then ----
port=$(free_port)
$bin --listen 127.0.0.1:$port --period 30 2>"$tmp/slow.err" &
slow=$!
pids+=($slow)
wait_http "http://127.0.0.1:$port/healthz"
check "/healthz is 503 before the first period" [ "$(status "http://127.0.0.1:$port/healthz")" = 503 ]
check "/metrics is 503 before the first period" [ "$(status "http://127.0.0.1:$port/metrics")" = 503 ]
kill -TERM $slow
start=$(date +%s%N)
wait $slow; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "SIGTERM before the first period: exit 0 in ${ms} ms" [ "$rc" -eq 0 -a "$ms" -lt 2000 ]

$bin --listen 127.0.0.1:$(free_port) 2>/dev/null &
early=$!
catching_term $early
kill -TERM $early
start=$(date +%s%N)
wait $early; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "SIGTERM while loading: exit 0 in ${ms} ms" [ "$rc" -eq 0 -a "$ms" -lt 10000 ]

# ---- the daemon under test ----
port=$(free_port)
url=http://127.0.0.1:$port
$bin --listen 127.0.0.1:$port --period 0.5 --class "$rel/we*=LS" 2>"$tmp/daemon.err" &
daemon=$!
pids+=($daemon)
check "/healthz becomes 200 \"ok\"" wait_healthy "$url"
ids=$(prog_ids_of $daemon)
check "it holds the switch program ($(switch_progs "$ids") of: $(echo $ids))" [ "$(switch_progs "$ids")" -ge 1 ]
check "/healthz says ok" [ "$(curl -s --max-time 5 "$url/healthz")" = ok ]
check "port in use: exit 1 naming the process that holds it" \
	errors_with "127.0.0.1:$port: the port is already in use by koord-bpf (pid $daemon)" \
	$bin --listen 127.0.0.1:$port
# koordlet holds 9316 and 9317 with hostNetwork: a stand-in named koordlet on a free port
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$tmp/koordlet"	# the name is the link's
kport=$(free_port)
"$tmp/koordlet" -c "import socket, time
s = socket.socket(); s.bind(('127.0.0.1', $kport)); s.listen(1); time.sleep(60)" &
koordlet=$!
pids+=($koordlet)
for _ in $(seq 50); do grep -qi ":$(printf %04X "$kport") 00000000:0000 0A" /proc/net/tcp && break; sleep 0.1; done
check "a port koordlet holds: the message names it and its ports" \
	errors_with "already in use by koordlet (pid $koordlet), which holds 9316 and 9317 on Koordinator nodes" \
	$bin --listen 127.0.0.1:$kport
kill $koordlet 2>/dev/null

# a container created while it runs is found within a period or two
mkdir "$root$rel/late"
hog "$root$rel/late"
sleep 1.5
curl -s --max-time 5 -o "$tmp/m0" "$url/metrics"
check "a container created after the start appears with its labels" \
	grep -qF "koord_bpf_cpu_seconds_total{cgroup=\"$rel/late\",qos=\"SYSTEM\"" "$tmp/m0"
check "the hierarchy was walked again for it" \
	python3 -c 'import re, sys; v = int(re.search(r"^koord_bpf_cgroup_scans_total (\d+)$", open(sys.argv[1]).read(), re.M).group(1)); assert v >= 2, v' "$tmp/m0"
for i in 1 2 3 4 5; do	# as Prometheus does, scrapes 2 and 4 ask for gzip
	curl -s --max-time 5 $( [ $((i % 2)) = 0 ] && echo --compressed) -D "$tmp/h$i" -o "$tmp/m$i" "$url/metrics"
	sleep 0.6
done
check "every scrape is valid exposition text, counters monotonic across scrapes" \
	python3 tests/bpf/promcheck.py --prefix koord_bpf_ --monotonic "$tmp"/m[1-5]
check "Content-Type says format 0.0.4" grep -qi '^Content-Type: text/plain; version=0.0.4' "$tmp/h1"
check "gzip when asked, plain otherwise" \
	bash -c 'grep -qi "^Content-Encoding: gzip" "$1/h2" && ! grep -qi "^Content-Encoding" "$1/h1"' _ "$tmp"
labels="cgroup=\"$hog_rel\",qos=\"BE\",pod_uid=\"0a1b2c3d-1111-2222-3333-444455556666\",container_id=\"$cid\""
check "the hog's series carry its cgroup, QoS, pod and container" \
	grep -qF "koord_bpf_cpu_seconds_total{$labels} " "$tmp/m5"
cpu_of() { grep -F "koord_bpf_cpu_seconds_total{$labels} " "$1" | awk '{print $2}'; }
check "the hog's CPU time grows between scrapes ($(cpu_of "$tmp/m1") s -> $(cpu_of "$tmp/m5") s)" \
	python3 -c 'import sys; a, b = map(float, sys.argv[1:]); assert b - a > 0.1, (a, b)' \
	"$(cpu_of "$tmp/m1")" "$(cpu_of "$tmp/m5")"
check "its wait histogram, max and steal are there" bash -c '
	grep -qF "koord_bpf_runqueue_wait_seconds_bucket{$1,le=\"+Inf\"} " "$2" &&
	grep -qF "koord_bpf_runqueue_wait_seconds_count{$1} " "$2" &&
	grep -qF "koord_bpf_runqueue_wait_max_seconds{$1} " "$2" &&
	grep -qF "koord_bpf_steal_seconds_total{$1,from=\"BE\"} " "$2" &&
	grep -qF "koord_bpf_inflicted_wait_seconds_total{$1,victims=\"online\"} " "$2"' _ "$labels" "$tmp/m5"
check "a cgroup name with a quote and a backslash is escaped in labels; --class applies" \
	grep -qF "koord_bpf_cpu_seconds_total{cgroup=\"$rel/we\\\"ird\\\\name\",qos=\"LS\"" "$tmp/m5"
buckets() { grep -cF "koord_bpf_runqueue_wait_seconds_bucket{$1" "$2"; }
online_buckets_only() { [ "$(buckets "$labels" "$1")" = 1 ] && [ "$(buckets "cgroup=\"$rel/we" "$1")" = 26 ]; }
check "histogramBuckets \"online\" (the default): the BE hog has +Inf only ($(buckets "$labels" "$tmp/m5")), the LS one every bucket ($(buckets "cgroup=\"$rel/we" "$tmp/m5"))" \
	online_buckets_only "$tmp/m5"
check "hardware counter series exactly when there is a PMU ($(grep -o 'counters="[a-z]*"' "$tmp/m5"))" bash -c '
	if grep -q "^koord_bpf_collector_info{.*counters=\"hardware\"} 1$" "$1"; then
		grep -qF "koord_bpf_cpu_cycles_total{$2} " "$1" && grep -qF "koord_bpf_llc_misses_total{$2} " "$1"
	else
		grep -q "^koord_bpf_collector_info{.*counters=\"off\"} 1$" "$1" && ! grep -q "cycles\|llc_misses" "$1"
	fi' _ "$tmp/m5" "$labels"
check "the container gauge counts the BE hog" \
	python3 -c 'import re, sys; v = int(re.search(r"^koord_bpf_containers\{qos=\"BE\"\} (\d+)$", open(sys.argv[1]).read(), re.M).group(1)); assert v >= 1, v' "$tmp/m5"

curl -s --max-time 5 -o "$tmp/api.json" "$url/api/containers"
check "/api/containers is the schema of koord-interference over the last period" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["period_s"] == 0.5, d["period_s"]
assert 0.3 < d["duration_s"] < 1.5, d["duration_s"]
for k in ("hierarchy", "collector", "containers", "suspects", "verdict"):
    assert k in d, k
assert d["effects"] == [], d["effects"]   # measuring only: no verdict
by = {c["cgroup"]: c for c in d["containers"]}
hog = by[sys.argv[2]]
assert hog["qos"] == "BE" and hog["pod_uid"] == "0a1b2c3d-1111-2222-3333-444455556666", hog
assert hog["container_id"] == sys.argv[4], hog
assert 0 < hog["cpu_ns"] <= 0.5e9 * 2 * 1.2, hog["cpu_ns"]   # at most one period on each CPU
for k in ("count", "p50_us", "p99_us", "max_us", "wait_ns"):
    assert k in hog["runq"], k
assert sys.argv[3] in by, sorted(by)
' "$tmp/api.json" "$hog_rel" "$rel/we\"ird\\name" "$cid"
curl -s --max-time 5 -o "$tmp/batch.json" "$url/api/batch"
check "/api/batch: Koordinator's usage formula over the node's CPUs and memory" python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["policy"] == "usage" and d["samples"] >= 1, d
mem = dict(l.split()[:2] for l in open("/proc/meminfo"))
assert d["cpu"]["capacity"] == os.cpu_count(), d["cpu"]
assert d["memory"]["capacity"] == int(mem["MemTotal:"].rstrip(":")) * 1024, d["memory"]
for r in (d["cpu"], d["memory"]):
    assert r["reclaim_threshold_percent"] in (60, 65), r
    want = max(0, r["capacity"] - r["safety_margin"] - r["system_used"] - r["hp_used"])
    assert abs(r["allocatable"] - want) <= 1e-6 * max(1, r["capacity"]), (r, want)
    assert r["system_used"] >= r["reserved"] and 0 <= r["hp_used"] <= r["pods_used"], r
# the BE hog is a pod but not high priority: in pods_used, not in hp_used
assert d["cpu"]["pods_used"] - d["cpu"]["hp_used"] > 0.05, d["cpu"]  # it shares 2 CPUs with other hogs
assert d["allocatable"]["kubernetes.io/batch-cpu"] == int(d["cpu"]["allocatable"] * 1000), d
' "$tmp/batch.json"
check "/metrics has the batch capacity" bash -c '
	grep -q "^koord_bpf_batch_allocatable_cores [0-9.e+-]*$" "$1" &&
	grep -q "^koord_bpf_batch_allocatable_bytes [0-9.e+-]*$" "$1" &&
	grep -q "^koord_bpf_batch_cpu_cores{part=\"hp_used\"} " "$1"' _ "$tmp/m5"
check "unknown paths are 404, other methods 405" \
	bash -c '[ "$(curl -s -o /dev/null -w "%{http_code}" "$1/nope")" = 404 ] &&
		 [ "$(curl -s -o /dev/null -w "%{http_code}" -X POST "$1/metrics")" = 405 ]' _ "$url"

# Prometheus's own checker, where a Debian package put it on this machine.
if command -v promtool >/dev/null; then
	check "promtool check metrics accepts a scrape" bash -c 'promtool check metrics <"$1"' _ "$tmp/m5"
fi

# IPv6 loopback, when the host has it.
if ip -6 addr show lo 2>/dev/null | grep -q '::1'; then
	p6=$(free_port)
	$bin --listen "[::1]:$p6" --period 0.5 2>"$tmp/v6.err" &
	v6=$!
	pids+=($v6)
	check "serves on [::1]:PORT" wait_healthy "http://[::1]:$p6"
	kill -TERM $v6; wait $v6
fi

kill -TERM $daemon
start=$(date +%s%N)
wait $daemon; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "SIGTERM: exit 0 in ${ms} ms" [ "$rc" -eq 0 -a "$ms" -lt 2000 ]
check "none of its programs remains loaded (tp_switch/raw_switch among them)" gone "$ids"
check "no error on stderr" bash -c '! grep -qi "error\|warn" "$1" || { cat "$1"; false; }' _ "$tmp/daemon.err"

# ---- --once ----
$bin --once --period 1 >"$tmp/once" 2>"$tmp/once.err" &
once=$!
sleep 0.7
ids=$(prog_ids_of $once)
wait $once; rc=$?
check "--once prints one valid exposition and exits 0" \
	bash -c '[ "$1" -eq 0 ] && python3 tests/bpf/promcheck.py --prefix koord_bpf_ "$2" >/dev/null' _ "$rc" "$tmp/once"
check "--once sees the hog" grep -qF "koord_bpf_cpu_seconds_total{$labels} " "$tmp/once"
check "nothing attached after --once" gone "$ids"

echo "test_daemon: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
