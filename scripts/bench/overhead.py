#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Whole-system overhead (issue 7, item 2): the throughput of a context-switch
heavy load with the daemon running (default config: it measures, it does not
act) against nothing attached, in the same run; and, for reference, with
libbpf-tools' runqlat (one system-wide histogram) attached instead, and with
the floor (scripts/bench/floor.bpf.c: one sched_switch program that only
counts), what attaching anything to every switch costs.

Each round runs every condition, the order rotating (none koord-bpf runqlat
floor, koord-bpf runqlat floor none, ...), and each load once per condition:
`perf bench sched pipe -l LOOPS` (its "usecs/op"), the same pinned to CPU 0,
and `hackbench -p -g 2 -l LOOPS` (its "Time:"). The figure is the median of the per-round ratios (with the tool /
without; 1.00 = no cost) with their min..max. Budget: koord-bpf's median
ratio <= 1.03.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON = os.path.join(ROOT, "build", "koord-bpf")
LOADER = os.path.join(ROOT, "build", "bench", "koord-bench-load")
FLOOR = os.path.join(ROOT, "build", "bench", "floor.bpf.o")
BUDGET = 1.03


def log(msg):
    print(f"overhead: {msg}", file=sys.stderr, flush=True)


def pipe_usecs(loops, pin=False):
    cmd = ["perf", "bench", "sched", "pipe", "-l", str(loops)]
    out = subprocess.run(["taskset", "-c", "0"] + cmd if pin else cmd,
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"([\d.]+)\s+usecs/op", out).group(1))


def hackbench_s(loops):
    out = subprocess.run(["hackbench", "-p", "-g", "2", "-l", str(loops)],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"Time:\s+([\d.]+)", out).group(1))


class Tool:
    """A tracer running in the background, ready once its output says so."""

    def __init__(self, cmd, ready, stream):
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        for line in getattr(self.p, stream):
            if ready in line:
                return
        raise RuntimeError(f"{cmd[0]} did not start")

    def stop(self):
        self.p.send_signal(signal.SIGINT if self.p.args[0] == "stdbuf" else signal.SIGTERM)
        self.p.wait(timeout=10)


def measure(loads, cond, port, runqlat):
    tool = None
    if cond == "koord-bpf":
        tool = Tool([DAEMON, "--listen", f"127.0.0.1:{port}"], "serving", "stderr")
    elif cond == "runqlat":
        # line-buffered: its "Tracing" line must arrive before its first histogram
        tool = Tool(["stdbuf", "-oL", runqlat, "5", "1000"], "Tracing run queue latency",
                    "stdout")
    elif cond == "floor":
        tool = Tool([LOADER, FLOOR], "bench-load: attached", "stderr")
    try:
        time.sleep(1)   # past the start-up work
        return {name: fn() for name, fn in loads}
    finally:
        if tool:
            tool.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--pipe-loops", type=int, default=200000)
    ap.add_argument("--hackbench-loops", type=int, default=2000)
    ap.add_argument("--port", type=int, default=19417)
    ap.add_argument("--out", help="directory to write overhead.json into")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("overhead: needs root (the daemon loads BPF)")
    # Unpinned, the two tasks land on one CPU or on two from run to run (cross-CPU
    # wake-ups cost several times more here), which makes single ratios bimodal;
    # pinned to one CPU, every op is two plain context switches.
    loads = [("perf bench sched pipe", lambda: pipe_usecs(a.pipe_loops)),
             ("pipe, both on CPU 0", lambda: pipe_usecs(a.pipe_loops, pin=True)),
             ("hackbench -p -g 2", lambda: hackbench_s(a.hackbench_loops))]
    runqlat = shutil.which("runqlat")
    conds = ["none", "koord-bpf"] + (["runqlat"] if runqlat else [])
    if not runqlat:
        log("runqlat (libbpf-tools) missing: measured without that reference")
    if os.path.exists(LOADER) and os.path.exists(FLOOR):
        conds.append("floor")
    else:
        log("the floor is not built (make bench-build): measured without it")
    ratios = {(c, n): [] for c in conds[1:] for n, _ in loads}
    for r in range(a.rounds):
        order = conds[r % len(conds):] + conds[:r % len(conds)]
        got = {cond: measure(loads, cond, a.port, runqlat) for cond in order}
        for c, n in ratios:
            ratios[c, n].append(got[c][n] / got["none"][n])
        log(f"round {r + 1}/{a.rounds} ({' '.join(order)}): " +
            ", ".join(f"{c} {n} {v[-1]:.3f}" for (c, n), v in ratios.items()))
    print(f"\nWhole-system overhead, {a.rounds} interleaved rounds "
          f"(load average {os.getloadavg()[0]:.1f}):")
    print(f"  {'tool':10} {'load':24} {'median':>7} {'min..max':>13}  budget <= {BUDGET}")
    verdicts = []
    for (c, n), v in ratios.items():
        med = statistics.median(v)
        verdict = ("PASS" if med <= BUDGET else "OVER") if c == "koord-bpf" else "(reference)"
        verdicts.append({"tool": c, "load": n, "median": med, "min": min(v), "max": max(v),
                         "ratios": v, "verdict": verdict})
        print(f"  {c:10} {n:24} {med:7.3f} {min(v):6.3f}..{max(v):.3f}  {verdict}  "
              f"[{', '.join(f'{x:.3f}' for x in v)}]")
    if a.out:
        with open(os.path.join(a.out, "overhead.json"), "w") as f:
            json.dump({"rounds": a.rounds, "load_average": os.getloadavg()[0],
                       "verdicts": verdicts}, f, indent=1)


if __name__ == "__main__":
    main()
