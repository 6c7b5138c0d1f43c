#!/usr/bin/env bash
# Overload: 100 concurrent /metrics scrapers on loopback for KOORD_OVERLOAD_S
# (default 30) seconds, a connection each request, gzip asked like
# Prometheus does, 4 from each of 25 loopback addresses (one address gets 8
# connections at most; the monitor asks from its own). The daemon must stay responsive (/healthz 200 within 2 s
# every time it is asked, most scrapes served) and its period must not slip:
# every window it publishes meanwhile (/api/containers duration_s) within 10%
# of the 1 s period, and the period's own work (koord_bpf_period_duration_seconds)
# well inside it.
set -u
cd "$(dirname "$0")/../.."
secs=${KOORD_OVERLOAD_S:-30}
. tests/lib/testlib.sh

tmp=$(mktemp -d /tmp/koord-overload-XXXXXX)

start_daemon "$tmp/daemon.log" --period 1 --max-containers 16384

python3 - "$port" "$secs" >"$tmp/result" <<'EOF'
import http.client, json, sys, threading, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
end = time.monotonic() + secs
lock = threading.Lock()
st = {"ok": 0, "failed": 0, "bytes": 0, "health": [], "health_bad": 0, "windows": [], "work": []}

def get(path, timeout, gzip=False, src="127.0.0.1"):
	c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(src, 0))
	try:
		c.request("GET", path, headers={"Accept-Encoding": "gzip"} if gzip else {})
		r = c.getresponse()
		return r.status, r.read()
	finally:
		c.close()

def scraper(src):
	while time.monotonic() < end:
		try:
			status, body = get("/metrics", 10, True, src)
			good = status == 200
		except Exception:
			good, body = False, b""
		with lock:
			st["ok" if good else "failed"] += 1
			st["bytes"] += len(body)

def monitor():
	seen = set()
	while time.monotonic() < end:
		t = time.monotonic()
		try:
			status, _ = get("/healthz", 2)
		except Exception:
			status = 0
		dt = time.monotonic() - t
		st["health"].append(dt)
		if status != 200:
			st["health_bad"] += 1
		try:
			status, body = get("/api/containers", 2)
			doc = json.loads(body)
			key = (doc["duration_s"], len(doc["containers"]))
			if key not in seen:
				seen.add(key)
				st["windows"].append(doc["duration_s"])
			status, body = get("/metrics", 2)
			for line in body.decode().splitlines():
				if line.startswith("koord_bpf_period_duration_seconds "):
					st["work"].append(float(line.split()[1]))
		except Exception:
			pass
		time.sleep(max(0, 0.5 - (time.monotonic() - t)))

threads = [threading.Thread(target=scraper, args=("127.0.0.%d" % (2 + i // 4),)) for i in range(100)]
threads.append(threading.Thread(target=monitor))
for t in threads:
	t.start()
for t in threads:
	t.join()
h = sorted(st["health"])
print(json.dumps({"ok": st["ok"], "failed": st["failed"], "mb": st["bytes"] / 1e6,
		  "health_n": len(h), "health_bad": st["health_bad"],
		  "health_max": h[-1] if h else None, "health_p50": h[len(h) // 2] if h else None,
		  "windows": st["windows"][1:], "work_max": max(st["work"]) if st["work"] else None}))
EOF
res=$(cat "$tmp/result")
echo "# $res"
val() { python3 -c "import json,sys; v = json.loads(sys.argv[1])$2; print(v)" "$res"; }
ok=$(val "$res" '["ok"]') failed=$(val "$res" '["failed"]')
check "100 scrapers for $secs s: $ok scrapes served, $failed failed" \
	[ "$ok" -gt 0 -a "$failed" -le $(( (ok + failed) / 100 )) ]
check "/healthz answered 200 within 2 s every time ($(val "$res" '["health_n"]') asks, max $(val "$res" '["health_max"]') s)" \
	[ "$(val "$res" '["health_bad"]')" -eq 0 ]
check "every window published meanwhile lasted 0.9-1.1 s ($(val "$res" '["windows"]; v = "%d, %.4f-%.4f s" % (len(v), min(v), max(v)) if v else "none"'))" \
	python3 -c 'import json,sys; w = json.loads(sys.argv[1])["windows"]; sys.exit(not (len(w) >= '"$((secs / 2))"' and all(0.9 <= x <= 1.1 for x in w)))' "$res"
check "the period's own work stayed under 0.5 s (max $(val "$res" '["work_max"]') s)" \
	python3 -c 'import json,sys; w = json.loads(sys.argv[1])["work_max"]; sys.exit(not (w is not None and w < 0.5))' "$res"
stop_clean $daemon "$tmp/daemon.log"
summary test_overload
