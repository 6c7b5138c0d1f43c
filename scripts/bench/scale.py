#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""koord-bpf benchmark, issue 7 item 3: the daemon's user-space cost per period
at 100, 1,000 and 10,000 containers; run by `sudo make bench-scale`.

For each size N, a kubepods-shaped tree of N real cgroups is made in the cpu
hierarchy (/koord-bench-PID/kubepods/{besteffort,burstable}/pod<uuid>/c{0,1}:
N/2 pods of two containers, half besteffort, half burstable, so classification
runs on every one), and the same tree in the memory hierarchy (--mirror), as a
kubelet makes every pod in every v1 hierarchy: the daemon reads the pods'
memory for the batch capacity. build/koord-bpf is started on it
(--max-containers 16384), without a config (measurement only) and with an
enforcement config (resourceUsedThresholdWithBE.enable, cgroupRoots the tree's
kubepods). Then --hoppers processes (build/bench/koord-bench-work hop, each a
share of the containers) move through every container: write themselves to its
cgroup.procs, spin 5 us, sleep 20 us so that they are switched out and woken
there, so the collector holds entries for all of them:

- "active": the hoppers keep cycling, so containers run and wait in every
  window (how many did is reported: "in window");
- "idle": the hoppers have stopped; every container is known (in the maps and
  the daemon's table) but none ran in the window.

After --warmup periods, over --periods periods: CPU time per period done
(utime + stime from /proc/PID/stat, and the period thread's own share from
/proc/PID/task/PID/schedstat, divided by the periods the daemon logged: it
skips periods when it falls behind), each period's work (the daemon's -v log
line, the same figure as koord_bpf_period_duration_seconds), VmRSS and VmHWM,
then one scrape: the /metrics body size. Sizes and configs are
interleaved over --rounds rounds; one tree exists at a time (the daemon walks
the whole hierarchy, so another tree would be counted in).
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cgbench			# noqa: E402
from bench import busy_processes, fmt_spread, log, median	# noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
CPU_BUDGET_MS, RSS_BUDGET_MIB, AT = 10.0, 64.0, 10000
HOP_SLEEP_US = 20	# long enough that every sleep switches the hopper out (work.c)


