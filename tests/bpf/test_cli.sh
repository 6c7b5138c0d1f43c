#!/usr/bin/env bash
# koord-interference from the outside: clear errors with exit 1, valid JSON,
# and nothing left attached after it exits, also on Ctrl-C.
set -u
cd "$(dirname "$0")/../.."
bin=build/koord-interference
. tests/bpf/lib.sh

errors_with() { # errors_with PATTERN ARGS...: exit 1 and PATTERN on stderr
	local pat=$1 out rc; shift
	out=$("$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" -eq 1 ] && grep -q -- "$pat" <<<"$out" || { echo "  got rc=$rc: $out"; return 1; }
}
detached() { # no collector program is loaded, 1 s after the tool exited (see gone)
	local i
	for i in $(seq 100); do
		bpftool prog show 2>/dev/null | grep -qE 'name (tp|raw)_(switch|wakeup)' || return 0
		sleep 0.01
	done
	return 1
}

version_is() { # version_is PROG: --version, as any user, prints "PROG X.Y.Z (libbpf vA.B)" and exits 0
	local out rc
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups build/$1 --version 2>&1); rc=$?
	[ "$rc" -eq 0 ] && grep -qxE "$1 [0-9]+\.[0-9]+\.[0-9]+ \(libbpf v?[0-9]+\.[0-9]+\)" <<<"$out" ||
		{ echo "  got rc=$rc: $out"; return 1; }
}
for prog in koord-bpf koord-top koord-interference; do
	check "$prog --version, not root" version_is $prog
done
check "not root is refused" errors_with "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups $bin -d 1
check "bad duration" errors_with 'bad duration "abc"' $bin -d abc
check "zero duration" errors_with 'bad duration "0"' $bin -d 0
check "bad --class rule" errors_with 'unknown QoS "FOO"' $bin -d 1 --class '/x*=FOO'
check "--class without =" errors_with 'bad --class rule' $bin -d 1 --class nothing
check "unknown cgroup root" errors_with '/nonexistent' $bin -d 1 --cgroup-root /nonexistent
check "a cgroup root that is no cgroup" errors_with '/tmp' $bin -d 1 --cgroup-root /tmp
check "a load mode nothing matches (raw_tp has no task storage) is refused, no crash" \
	errors_with 'no way to load the BPF collector matches --attach raw_tp --task-store storage' \
	$bin -d 1 --attach raw_tp --task-store storage
check "nothing attached before" detached

json=$($bin -d 1 --json 2>/dev/null)
check "--json is valid and has the schema's fields" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
c = d["containers"]
assert c, "no containers"
for x in c:
    for k in ("cgroup", "id", "qos", "pod_uid", "container_id", "cpu_ns", "runq", "steal_ns", "inflicted_ns", "counters"):
        assert k in x, k
    assert x["cgroup"].startswith("/")
    for k in ("count", "p50_us", "p99_us", "max_us", "wait_ns"):
        assert k in x["runq"], k
    assert x["runq"]["p50_us"] <= x["runq"]["p99_us"] <= x["runq"]["max_us"] + 1e-9
    assert all(0 <= v <= x["runq"]["wait_ns"] + 10**9 for v in x["steal_ns"].values())
for k in ("suspects", "events", "verdict"):
    assert k in d, k
' "$json"
check "nothing attached after a normal exit" detached
out=$($bin -d 1 --trace --long-wait 0.001 2>/dev/null)
check "--trace prints long waits as they happen, then the report and a verdict" \
	bash -c 'grep -q "^VICTIM .*WAIT_ms" <<<"$1" && grep -q "^Suspects" <<<"$1" && grep -q "^Verdict: " <<<"$1" &&
		 [ "$(grep -c " <- " <<<"$1")" -gt 0 ]' _ "$out"
check "bad --long-wait" errors_with 'bad --long-wait' $bin -d 1 --long-wait -3
check "bad --counter-source" errors_with 'bad --counter-source' $bin -d 1 --counter-source pmu
json=$($bin -d 0.5 --json --counter-source software 2>/dev/null)
check "software counters appear per container with CPI" python3 -c '
import json, sys
c = [x["counters"] for x in json.loads(sys.argv[1])["containers"] if x["cpu_ns"] > 0]
assert c and all(x and x["source"] == "software" and x["cycles"] > 0 for x in c), c
' "$json"

$bin -d 60 >/tmp/koord-cli-$$.out 2>&1 &
pid=$!
sleep 2
kill -INT $pid
start=$(date +%s)
wait $pid; rc=$?
check "Ctrl-C ends a long watch promptly with a report" \
	bash -c "[ $rc -eq 0 ] && [ \$(( \$(date +%s) - $start )) -le 3 ] && grep -q '^QOS' /tmp/koord-cli-$$.out"
check "nothing attached after Ctrl-C" detached
rm -f /tmp/koord-cli-$$.out

# A cgroup name with a tab and an escape sequence (the kernel refuses newlines):
# escaped in text, exact in JSON.
root=$($bin -d 0.1 --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["hierarchy"]["root"])')
evil="$root/koord-cli-$$/evil"$'\t'"name"$'\x1b'"[31m"
mkdir -p "$evil"
(echo 0 > "$evil/cgroup.procs" && exec timeout 4 sh -c 'while :; do :; done') &
sleep 0.3
text=$($bin -d 1 2>/dev/null)
json=$($bin -d 1 --json 2>/dev/null)
wait
rmdir "$evil" "$root/koord-cli-$$"
check "odd cgroup names are escaped in text" \
	bash -c 'grep -qF "evil\\x09name\\x1b[31m" <<<"$1" && ! grep -q $'"'"'\x1b'"'"' <<<"$1"' _ "$text"
check "and exact in JSON" python3 -c '
import json, sys
names = [c["cgroup"] for c in json.loads(sys.argv[1])["containers"]]
assert any(n.endswith("/evil\tname\x1b[31m") for n in names), names
' "$json"
echo "test_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
