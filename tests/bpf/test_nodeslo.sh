#!/usr/bin/env bash
# The node's NodeSLO from the API server (--nodeslo), served by a stand-in
# from a file the test rewrites as an editor would, over the --config file
# (koord-bpf's own section). Read at start, so enforcement is the NodeSLO's
# from the first period; applied again at each change; Koordinator's
# sections are the NodeSLO's and koordBPF the file's; a NodeSLO with a bad
# value is refused with the configuration before kept, an answer that is no
# NodeSLO is a failed poll that changes nothing; an edit of the file is read
# with the NodeSLO applied. Without an answer at start the file holds (and
# is read again when edited) until one comes; over plain HTTP no token is sent.
set -u
cd "$(dirname "$0")/../.."
bin=${KOORD_BPF_BIN:-build/koord-bpf}
data=tests/unit/data
. tests/bpf/lib.sh

tmp=$(mktemp -d /tmp/koord-nodeslo-test-XXXXXX)
cleanup() {
	[ "$BASHPID" = "$$" ] || exit 1
	stop_pids
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$tmp/tls" "$tmp/plain"

replace() { # replace FILE TEXT: at once, as the API server's store or a ConfigMap's swap
	printf '%s\n' "$2" > "$1.new" && mv "$1.new" "$1"
}
slo() { # slo DIR NAME RV SPEC: the NodeSLO NAME as the API server serves it
	replace "$1/$2.json" "{\"apiVersion\": \"slo.koordinator.sh/v1alpha1\", \"kind\": \"NodeSLO\",
 \"metadata\": {\"name\": \"$2\", \"resourceVersion\": \"$3\"}, \"spec\": $4}"
}
be() { # be ENABLE [MORE]: a spec's resourceUsedThresholdWithBE
	echo "\"resourceUsedThresholdWithBE\": {\"enable\": $1${2:-}}"
}
own() { # own PORT PERIOD: koord-bpf's section, served on PORT, nothing to act on
	echo "\"koordBPF\": {\"listen\": \"127.0.0.1:$1\", \"period\": $2, \"stateDir\": \"$tmp/state\",
  \"cgroupRoots\": [\"/koord-nodeslo-test-none\"]}"
}
scrape() { # scrape PORT: /metrics into $tmp/m
	curl -s --max-time 5 -o "$tmp/m" "http://127.0.0.1:$1/metrics"
}
is() { # is PORT SERIES VALUE: the series has the value now
	scrape "$1" && [ "$(metric "$tmp/m" "$2")" = "$3" ]
}
# quiet_but LOG PATTERN: no error or warning in LOG but lines matching PATTERN, and the
# notes that a BE root is not acted on (cgroupRoots names nothing: on a node with a kubelet,
# or while another test's tree exists, the daemon finds BE roots outside it)
quiet_but() {
	! grep -v -e "$2" -e "it is outside cgroupRoots$" "$1" | grep -qi "error\|warn" || { cat "$1"; false; }
}

# ---- the stand-in API servers: HTTPS with a token, and plain HTTP ----
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/k.key" -out "$tmp/k.crt" >/dev/null 2>&1
echo s3cret > "$tmp/token"
python3 $data/kubelet_server.py "$tmp/k.crt" "$tmp/k.key" s3cret $data "$tmp/tls.port" "$tmp/tls" &
pids+=($!)
python3 $data/kubelet_server.py - - s3cret $data "$tmp/plain.port" "$tmp/plain" &
pids+=($!)
check "the stand-ins listen" until_true 10 test -s "$tmp/tls.port" -a -s "$tmp/plain.port"
tls=$(cat "$tmp/tls.port")
plain=$(cat "$tmp/plain.port")

# ---- read at start, over the file ----
port=$(free_port)
replace "$tmp/a.json" "{$(be true), $(own "$port" 0.5)}"	# the file would enforce
slo "$tmp/tls" node-a 1 "{$(be false)}"
KOORD_TEST_HOST=127.0.0.1 KOORD_TEST_NODE=node-a $bin --config "$tmp/a.json" \
	--nodeslo 'https://${KOORD_TEST_HOST}:'"$tls"'/apis/slo.koordinator.sh/v1alpha1/nodeslos/${KOORD_TEST_NODE}' \
	--nodeslo-token "$tmp/token" --nodeslo-ca "$tmp/k.crt" --nodeslo-interval 1 2>"$tmp/a.err" &
daemon=$!
pids+=($daemon)
check "it serves on the file's listen address" until_true 30 is "$port" koord_bpf_nodeslo_up 1
check "... says where its configuration comes from" \
	grep -q "configuration: NodeSLO node-a (resourceVersion 1) over $tmp/a.json$" "$tmp/a.err"
check "... and enforcement is the NodeSLO's (off) from the start" \
	grep -q "^koord-bpf: serving .*; enforcement off$" "$tmp/a.err"

# ---- applied at each change ----
slo "$tmp/tls" node-a 2 "{$(be true), \"extensions\": {$(own 1 7)}}"
check "a new resourceVersion enabling enforcement: it is on" \
	until_true 15 is "$port" koord_bpf_enforcement_enabled 1
check "... logged" grep -q \
	"reloaded NodeSLO node-a (resourceVersion 2) over $tmp/a.json: enforcement on$" "$tmp/a.err"
check "... counted" is "$port" 'koord_bpf_config_reloads_total{result="ok"}' 1
check "its koordBPF section is ignored: the file's period stays" is "$port" koord_bpf_period_seconds 0.5
check "... and said" grep -q \
	"NodeSLO node-a (resourceVersion 2): koordBPF: ignored, koord-bpf's own settings come from $tmp/a.json$" \
	"$tmp/a.err"

slo "$tmp/tls" node-a 3 "{$(be '"yes"')}"
check "a NodeSLO with a bad value is refused" \
	until_true 15 is "$port" koord_bpf_config_last_reload_successful 0
check "... the configuration before stays: enforcement on" is "$port" koord_bpf_enforcement_enabled 1
check "... counted" is "$port" 'koord_bpf_config_reloads_total{result="error"}' 1
check "... logged with the reason" bash -c 'grep -q "resourceUsedThresholdWithBE.enable" "$1" &&
	grep -q "reload of NodeSLO node-a (resourceVersion 3) over .*: keeping the previous configuration$" "$1"' \
	_ "$tmp/a.err"

replace "$tmp/tls/node-a.json" '{"apiVersion": "v1", "kind": "Status", "code": 200}'
check "an answer that is no NodeSLO: the poll fails" until_true 15 is "$port" koord_bpf_nodeslo_up 0
check "... and changes nothing: enforcement on" is "$port" koord_bpf_enforcement_enabled 1
check "... no configuration read" is "$port" 'koord_bpf_config_reloads_total{result="error"}' 1
check "... logged with the reason" grep -q 'nodeslo: .*not a NodeSLO (kind "Status")' "$tmp/a.err"

slo "$tmp/tls" node-a 4 "{$(be false)}"
check "a good one again: enforcement off" until_true 15 is "$port" koord_bpf_enforcement_enabled 0
check "... and the last read succeeded" is "$port" koord_bpf_config_last_reload_successful 1

# ---- the file edited: koordBPF from it, Koordinator's sections still the NodeSLO's ----
replace "$tmp/a.json" "{$(be true), $(own "$port" 0.25)}"
check "an edit of the file is read: its period" until_true 15 is "$port" koord_bpf_period_seconds 0.25
check "... with the NodeSLO's enforcement (off), not the file's" \
	is "$port" koord_bpf_enforcement_enabled 0
kill -HUP $daemon
check "SIGHUP reads both again" until_true 10 bash -c \
	'[ "$(grep -c "reloaded NodeSLO node-a (resourceVersion 4) over .*: enforcement off$" "$1")" = 3 ]' \
	_ "$tmp/a.err"
kill -TERM $daemon; wait $daemon; rc=$?
check "SIGTERM: exit 0" [ "$rc" -eq 0 ]
check "no error or warning but the refused NodeSLO and the failed poll" quiet_but "$tmp/a.err" \
	"reload of NodeSLO\|resourceUsedThresholdWithBE.enable\|nodeslo: .*not a NodeSLO"

# ---- no NodeSLO yet: the file until it comes; plain HTTP, no token ----
port=$(free_port)
replace "$tmp/b.json" "{$(own "$port" 0.5)}"
$bin --config "$tmp/b.json" --nodeslo "http://127.0.0.1:$plain/apis/slo.koordinator.sh/v1alpha1/nodeslos/node-b" \
	--nodeslo-token "$tmp/token" --nodeslo-interval 1 2>"$tmp/b.err" &
daemon=$!
pids+=($daemon)
check "no NodeSLO (404): it serves as the file says" until_true 30 is "$port" koord_bpf_nodeslo_up 0
check "... and says so" grep -q "nodeslo: .*404; starting from $tmp/b.json until it answers$" "$tmp/b.err"
replace "$tmp/b.json" "{$(own "$port" 0.25)}"
check "an edit of the file, no NodeSLO applied: read" until_true 15 is "$port" koord_bpf_period_seconds 0.25
slo "$tmp/plain" node-b 7 "{$(be true)}"
check "the NodeSLO comes, over plain HTTP without a token: applied" \
	until_true 15 is "$port" koord_bpf_enforcement_enabled 1
check "... logged" grep -q "reloaded NodeSLO node-b (resourceVersion 7) over .*: enforcement on$" "$tmp/b.err"
kill -TERM $daemon; wait $daemon; rc=$?
check "SIGTERM: exit 0" [ "$rc" -eq 0 ]
check "no error or warning but the missing NodeSLO's" quiet_but "$tmp/b.err" "nodeslo: .*HTTP status 404"

# ---- the Node object (--node): the kubelet's reservation and the annotation, the larger ----
mkdir -p "$tmp/tls/nodes"
node() { # node CPU_ALLOCATABLE MEMORY_ALLOCATABLE [ANNOTATION]: node-c of 4 cores and 8 GiB
	local ann=${3:+", \"annotations\": {\"node.koordinator.sh/reservation\": $(printf '%s' "$3" |
		python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')}"}
	replace "$tmp/tls/nodes/node-c.json" "{\"apiVersion\": \"v1\", \"kind\": \"Node\",
 \"metadata\": {\"name\": \"node-c\"$ann},
 \"status\": {\"capacity\": {\"cpu\": \"4\", \"memory\": \"8Gi\", \"pods\": \"110\"},
             \"allocatable\": {\"cpu\": \"$1\", \"memory\": \"$2\", \"pods\": \"110\"}}}"
}
reserved() { # reserved PORT CORES BYTES: what the batch capacity takes as reserved now
	is "$1" 'koord_bpf_batch_cpu_cores{part="reserved"}' "$2" &&
		[ "$(metric "$tmp/m" 'koord_bpf_batch_memory_bytes{part="reserved"}')" = "$3" ]
}
port=$(free_port)
replace "$tmp/c.json" "{\"koordBPF\": {\"listen\": \"127.0.0.1:$port\", \"period\": 0.5,
  \"stateDir\": \"$tmp/state\", \"cgroupRoots\": [\"/koord-nodeslo-test-none\"],
  \"reservation\": {\"resources\": {\"cpu\": \"250m\"}}}}"
node 3500m 7Gi '{"resources": {"cpu": "1", "memory": "512Mi"}}'
$bin --config "$tmp/c.json" --node "https://127.0.0.1:$tls/api/v1/nodes/node-c" \
	--nodeslo-token "$tmp/token" --nodeslo-ca "$tmp/k.crt" --nodeslo-interval 1 2>"$tmp/c.err" &
daemon=$!
pids+=($daemon)
check "--node: the annotation's cores (1), the kubelet's memory (1 GiB): the larger of each" \
	until_true 30 reserved "$port" 1 1073741824
check "... logged with both sources" grep -q "node node-c reserves 1 cores and 1024 MiB for the system (the kubelet's 0.5 and 1024 MiB; node.koordinator.sh/reservation 1 and 512 MiB, CPUs none): now 1 cores and 1024 MiB with koordBPF.reservation$" "$tmp/c.err"
node 3500m 7Gi '{"reservedCPUs": "0-1"}'
check "the annotation's reservedCPUs win over its resources: 2 cores" until_true 15 reserved "$port" 2 1073741824
node 1 7Gi '{"reservedCPUs": "0-1"}'
check "the kubelet reserving more (3 cores): 3" until_true 15 reserved "$port" 3 1073741824
node 4 8Gi
check "neither reserves: the file's 0.25 cores" until_true 15 reserved "$port" 0.25 0
node 4 8Gi '{"resources": {"cpu": "lots"}}'
check "a bad annotation: the poll fails with the reason" until_true 15 is "$port" koord_bpf_node_up 0
check "... the last good answer stays" reserved "$port" 0.25 0
check "... logged" grep -q 'node: .*resources.cpu' "$tmp/c.err"
kill -HUP $daemon
check "a SIGHUP keeps the Node's part" until_true 10 grep -q "reloaded $tmp/c.json" "$tmp/c.err"
node 1 8Gi
check "a good one again: applied (3 cores)" until_true 15 reserved "$port" 3 0
kill -TERM $daemon; wait $daemon; rc=$?
check "SIGTERM: exit 0" [ "$rc" -eq 0 ]
check "no error or warning but the bad annotation's" quiet_but "$tmp/c.err" "node: .*resources.cpu"
$bin --node 'https://${KOORD_TEST_UNSET_VAR}/x' 2>"$tmp/d.err"; rc=$?
check "--node with an unset \${VAR}: exit 1" bash -c \
	'[ "$1" -eq 1 ] && grep -q "\${KOORD_TEST_UNSET_VAR} is not set" "$2"' _ "$rc" "$tmp/d.err"

# ---- a URL naming an unset variable: a mistake, refused before anything ----
$bin --nodeslo 'https://${KOORD_TEST_UNSET_VAR}/x' 2>"$tmp/c.err"; rc=$?
check "an unset \${VAR} in the URL: exit 1, saying which" bash -c \
	'[ "$1" -eq 1 ] && grep -q "\${KOORD_TEST_UNSET_VAR} is not set in the environment" "$2"' _ "$rc" "$tmp/c.err"

$bin --nodeslo http://127.0.0.1:1/x --nodeslo-interval 0.5 2>"$tmp/c.err"; rc=$?
check "an interval under 1 s: exit 1, saying the range" bash -c \
	'[ "$1" -eq 1 ] && grep -q "bad --nodeslo-interval \"0.5\": want seconds, 1 <= seconds <= 3600" "$2"' \
	_ "$rc" "$tmp/c.err"

echo "test_nodeslo: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