def proc_cpu_s(pid):
    """utime + stime of the whole process, in seconds (clock ticks: 10 ms steps)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_cpu_s(pid, tid):
    """On-CPU time of one thread, in seconds, from schedstat (ns, exact)."""
    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def memory_mib(pid):
    """VmRSS, RssAnon and the daemon's own memory in MiB: own is VmRSS less the BPF maps
    mapped into it (anon_inode:bpf-map, kernel memory charged to the maps' memlock)."""
    rss, anon, bpf, in_map = status_kib(pid, "VmRSS"), status_kib(pid, "RssAnon"), 0, False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            key = line.split(maxsplit=1)[0]
            if not key.endswith(":"):	# a mapping's header: "start-end perms off dev inode path"
                in_map = line.rstrip().endswith("anon_inode:bpf-map")
            elif in_map and key == "Rss:":
                bpf += int(line.split()[1])
    return {"rss_mib": rss / 1024, "anon_mib": anon / 1024, "own_mib": (rss - bpf) / 1024}


class Hopper:
    """koord-bench-work hop through @dirs; the times of its passes."""

    def __init__(self, dirs, passes=0):
        self.passes = []
        self.proc = cgbench.spawn([cgbench.WORK, "hop", "5", str(HOP_SLEEP_US), str(passes)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.proc.stdin.write("\n".join(dirs) + "\n")
        self.proc.stdin.close()
        self.first = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:	# "pass K: N cgroups in T ms"
            self.passes.append(float(line.split(" in ")[1].split()[0]))
            self.first.set()
        self.first.set()

    def wait_first(self, timeout=120):
        if not self.first.wait(timeout) or not self.passes:
            raise RuntimeError("the hopper did not finish a pass")
        return self.passes[0]

    def stop(self):
        cgbench.stop(self.proc)


def period_lines(d):
    """The daemon's "period: N containers, R read, M known, T ms" debug lines so far (-v)."""
    with open(d.log, errors="replace") as f:
        return [float(l.rsplit(",", 1)[1].split()[0]) for l in f if "debug: period: " in l]


def measure(d, periods, period_s):
    """CPU per period, period work, memory and /metrics size over @periods periods."""
    pid = d.pid
    p0, c0, m0 = len(period_lines(d)), proc_cpu_s(pid), thread_cpu_s(pid, pid)
    time.sleep(periods * period_s)
    c1, m1, work = proc_cpu_s(pid), thread_cpu_s(pid, pid), period_lines(d)[p0:]
    # per period done: a daemon that falls behind skips periods (it does not burst)
    n = max(len(work), 1)
    res = {"cpu_ms": (c1 - c0) * 1e3 / n, "main_ms": (m1 - m0) * 1e3 / n, "periods": len(work),
           "work_ms": median(work), "work_max_ms": max(work) if work else None,
           "hwm_mib": status_kib(pid, "VmHWM") / 1024, **memory_mib(pid)}
    # one scrape, after the CPU was read: serving it is not a period's cost
    t = time.monotonic()
    status, body = d.get("/metrics", 60)
    res["scrape_s"] = time.monotonic() - t
    res["metrics_mib"] = len(body) / 1048576 if status == 200 else None
    res["daemon_work_ms"] = (cgbench.metric(body, "koord_bpf_period_duration_seconds") or 0) * 1e3
    status, body = d.get("/api/containers", 60)
    res["in_window"] = len(json.loads(body)["containers"]) if status == 200 else None
    return res


def one_daemon(tree, dirs, cfg, a, out):
    """Start the daemon on @tree, populate, measure active then idle; {mode: result}."""
    config = None
    if cfg == "enforce":
        config = {"resourceUsedThresholdWithBE": {"enable": True},
                  "koordBPF": {"cgroupRoots": [tree.relpath(tree.kubepods)]}}
    t = time.monotonic()
    # -v: the daemon logs each period's work, which counts the periods it did
    d = cgbench.Daemon(out, config, ["--max-containers", "16384", "--period", str(a.period),
                                     "-v"], a.koord)
    res = {}
    try:
        d.wait_ready()
        res["ready_s"] = time.monotonic() - t
        hops = [Hopper(dirs[i::a.hoppers]) for i in range(a.hoppers)]
        try:
            res["first_pass_ms"] = max(h.wait_first() for h in hops)
            time.sleep(a.warmup * a.period)
            res["active"] = measure(d, a.periods, a.period)
            res["active"]["pass_ms"] = median([p for h in hops for p in h.passes[1:]])
            res["active"]["load"] = busy_processes()
        finally:
            for h in hops:
                h.stop()
        time.sleep(a.warmup * a.period)
        res["idle"] = measure(d, a.periods, a.period)
        res["idle"]["load"] = busy_processes()
    finally:
        rc = d.stop()
    if rc:
        raise RuntimeError(f"koord-bpf exited with {rc}; see {d.log}")
    return res


def run_size(n, cfgs, a, out):
    t = time.monotonic()
    tree = cgbench.Tree(mirror=[m for m in a.mirror.split(",") if m])
    try:
        # two containers per pod: every cgroup, pods included, takes a slot of the class
        # map (--max-containers), and 10,000 one-container pods would need 20,003 slots
        dirs = []
        for i in range(n // 2):
            c0 = tree.pod("besteffort" if i % 2 == 0 else "burstable", "c0")
            c1 = os.path.join(os.path.dirname(c0), "c1")
            os.mkdir(c1)
            dirs += [c0, c1]
        made = time.monotonic() - t
        log(f"{n} containers: tree made in {made:.1f} s")
        res = {"mkdir_s": made}
        for cfg in cfgs:
            res[cfg] = one_daemon(tree, dirs, cfg, a, out)
            act, idle = res[cfg]["active"], res[cfg]["idle"]
            log(f"  {cfg}: first pass {res[cfg]['first_pass_ms']:.0f} ms; active "
                f"{act['cpu_ms']:.1f} ms CPU/period ({act['in_window']} in window, "
                f"load {act['load']['loadavg']}), idle {idle['cpu_ms']:.1f} ms "
                f"({idle['in_window']} in window), RSS {act['rss_mib']:.1f} MiB, own "
                f"{act['own_mib']:.1f} MiB")
    finally:
        t = time.monotonic()
        tree.remove()
        res["rmdir_s"] = time.monotonic() - t
    return res


def report(results, sizes, cfgs):
    """The markdown tables: one row per size, config and mode; then the budget at AT."""
    def vals(n, cfg, mode, key):
        return [r[n][cfg][mode][key] for r in results if r[n][cfg][mode][key] is not None]

    lines = ["| N | config | containers | in window | CPU ms/period (utime+stime) | "
             "of it the period thread | period work ms, wall (daemon's own) | periods done | "
             "RSS MiB | own MiB (RSS less BPF maps) | RssAnon MiB | HWM MiB | /metrics MiB | "
             "CPU per container µs |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for cfg in cfgs:
        for mode in ("active", "idle"):
            for n in sizes:
                cpu = vals(n, cfg, mode, "cpu_ms")
                lines.append(
                    f"| {n} | {cfg} | {mode} | {median(vals(n, cfg, mode, 'in_window')):.0f} | "
                    f"{fmt_spread(cpu, 2)} | {fmt_spread(vals(n, cfg, mode, 'main_ms'), 2)} | "
                    f"{fmt_spread(vals(n, cfg, mode, 'work_ms'), 2)} | "
                    f"{median(vals(n, cfg, mode, 'periods')):.0f} | "
                    f"{fmt_spread(vals(n, cfg, mode, 'rss_mib'), 1)} | "
                    f"{fmt_spread(vals(n, cfg, mode, 'own_mib'), 1)} | "
                    f"{fmt_spread(vals(n, cfg, mode, 'anon_mib'), 1)} | "
                    f"{median(vals(n, cfg, mode, 'hwm_mib')):.1f} | "
                    f"{median(vals(n, cfg, mode, 'metrics_mib')):.2f} | "
                    f"{median(cpu) * 1e3 / n:.1f} |")
    lines += ["", f"Budget at {AT} containers (medians over the rounds; growth is the CPU per "
              f"period at {AT} over that at {sizes[0]}, linear = {AT // sizes[0]}):", "",
              "| config | containers | CPU ms/period | budget ≤ 10 | RSS MiB | own MiB | "
              f"budget ≤ 64 (own) | growth {sizes[0]} → {AT} |", "|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for cfg in cfgs:
        for mode in ("active", "idle"):
            cpu = median(vals(AT, cfg, mode, "cpu_ms"))
            rss = median(vals(AT, cfg, mode, "rss_mib"))
            own = median(vals(AT, cfg, mode, "own_mib"))
            growth = cpu / median(vals(sizes[0], cfg, mode, "cpu_ms"))
            # the budget is the daemon's own memory: the BPF maps are the kernel's
            v = ("PASS" if cpu <= CPU_BUDGET_MS else "OVER", "PASS" if own <= RSS_BUDGET_MIB else "OVER")
            verdicts.append({"config": cfg, "mode": mode, "cpu_ms": cpu, "rss_mib": rss,
                             "own_mib": own, "growth": growth, "cpu": v[0], "rss": v[1]})
            lines.append(f"| {cfg} | {mode} | {cpu:.2f} | {v[0]} | {rss:.1f} | {own:.1f} | {v[1]} | "
                         f"{growth:.1f}× |")
    return lines, verdicts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(cgbench.ROOT, "build", "bench"))
    ap.add_argument("--sizes", default="100,1000,10000",
                    help="container counts, comma-separated (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mirror", default="memory",
                    help="v1 controllers the tree is made in too, as a kubelet does "
                         "(default memory: the daemon reads the pods' memory); \"\" for none")
    ap.add_argument("--periods", type=int, default=10, help="periods measured (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="periods before measuring (default 3)")
    ap.add_argument("--period", type=float, default=1.0)
    ap.add_argument("--hoppers", type=int, default=4,
                    help="processes hopping through the containers, each a share (default 4)")
    ap.add_argument("--configs", default="none,enforce",
                    help="none (measurement only) and/or enforce (default: %(default)s)")
    a = cgbench.parse_args(ap, "scale")
    sizes = sorted(int(x) for x in a.sizes.split(","))
    cfgs = a.configs.split(",")
    global AT
    AT = sizes[-1]
    os.makedirs(a.out, exist_ok=True)
    cgbench.on_signals()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = []
    try:
        for r in range(a.rounds):
            # interleaved: the sizes rotate and the configs alternate from round to round
            order = sizes[r % len(sizes):] + sizes[:r % len(sizes)]
            log(f"scale round {r + 1}/{a.rounds}: {order}, load {busy_processes()['loadavg']}")
            results.append({n: run_size(n, cfgs if r % 2 == 0 else cfgs[::-1], a, a.out)
                            for n in order})
    except KeyboardInterrupt:
        log("interrupted: cleaning up")
        sys.exit(130)
    finally:
        cgbench.cleanup()
    lines, verdicts = report(results, sizes, cfgs)
    mk = [median([r[n]["mkdir_s"] for r in results]) for n in sizes]
    fp = [median([r[n][c]["first_pass_ms"] for r in results for c in cfgs]) for n in sizes]
    head = [f"Run {started} .. {time.strftime('%H:%M:%S UTC', time.gmtime())}, {a.rounds} rounds, "
            f"{a.periods} periods of {a.period} s after {a.warmup}; {os.cpu_count()} CPUs, "
            f"kernel {os.uname().release}; load average during the measurements "
            f"{fmt_spread([float(r[n][c][m]['load']['loadavg'].split()[0]) for r in results for n in sizes for c in cfgs for m in ('active', 'idle')], 1)}.",
            "", "Populating (mkdir of the tree, then the hopper's first pass through every container): " +
            ", ".join(f"{n}: {m:.1f} s + {f:.0f} ms" for n, m, f in zip(sizes, mk, fp)), ""]
    text = "\n".join(head + lines) + "\n"
    with open(os.path.join(a.out, "scale.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "scale.json"), "w") as f:
        json.dump({"started": started, "args": vars(a), "rounds": results,
                   "verdicts": verdicts}, f, indent=1, default=str)
    print(text)
    log(f"written {a.out}/scale.md and scale.json")


if __name__ == "__main__":
    main()
