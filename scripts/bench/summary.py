#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The last figure of every item of the benchmark (issue 7) with its budget and
PASS/OVER, in one table, from what the benches wrote into build/bench/:
results.json (bench.py: per-event cost, start-up), overhead.json, scale.json,
reaction.json, accuracy.txt and journal.json. `make bench` prints it last; an item whose
file is missing says which target measures it.
"""
import json
import os
import re
import statistics
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "bench")


def load(name):
    try:
        with open(os.path.join(OUT, name)) as f:
            return json.load(f) if name.endswith(".json") else f.read()
    except (OSError, ValueError):
        return None


def cost(rows):
    r = load("results.json") or {}
    vs = (r.get("cost") or {}).get("verdicts") or []
    for v in vs:
        lo, hi = v["ratio_spread"] or (v["ratio"], v["ratio"])
        rows.append((f"1. per switch, koord-bpf / runqlat ({v['load']})",
                     f"{v['koord']:.0f} vs {v['runqlat']:.0f} ns: {v['ratio']:.2f} [{lo:.2f}..{hi:.2f}]",
                     "≤ 1 (stretch ≤ 0.5)", f"{v['budget']} (stretch {v['stretch']})"))
    if not vs:
        rows.append(("1. per-event cost", "not measured", "≤ 1", "(make bench)"))
    st = r.get("startup") or {}
    for m, x in st.items():
        ms = statistics.median(x["ms"])
        rows.append((f"5. start-up at --max-containers {m}",
                     f"{ms:.0f} ms, maps' memlock {statistics.median(x['memlock']) / 1048576:.1f} MiB",
                     "≤ 300 ms", "PASS" if ms <= 300 else "OVER"))
    if not st:
        rows.append(("5. start-up", "not measured", "≤ 300 ms", "(make bench)"))


def overhead(rows):
    o = load("overhead.json")
    for v in (o or {}).get("verdicts", []):
        if v["tool"] == "koord-bpf":
            refs = {x["tool"]: x["median"] for x in o["verdicts"]
                    if x["load"] == v["load"] and x["tool"] != "koord-bpf"}
            ref = ", ".join(f"{t} {m:.3f}" for t, m in refs.items())
            rows.append((f"2. overhead, {v['load']}",
                         f"{v['median']:.3f} [{v['min']:.3f}..{v['max']:.3f}]" +
                         (f" ({ref})" if ref else ""), "≤ 1.03", v["verdict"]))
    if not o:
        rows.append(("2. whole-system overhead", "not measured", "≤ 1.03", "(make bench-overhead)"))


def scale(rows):
    s = load("scale.json")
    for v in (s or {}).get("verdicts", []):
        rows.append((f"3. user space at 10,000 containers ({v['config']}, {v['mode']})",
                     f"{v['cpu_ms']:.1f} ms CPU/period; own {v['own_mib']:.1f} MiB "
                     f"(RSS {v['rss_mib']:.1f}); growth {v['growth']:.1f}x per 10x",
                     "≤ 10 ms, ≤ 64 MiB", f"CPU {v['cpu']}, memory {v['rss']}"))
    if not s:
        rows.append(("3. user space per period", "not measured", "≤ 10 ms, ≤ 64 MiB",
                     "(make bench-scale)"))


def reaction(rows):
    r = load("reaction.json")
    fmt = lambda ms: "-" if ms is None else f"{ms:.0f} ms"
    for v in (r or {}).get("verdicts", []):
        rows.append((f"4. reaction, period {v['period']:g} s, {v['case']}, react {v['react']}",
                     f"detection {fmt(v['detect_ms'])}, first write {fmt(v['write_ms'])}",
                     "≤ 1 s", f"{v['detect']} / {v['write']}"))
        if v.get("reaction_ms") is not None:
            rows.append((f"4. reaction, period {v['period']:g} s, react {v['react']}: "
                         "first ≥ 1 ms online wait → first write",
                         f"median {fmt(v['reaction_ms'])}, p95 {fmt(v['reaction_p95_ms'])}",
                         "≤ 100 ms (p95)", v["reaction"]))
    if not r:
        rows.append(("4. reaction time", "not measured", "≤ 1 s", "(make bench-reaction)"))


def accuracy(rows):
    t = load("accuracy.txt")
    errs = [float(e) for e in re.findall(r"^\s+p[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)%", t or "", re.M)]
    if errs:
        rows.append(("6. histogram percentiles vs exact", f"worst error {max(errs):.1f}%",
                     "≤ 10%", "PASS" if max(errs) <= 10 else "OVER"))
    else:
        rows.append(("6. histogram accuracy", "not measured", "≤ 10%", "(make bench-accuracy)"))


def journal(rows):
    j = load("journal.json")
    if not j:
        rows.append(("7. journal", "not measured", "≤ 1 ms, ≤ 4x", "(make bench-journal)"))
        return
    amp = j["record_bytes"] / j["entry_bytes"]
    rows.append((f"7. journal at {j['entries']:,} entries: a record (fdatasync'ed), a lookup",
                 f"{j['record_us']:.0f} µs, {j['record_bytes']:.0f} B written per "
                 f"{j['entry_bytes']:.0f} B entry ({amp:.1f}x); lookup {j['lookup_ns']:.0f} ns",
                 "≤ 1 ms, ≤ 4x, ≤ 1 µs",
                 "PASS" if j["record_us"] <= 1000 and amp <= 4 and j["lookup_ns"] <= 1000
                 else "OVER"))


def main():
    rows = []
    for item in (cost, overhead, scale, reaction, accuracy, journal):
        item(rows)
    rows.sort(key=lambda r: r[0][0])
    print("\n| figure | measured | budget | result |\n|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
