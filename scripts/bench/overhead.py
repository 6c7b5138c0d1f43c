#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Whole-system overhead (issue 7, item 2): the throughput of a context-switch
heavy load with the daemon running (default config: it measures, it does not
act) against nothing attached, in the same run.

Each round runs both conditions, the order alternating (A B, B A, ...), and
each load once per condition: `perf bench sched pipe -l LOOPS` (its
"usecs/op") and `hackbench -p -g 2 -l LOOPS` (its "Time:"). The figure is
the median of the per-round ratios (with the daemon / without; 1.00 = no
cost) with their min..max. Budget: median ratio <= 1.03.
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON = os.path.join(ROOT, "build", "koord-bpf")
BUDGET = 1.03


def log(msg):
    print(f"overhead: {msg}", file=sys.stderr, flush=True)


def pipe_usecs(loops):
    out = subprocess.run(["perf", "bench", "sched", "pipe", "-l", str(loops)],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"([\d.]+)\s+usecs/op", out).group(1))


def hackbench_s(loops):
    out = subprocess.run(["hackbench", "-p", "-g", "2", "-l", str(loops)],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"Time:\s+([\d.]+)", out).group(1))


class Daemon:
    """build/koord-bpf on a free port, ready once it says it is serving."""

    def __init__(self, port):
        self.p = subprocess.Popen([DAEMON, "--listen", f"127.0.0.1:{port}"],
                                  stderr=subprocess.PIPE, text=True)
        for line in self.p.stderr:
            if "serving" in line:
                return
        raise RuntimeError("koord-bpf did not start")

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=10)


def measure(loads, daemon, port):
    d = Daemon(port) if daemon else None
    try:
        time.sleep(1)   # past the start-up work
        return {name: fn() for name, fn in loads}
    finally:
        if d:
            d.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--pipe-loops", type=int, default=200000)
    ap.add_argument("--hackbench-loops", type=int, default=2000)
    ap.add_argument("--port", type=int, default=19417)
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("overhead: needs root (the daemon loads BPF)")
    loads = [("perf bench sched pipe", lambda: pipe_usecs(a.pipe_loops)),
             ("hackbench -p -g 2", lambda: hackbench_s(a.hackbench_loops))]
    ratios = {name: [] for name, _ in loads}
    for r in range(a.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        got = {cond: measure(loads, cond, a.port) for cond in order}
        for name in ratios:
            ratios[name].append(got[True][name] / got[False][name])
        log(f"round {r + 1}/{a.rounds}: " +
            ", ".join(f"{n} {ratios[n][-1]:.3f}" for n in ratios))
    print(f"\nWhole-system overhead, {a.rounds} interleaved rounds "
          f"(load average {os.getloadavg()[0]:.1f}):")
    print(f"  {'load':24} {'median':>7} {'min..max':>13}  budget <= {BUDGET}")
    for name, v in ratios.items():
        med = statistics.median(v)
        print(f"  {name:24} {med:7.3f} {min(v):6.3f}..{max(v):.3f}  "
              f"{'PASS' if med <= BUDGET else 'OVER'}")


if __name__ == "__main__":
    main()
