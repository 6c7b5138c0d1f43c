#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""koord-bpf benchmark, issue 7 item 4: reaction time, from the moment a BE hog
starts next to an online probe to (a) the first detection and (b) the first
enforcement write; run by `sudo make bench-reaction`.

An online probe (build/bench/koord-bench-work server: sleeps 1 ms, works
300 us, pinned to CPU 0) runs in a burstable pod of a kubepods-shaped tree
(/koord-bench-PID/kubepods). For each run a fresh build/koord-bpf is started
with enforcement at default settings (resourceUsedThresholdWithBE.enable,
cgroupRoots the tree's kubepods), and waits --warmup periods plus a random
fraction of a period (so that t0 falls anywhere in a period). At t0
(CLOCK_MONOTONIC) a besteffort pod is made with a CPU hog pinned to CPU 0:

- (a) detection: the first time /api/containers (polled every 20 ms) lists the
  hog's cgroup among `suspects`;
- (b) the first enforcement write: the first time the BE root's weight reads
  the lowest (cpu.shares 2, cpu.weight 1: the default wake-up priority;
  polled every 1 ms).

Two cases: "new BE root", the besteffort QoS level does not exist before t0
(made with the pod: the daemon must find it, then write); "BE root set
before", it existed and the daemon gave it the lowest weight at start, so the
new pod is covered the moment it is made (no write is needed; only (a) is
measured).

(c) issue 18's reaction: from the onset of the probe's first wait of 1 ms or
more that ended after the hog joined its pod, to the first write. 1 ms is
the daemon's default reactWaitUs: such a wait behind a container the daemon
does not know yet is a record that wakes its loop. The hog joins its pod
itself, prints when, sleeps 1 ms and spins, as a runtime's process joins its
pod, waits to be started and execs. The probe reports each wake-up 1 ms or
more late with the time it woke; the wait began that much before (possibly
before the hog joined: then counted from there). Runs alternate the periods
(--periods), the cases and reactOnLongWaits.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cgbench			# noqa: E402
from bench import busy_processes, fmt_spread, log, median	# noqa: E402

BUDGET_MS = 1000.0
REACT_BUDGET_MS = 100.0		# issue 18: onset of a long online wait -> first write
LATE_US = 1000			# the daemon's default reactWaitUs


class Probe:
    """The online server; its waits of LATE_US or more: (woke, onset) CLOCK_MONOTONIC ns."""

    def __init__(self, cgroup):
        self.late = []
        self.proc = cgbench.spawn([cgbench.WORK, "server", "1000", "300", str(LATE_US)],
                                  cgroup=cgroup, cpu=0, stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:		# "late WOKE_NS US"
            _, woke, us = line.split()
            self.late.append((int(woke), int(woke) - int(us) * 1000))

    def first_late_after(self, t0):
        """(woke, onset) of the first such wait that ended after @t0, or None."""
        return next((w for w in self.late if w[0] >= t0), None)


def lowest_weight(kubepods):
    """The weight file of the hierarchy under @kubepods and its lowest value."""
    v1 = os.path.exists(os.path.join(kubepods, "cpu.shares"))
    return ("cpu.shares", "2") if v1 else ("cpu.weight", "1")


def poll_priority(path, want, t0, until, out):
    """Every 1 ms until @until: the first time @path reads @want, in ms after @t0."""
    while time.monotonic_ns() < until:
        if cgbench.read_file(path) == want:
            out["write_ms"] = (time.monotonic_ns() - t0) / 1e6
            return
        time.sleep(0.001)


def one_run(tree, probe, period, case, react, a, out):
    """One daemon, one hog: {detect_ms, write_ms, onset_ms, reaction_ms, ...}. @react: reactOnLongWaits."""
    be_root = os.path.join(tree.kubepods, "besteffort")
    if case == "set-before":
        tree.mkdir("kubepods/besteffort")
    cfg = {"resourceUsedThresholdWithBE": {"enable": True},
           "koordBPF": {"cgroupRoots": [tree.relpath(tree.kubepods)],
                        "reactOnLongWaits": react == "on"}}
    d = cgbench.Daemon(out, cfg, ["--period", str(period)], a.koord)
    res = {"period": period, "case": case, "react": react, "load": busy_processes()["loadavg"]}
    hog = None
    try:
        d.wait_ready()
        time.sleep(a.warmup * period + random.uniform(0, period))
        if case == "set-before":
            wfile, want = lowest_weight(tree.kubepods)
            res["set_before"] = cgbench.read_file(os.path.join(be_root, wfile)) == want
        t0 = time.monotonic_ns()
        until = t0 + int(a.timeout * 1e9)
        ctr = tree.pod("besteffort", "hog")
        # it joins the pod itself, then sleeps 1 ms and spins, as a runtime's process does
        hog = cgbench.spawn([cgbench.WORK, "hog", ctr], cpu=0, stdout=subprocess.PIPE, text=True)
        hog_ns = int(hog.stdout.readline().split()[1])	# "start T_NS": from then in its pod
        res["hog_started_ms"] = (hog_ns - t0) / 1e6
        poller = None
        if case == "new-root":
            wfile, want = lowest_weight(tree.kubepods)
            poller = threading.Thread(target=poll_priority,
                                      args=(os.path.join(be_root, wfile), want, t0, until, res))
            poller.start()
        rel = tree.relpath(ctr)
        while time.monotonic_ns() < until and "detect_ms" not in res:
            status, body = d.get("/api/containers", 1)
            if status == 200 and any(s["cgroup"] == rel for s in
                                     json.loads(body).get("suspects") or []):
                res["detect_ms"] = (time.monotonic_ns() - t0) / 1e6
                break
            time.sleep(0.02)
        if poller:
            poller.join()
        # the first that ended after the hog joined: it may have begun before (counted from there)
        late = probe.first_late_after(hog_ns)
        res["onset_ms"] = (late[1] - t0) / 1e6 if late else None
        res["late_us"] = (late[0] - late[1]) / 1e3 if late else None
        # what BPF made of it: records sent (react_wait, long_wait) and walks they caused
        status, body = d.get("/metrics", 5)
        res["events"] = {k: collector_events(body, k) for k in ("react_wait", "long_wait")}
        if late and "write_ms" in res and res["write_ms"] >= res["onset_ms"]:
            res["reaction_ms"] = res["write_ms"] - res["onset_ms"]
    finally:
        if hog:
            cgbench.stop(hog)
        rc = d.stop()		# puts the weight back
        with open(d.log, errors="replace") as f:
            res["walked_at_once"] = sum("walked at once" in line for line in f)
        # the next run starts again without a besteffort pod (and, for new-root, without the level)
        for pod in os.listdir(be_root) if os.path.isdir(be_root) else []:
            if pod.startswith("pod"):
                os.rmdir(os.path.join(be_root, pod, "hog"))
                os.rmdir(os.path.join(be_root, pod))
        if os.path.isdir(be_root):
            os.rmdir(be_root)
    if rc:
        raise RuntimeError(f"koord-bpf exited with {rc}; see {d.log}")
    return res


def collector_events(body, kind):
    """koord_bpf_collector_events_total{kind=@kind} in a /metrics @body, or None."""
    want = f'koord_bpf_collector_events_total{{kind="{kind}"}} '
    for line in body.decode(errors="replace").splitlines():
        if line.startswith(want):
            return int(float(line.split()[1]))
    return None


def verdict(ms, budget=BUDGET_MS):
    return "PASS" if ms is not None and ms <= budget else "OVER"


def p95(xs):
    return sorted(xs)[min(len(xs) - 1, int(0.95 * len(xs)))]


def report(runs, periods, reacts):
    lines = ["| period s | reactOnLongWaits | case | (a) detection ms, median [min..max] | (b) first write ms | "
             "budget ≤ 1000 ms (a / b) | onset of the probe's first ≥ 1 ms wait behind the hog, ms "
             "after t0 | "
             "(c) that onset → first write, ms: median / p95 [min..max] | budget ≤ 100 ms (c) | "
             "runs | load average |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for p, react, case in ((p, r, c) for p in periods for r in reacts
                           for c in ("new-root", "set-before")):
        rs = [r for r in runs if r["period"] == p and r["case"] == case and
              r.get("react", "on") == react]
        if not rs:
            continue
        det = [r["detect_ms"] for r in rs if "detect_ms" in r]
        wr = [r["write_ms"] for r in rs if "write_ms" in r]
        lw = [r["onset_ms"] for r in rs if r.get("onset_ms") is not None]
        rc = [r["reaction_ms"] for r in rs if "reaction_ms" in r]
        missed = len(rs) - len(det)
        v = {"period": p, "react": react, "case": case, "detect_ms": median(det) if det else None,
             "write_ms": median(wr) if wr else None,
             "reaction_ms": median(rc) if rc else None, "reaction_p95_ms": p95(rc) if rc else None}
        # a run that never detected (or never wrote) within the timeout is over budget
        v["detect"] = verdict(v["detect_ms"]) if not missed else "OVER"
        if case == "new-root":
            v["write"] = verdict(v["write_ms"]) if len(wr) == len(rs) else "OVER"
            wcell = fmt_spread(wr)
            # a write before any such wait (by the period) has no onset to count from
            v["reaction"] = verdict(v["reaction_p95_ms"], REACT_BUDGET_MS) if rc else "-"
            ccell = (f"{v['reaction_ms']:.0f} / {v['reaction_p95_ms']:.0f} [{min(rc):.0f}.."
                     f"{max(rc):.0f}] ({len(rc)} runs)" if rc else "-")
        else:
            v["reaction"] = "-"
            ccell = "none needed"
            before = sum(r.get("set_before", False) for r in rs)
            v["write"] = "PASS" if before == len(rs) else "OVER"
            wcell = f"none needed: BE root set before t0 in {before}/{len(rs)} runs"
        verdicts.append(v)
        loads = [float(r["load"].split()[0]) for r in rs]
        lines.append(f"| {p:g} | {react} | {case} | {fmt_spread(det)}"
                     f"{f' ({missed} not detected)' if missed else ''} | {wcell} | "
                     f"{v['detect']} / {v['write']} | "
                     f"{fmt_spread(lw) if lw else 'none'} ({len(lw)}/{len(rs)} runs) | "
                     f"{ccell} | {v['reaction']} | {len(rs)} | {fmt_spread(loads, 1)} |")
    return lines, verdicts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(cgbench.ROOT, "build", "bench"))
    ap.add_argument("--runs", type=int, default=10, help="runs per period and case (default 10)")
    ap.add_argument("--periods", default="1,0.2",
                    help="daemon periods in seconds, comma-separated (default: %(default)s)")
    ap.add_argument("--cases", default="new-root,set-before")
    ap.add_argument("--react", default="on,off",
                    help="reactOnLongWaits settings to compare (default: %(default)s)")
    ap.add_argument("--warmup", type=int, default=5,
                    help="periods before t0: the first is the daemon's start, then the baseline "
                         "the wake-up priority is judged on (default %(default)s)")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="seconds to wait for detection and the write (default 10)")
    a = cgbench.parse_args(ap, "reaction")
    periods = [float(x) for x in a.periods.split(",")]
    cases = a.cases.split(",")
    reacts = a.react.split(",")
    os.makedirs(a.out, exist_ok=True)
    cgbench.on_signals()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    runs = []
    try:
        tree = cgbench.Tree()
        probe = Probe(tree.pod("burstable", "probe"))
        combos = [(p, c, r) for p in periods for c in cases for r in reacts]
        for i in range(a.runs):
            # interleaved: every period and case once per round, the order rotating
            for p, c, rc in combos[i % len(combos):] + combos[:i % len(combos)]:
                r = one_run(tree, probe, p, c, rc, a, a.out)
                runs.append(r)
                log(f"reaction run {i + 1}/{a.runs}, period {p:g} s, {c}, react {rc}: detection "
                    f"{r.get('detect_ms', float('nan')):.0f} ms, write "
                    f"{r.get('write_ms', float('nan')):.0f} ms, reaction "
                    f"{r.get('reaction_ms', float('nan')):.0f} ms, first ≥ 1 ms wait "
                    f"{r['onset_ms'] if r['onset_ms'] is not None else float('nan'):.0f} ms"
                    f" ({r['late_us'] if r['late_us'] is not None else float('nan'):.0f} us late;"
                    f" records {r['events']}, walked at once {r['walked_at_once']})"
                    f" (load {r['load']})")
    except KeyboardInterrupt:
        log("interrupted: cleaning up")
        sys.exit(130)
    finally:
        cgbench.cleanup()
    lines, verdicts = report(runs, periods, reacts)
    head = [f"Run {started} .. {time.strftime('%H:%M:%S UTC', time.gmtime())}, {a.runs} runs per "
            f"period and case, interleaved; {os.cpu_count()} CPUs, kernel {os.uname().release}.", ""]
    text = "\n".join(head + lines) + "\n"
    with open(os.path.join(a.out, "reaction.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "reaction.json"), "w") as f:
        json.dump({"started": started, "args": vars(a), "runs": runs, "verdicts": verdicts},
                  f, indent=1)
    print(text)
    log(f"written {a.out}/reaction.md and reaction.json")


if __name__ == "__main__":
    main()
