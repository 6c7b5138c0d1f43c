#!/usr/bin/env bash
# deploy/monitoring.yaml and deploy/dashboard.json against a real Prometheus (Debian's)
# scraping a real koord-bpf: an online probe and a BE hog in kubepods-like cgroups, the
# daemon scraped every second with the PodMonitor's node label, the PrometheusRule's
# groups loaded. Every rule must evaluate without error, and every dashboard panel must
# show data: its queries, the variables filled in, run on the live series.
set -u
cd "$(dirname "$0")/../.."
bin=build/koord-bpf
. tests/bpf/lib.sh

command -v prometheus >/dev/null || {
	echo "not ok - prometheus is not installed (scripts/deps.sh installs it)"
	echo "test_monitoring: 0 passed, 1 failed"
	exit 1
}
tmp=$(mktemp -d /tmp/koord-monitoring-test-XXXXXX)
cgdir=
cleanup() {
	[ "$BASHPID" = "$$" ] || exit 1
	stop_pids
	remove_tree "$root" "$cgdir"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- the workload: an online probe and a BE hog on CPU 0 ----
root=$(build/koord-interference -d 0.1 --json 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["hierarchy"]["root"])')
rel=/koord-monitoring-test-$$
cgdir=$root$rel
probe=$rel/kubepods/burstable/pod22222222-0000-0000-0000-000000000001/probe
hog=$rel/kubepods/besteffort/pod22222222-0000-0000-0000-000000000002/hog
mkdir -p "$root$probe" "$root$hog"
(echo 0 > "$root$probe/cgroup.procs" && exec taskset -c 0 timeout 120 sh -c 'while :; do sleep 0.001; done') &
pids+=($!)
(echo 0 > "$root$hog/cgroup.procs" && exec taskset -c 0 timeout 120 sh -c 'while :; do :; done') &
pids+=($!)

# ---- the daemon and Prometheus ----
port=$(free_port)
$bin --listen 127.0.0.1:"$port" --period 1 2>"$tmp/daemon.err" &
pids+=($!)
python3 - "$tmp" <<'PY'
import sys, yaml
tmp = sys.argv[1]
mon = [d for d in yaml.safe_load_all(open('deploy/monitoring.yaml')) if d]
rule = next(d for d in mon if d['kind'] == 'PrometheusRule')
yaml.safe_dump({'groups': rule['spec']['groups']}, open(tmp + '/rules.yaml', 'w'))
PY
pport=$(free_port)
cat > "$tmp/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [rules.yaml]
scrape_configs:
  - job_name: koord-bpf
    static_configs:
      - targets: ["127.0.0.1:$port"]
        labels: {node: test-node}
YAML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address=127.0.0.1:"$pport" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
api=http://127.0.0.1:$pport/api/v1
target_up() {
	curl -sf --max-time 5 -o "$tmp/targets.json" "$api/targets" && python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["data"]["activeTargets"]
sys.exit(0 if t and all(x["health"] == "up" for x in t) else 1)' "$tmp/targets.json"
}
check "Prometheus scrapes the daemon" until_true 60 target_up || {
	cat "$tmp/prometheus.log" "$tmp/daemon.err"
}
sleep 15	# rates over 10 s need a few scrapes, the rules a few evaluations

rules_ok() {
	curl -s --max-time 5 "$api/rules" | python3 -c '
import json, sys
rules = [r for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]]
bad = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
print("  %d rules evaluated, not ok: %s" % (len(rules), bad))
sys.exit(0 if len(rules) >= 5 and not bad else 1)'
}
check "every rule of the PrometheusRule evaluates on the live series" rules_ok

# every panel: at least one of its queries returns series; every query succeeds
panels_show_data() {
	python3 - "$api" <<'PY'
import json, sys, urllib.parse, urllib.request
api = sys.argv[1]
dash = json.load(open('deploy/dashboard.json'))
fill = {'$__rate_interval': '10s', '$__interval': '1s', '$node': 'test-node'}
ok = True
def query(e):
    for k, v in fill.items():
        e = e.replace(k, v)
    url = api + '/query?' + urllib.parse.urlencode({'query': e})
    r = json.load(urllib.request.urlopen(url, timeout=10))
    if r['status'] != 'success':
        raise ValueError(r)
    return r['data']['result']
var = dash['templating']['list'][1]['query']['query']
nodes = query(var.replace('label_values(', 'group by (node) (').replace(', node)', ')'))
if [n['metric'].get('node') for n in nodes] != ['test-node']:
    print('  the node variable finds %s' % nodes); ok = False
for p in dash['panels']:
    counts = [len(query(t['expr'])) for t in p['targets']]
    print('  panel %d "%s": %s series' % (p['id'], p['title'], counts))
    ok &= any(counts)
sys.exit(0 if ok else 1)
PY
}
check "every dashboard panel shows data from the live daemon" panels_show_data

top_culprit_is_hog() {
	python3 - "$api" "$hog" <<'PY'
import json, sys, urllib.parse, urllib.request
api, hog = sys.argv[1], sys.argv[2]
dash = json.load(open('deploy/dashboard.json'))
e = next(p for p in dash['panels'] if p['title'].startswith('Top culprits'))['targets'][0]['expr']
e = e.replace('$__rate_interval', '10s').replace('$node', 'test-node').replace('topk(10,', 'topk(1,')
r = json.load(urllib.request.urlopen(api + '/query?' + urllib.parse.urlencode({'query': e}), timeout=10))
top = r['data']['result']
print('  top culprit: %s' % [(t['metric'].get('cgroup'), t['value'][1]) for t in top])
sys.exit(0 if top and top[0]['metric'].get('cgroup') == hog else 1)
PY
}
check "the top-culprits panel puts the hog first" top_culprit_is_hog
check "no error in the daemon's log" bash -c '! grep -qi "error\|warn" "$1" || { cat "$1"; false; }' _ "$tmp/daemon.err"
echo "test_monitoring: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
