#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""koord-bpf benchmark (issue 7, items 1 and 5); run by `sudo make bench`.

1. Per-event BPF cost. With kernel.bpf_stats_enabled=1 (the old value is put
   back on exit), each tool in turn is started, and once its programs are
   attached the same loads run under it (`perf bench sched pipe`, then
   `hackbench`); every program's run_time_ns and run_cnt are read from
   `bpftool -j prog show` before and after each load. Tools: koord-bpf's
   collector (build/koord-interference), the floor (scripts/bench/floor.bpf.c:
   a tp_btf sched_switch program that increments a per-CPU counter), and the
   peers from Debian: runqlat and runqslower (libbpf-tools) and runqlat.bt
   (bpftrace), and the primitives (scripts/bench/prims.bpf.c: the floor plus
   one operation per program, to price each operation). Rounds are interleaved (the order rotates every round), and
   each figure is the median over the rounds with its min..max.
   "Together per switch" is the sum of run_time_ns of all of a tool's
   programs divided by the run_cnt of its sched_switch program.

2. Start-up: the wall time from exec of koord-interference to its stderr line
   "watching ..." (printed after load, attach, classification and the first
   sample), median of --startup-runs runs, alternating --max-containers 4096
   (the default) and 10000; and the bytes_memlock of its maps
   (`bpftool -j map show`) while it runs.

A tool's programs and maps are the ones whose fds it holds
(/proc/PID/fdinfo: prog_id, map_id), so BPF programs of other jobs on the
machine are never mixed in.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KOORD = os.path.join(ROOT, "build", "koord-interference")
SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def die(msg):
    log(msg)
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def which_any(*names):
    for n in names:
        p = n if os.path.isabs(n) and os.access(n, os.X_OK) else shutil.which(n)
        if p:
            return p
    return None


def bpf_fds(pid):
    """The BPF program and map ids whose fds @pid holds, and its attachment fds."""
    progs, maps, links = set(), set(), 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return progs, maps, links
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if "bpf-prog" not in target and "bpf-map" not in target:
                links += "bpf_link" in target or "perf_event" in target
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = f.read()
        except OSError:
            continue
        m = re.search(r"^prog_id:\s*(\d+)", info, re.M)
        if m:
            progs.add(int(m.group(1)))
        m = re.search(r"^map_id:\s*(\d+)", info, re.M)
        if m:
            maps.add(int(m.group(1)))
    return progs, maps, links


def bpftool_json(*args):
    r = run(["bpftool", "-j", *args])
    if r.returncode:
        raise RuntimeError(f"bpftool {' '.join(args)}: {r.stderr.strip()}")
    return json.loads(r.stdout or "[]")


def prog_stats(ids):
    """{id: (name, run_time_ns, run_cnt)} from one `bpftool -j prog show`."""
    out = {}
    for p in bpftool_json("prog", "show"):
        if p["id"] in ids:
            out[p["id"]] = (p.get("name", "?"), p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return out


class Tool:
    def __init__(self, name, cmd, ready_line=None, nprogs=1):
        self.name, self.cmd, self.ready_line, self.nprogs = name, cmd, ready_line, nprogs
        self.proc = None

    def start(self, timeout=30.0):
        """Start it; return once its programs are loaded and attached, with their ids."""
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                     start_new_session=True)
        ready = threading.Event()

        def reader(f, want):
            # Reads to the end, so that the tool never blocks on its output.
            for line in f:
                if want and want in line:
                    ready.set()
            ready.set()
        threading.Thread(target=reader, args=(self.proc.stdout, self.ready_line),
                         daemon=True).start()
        deadline = time.monotonic() + timeout
        if self.ready_line:
            ready.wait(timeout)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}")
            progs, maps, links = bpf_fds(self.proc.pid)
            if len(progs) >= self.nprogs and links >= self.nprogs:
                time.sleep(0.3)		# let it finish its start (first sample etc.)
                return bpf_fds(self.proc.pid)[0]
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name}: not attached after {timeout} s")

    def stop(self):
        if not self.proc:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        self.proc = None


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt_spread(xs, prec=0):
    if not xs:
        return "-"
    return f"{median(xs):.{prec}f} [{min(xs):.{prec}f}..{max(xs):.{prec}f}]"


def machine_info(koord_src):
    info = {"nproc": os.cpu_count(), "kernel": os.uname().release}
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            info["cpu"] = m.group(1) if m else "?"
    except OSError:
        info["cpu"] = "?"
    for k, cmd in (("perf", ["perf", "--version"]), ("bpftrace", ["bpftrace", "--version"]),
                   ("bpftool", ["bpftool", "version"])):
        try:
            info[k] = run(cmd).stdout.splitlines()[0]
        except (OSError, IndexError):
            info[k] = "?"
    r = run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n",
             "libbpf-tools", "bpftrace", "rt-tests", "linux-perf", "libbpf1"])
    info["packages"] = r.stdout.strip().splitlines()
    # Which collector: others may rebuild build/ while the bench runs, so it runs a copy.
    with open(KOORD, "rb") as f:
        info["koord_sha256"] = hashlib.sha256(f.read()).hexdigest()[:16]
    if koord_src:
        info["bpf_commit"] = koord_src
    else:
        r = run(["git", "-C", ROOT, "log", "-1", "--format=%h", "--", "bpf"])
        d = run(["git", "-C", ROOT, "status", "--porcelain", "--", "bpf"])
        info["bpf_commit"] = ((r.stdout.strip() or "?") +
                              (" + uncommitted changes" if d.stdout.strip() else ""))
    return info


def busy_processes():
    """What else uses CPU now: processes above 2% and the load average."""
    r = run(["ps", "-eo", "pcpu,comm", "--sort=-pcpu", "--no-headers"])
    busy = []
    for line in r.stdout.splitlines():
        pc, _, comm = line.strip().partition(" ")
        try:
            if float(pc) >= 2.0 and comm.strip() not in ("ps", "python3", "bench.py"):
                busy.append(f"{comm.strip()} {pc}%")
        except ValueError:
            pass
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return {"loadavg": load, "busy": busy[:8]}


def run_load(load):
    t0 = time.monotonic()
    r = run(load["cmd"])
    wall = time.monotonic() - t0
    if r.returncode:
        raise RuntimeError(f"{' '.join(load['cmd'])}: {r.stderr.strip()[:200]}")
    return wall


def measure_cost(tools, loads, rounds):
    """samples[tool][load] = one per round: {progs: {name: (ns/event, events, ns,
    ns per switch)}, together (ns per switch), switches, wall_s}."""
    samples = {t.name: {l["name"]: [] for l in loads} for t in tools}
    context = []
    for r in range(rounds):
        order = tools[r % len(tools):] + tools[:r % len(tools)]
        context.append(busy_processes())
        log(f"round {r + 1}/{rounds}: {' '.join(t.name for t in order)} "
            f"(load average {context[-1]['loadavg']})")
        for t in order:
            ids = t.start()
            try:
                for l in loads:
                    a = prog_stats(ids)
                    wall = run_load(l)
                    b = prog_stats(ids)
                    progs, tot_ns, sw_cnt = {}, 0, 0
                    for pid_, (name, ns1, cnt1) in b.items():
                        _, ns0, cnt0 = a.get(pid_, (name, 0, 0))
                        dns, dcnt = ns1 - ns0, cnt1 - cnt0
                        tot_ns += dns
                        if name.endswith("switch"):
                            sw_cnt += dcnt
                        progs[name] = (dns / dcnt if dcnt else None, dcnt, dns)
                    for name, v in progs.items():
                        progs[name] = v + (v[2] / sw_cnt if sw_cnt else None,)
                    samples[t.name][l["name"]].append({
                        "progs": progs, "together": tot_ns / sw_cnt if sw_cnt else None,
                        "switches": sw_cnt, "wall_s": wall})
            finally:
                t.stop()
    context.append(busy_processes())
    return samples, context


def cost_report(samples, tools, loads, budget_ref="runqlat"):
    lines, verdicts, summary = [], [], {}
    for l in loads:
        ln = l["name"]
        lines.append(f"\n### Per-event cost under `{' '.join(l['cmd'])}`\n")
        lines.append("| tool | program | ns/event median [min..max] | events/run (median) | "
                     "ns per switch (its run_time_ns / the tool's switches), median |")
        lines.append("|---|---|---|---|---|")
        summary[ln] = {}
        for t in tools:
            if t.name == "primitives":
                continue
            ss = samples[t.name][ln]
            names = []
            for s in ss:
                names += [n for n in s["progs"] if n not in names]
            for n in names:
                vals = [s["progs"][n][0] for s in ss if n in s["progs"] and s["progs"][n][0] is not None]
                cnts = [s["progs"][n][1] for s in ss if n in s["progs"]]
                per = [s["progs"][n][3] for s in ss if n in s["progs"] and s["progs"][n][3] is not None]
                lines.append(f"| {t.name} | {n} | {fmt_spread(vals)} | {median(cnts):.0f} | "
                             f"{median(per):.0f} |")
            tog = [s["together"] for s in ss if s["together"] is not None]
            sw = [s["switches"] for s in ss]
            summary[ln][t.name] = tog
            lines.append(f"| **{t.name}** | **together per switch** | **{fmt_spread(tog)}** | "
                         f"{median(sw):.0f} switches | **{median(tog):.0f}** |")
        if "primitives" in samples:
            ss = samples["primitives"][ln]
            lines.append(f"\nPrimitives (scripts/bench/prims.bpf.c, all attached together) under the same load: "
                         "each is the floor plus one operation; the last column is the operation's price, "
                         "the difference to the mean of prim_floor and prim_floor_end in the same run.\n")
            lines.append("| program | adds | ns/event median [min..max] | minus the floor |")

            def base(s):
                f = [s["progs"].get(n, (None,))[0] for n in ("prim_floor", "prim_floor_end")]
                return sum(f) / 2 if all(f) else None
            lines.append("|---|---|---|---|")
            for n, what in PRIMS:
                vals = [s["progs"][n][0] for s in ss if n in s["progs"] and s["progs"][n][0]]
                diff = [s["progs"][n][0] - base(s) for s in ss
                        if n in s["progs"] and s["progs"][n][0] and base(s)]
                lines.append(f"| {n} | {what} | {fmt_spread(vals)} | "
                             f"{fmt_spread(diff) if not n.startswith(('prim_floor', 'prim_warm')) else '-'} |")
        # Budget: koord together per switch vs runqlat's, per round (side by side).
        k, q = samples["koord-bpf"][ln], samples[budget_ref][ln]
        ratios = [a["together"] / b["together"] for a, b in zip(k, q)
                  if a["together"] and b["together"]]
        kf = summary[ln]["koord-bpf"]
        qf = summary[ln][budget_ref]
        fl = summary[ln].get("floor", [])
        above = [(a["together"] - f["together"]) / (b["together"] - f["together"])
                 for a, b, f in zip(k, q, samples["floor"][ln])
                 if a["together"] and b["together"] and f["together"]
                 and b["together"] > f["together"]] if "floor" in samples else []
        r = median(ratios)
        verdicts.append({
            "load": ln, "koord": median(kf), "runqlat": median(qf), "floor": median(fl),
            "ratio": r, "ratio_spread": (min(ratios), max(ratios)) if ratios else None,
            "above_floor_ratio": median(above),
            "budget": "PASS" if r <= 1.0 else "OVER",
            "stretch": "PASS" if r <= 0.5 else "OVER"})
    return lines, verdicts


PRIMS = [("prim_warm", "nothing, runs first (takes the cold-cache cost)"),
         ("prim_floor", "nothing (the floor, second)"),
         ("prim_floor_end", "nothing (the floor again, last)"),
         ("prim_ktime", "1 bpf_ktime_get_ns()"),
         ("prim_probe4", "4 BPF_CORE_READ (bpf_probe_read_kernel)"),
         ("prim_direct4", "the same 4 fields read directly (BTF pointers)"),
         ("prim_hash16", "1 hash lookup, 16-byte key, hit"),
         ("prim_tstore2", "2 bpf_task_storage_get (prev, next)"),
         ("prim_atomic4", "4 atomic adds to a shared array value")]


def startup_phases(runs, maxc, out):
    """Where start-up goes: syscall timestamps of straced runs (strace slows it a little)."""
    marks = [("exec", r"execve\("),
             ("cgroup walk", r"openat\(.*/sys/fs/cgroup"),
             ("vmlinux BTF read", r"openat\(.*/sys/kernel/btf/vmlinux"),
             ("object BTF loaded", r"BPF_BTF_LOAD"),
             ("programs loading", r"BPF_PROG_LOAD.*BPF_PROG_TYPE_TRACING"),
             ("attach", r"BPF_LINK_CREATE|BPF_RAW_TRACEPOINT_OPEN"),
             ("watching", r"watching")]
    got = []
    for _ in range(runs):
        trace = os.path.join(out, "startup.strace")
        r = run(["strace", "-f", "--seccomp-bpf", "-ttt", "-e", "trace=execve,openat,bpf,write", "-o", trace,
                 KOORD, "-d", "0.1", "--max-containers", str(maxc)])
        rows = []
        with open(trace) as f:
            for line in f:
                m = re.match(r"\d+\s+([\d.]+)\s+(.*)", line)
                if m:
                    rows.append((float(m.group(1)), m.group(2)))
        t, after = {}, 0.0
        for name, pat in marks:
            for ts, txt in rows:
                if ts >= after and re.search(pat, txt) and (name != "object BTF loaded"
                                                             or ts > t.get("vmlinux BTF read", 0)):
                    t[name] = ts
                    after = ts
                    break
        if len(t) == len(marks):
            got.append([(t[marks[i + 1][0]] - t[marks[i][0]]) * 1000 for i in range(len(marks) - 1)])
    names = [f"{marks[i][0]} → {marks[i + 1][0]}" for i in range(len(marks) - 1)]
    return names, got


def startup(rounds, maxcs, cgroup_root=None):
    """Time to the "watching" line, and bytes_memlock of its maps, per --max-containers."""
    res = {m: {"ms": [], "memlock": [], "maps": None} for m in maxcs}
    for i in range(rounds):
        for m in (maxcs if i % 2 == 0 else maxcs[::-1]):
            cmd = [KOORD, "-d", "30", "--max-containers", str(m)]
            t0 = time.monotonic()
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
            ok = False
            for line in p.stderr:
                if "watching" in line:
                    ok = True
                    break
            dt = (time.monotonic() - t0) * 1000
            try:
                if not ok:
                    raise RuntimeError(f"koord-interference exited ({p.wait()}) before watching")
                _, maps, _ = bpf_fds(p.pid)
                per = {}
                for mp in bpftool_json("map", "show"):
                    if mp["id"] in maps:
                        per[mp.get("name", "?")] = (mp.get("type", "?"), mp.get("max_entries", 0),
                                                    mp.get("bytes_memlock", 0))
                res[m]["ms"].append(dt)
                res[m]["memlock"].append(sum(v[2] for v in per.values()))
                res[m]["maps"] = per
            finally:
                os.killpg(p.pid, signal.SIGINT)
                p.stderr.close()
                p.wait()
        log(f"start-up run {i + 1}/{rounds}: " +
            ", ".join(f"--max-containers {m}: {res[m]['ms'][-1]:.0f} ms" for m in maxcs))
    return res


def ensure_tracefs():
    """bpftrace's classic tracepoints need tracefs, which a fresh boot may not have mounted."""
    if os.path.isdir("/sys/kernel/tracing/events"):
        return
    if subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"]).returncode:
        die("tracefs is not mounted at /sys/kernel/tracing and mounting it failed")
    log("mounted tracefs at /sys/kernel/tracing (runqlat.bt needs it)")


def set_stats(value):
    with open(SYSCTL, "w") as f:
        f.write(f"{value}\n")


def main():
    global KOORD
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pipe-loops", type=int, default=100000)
    ap.add_argument("--hackbench", default="-p -g 2 -l 1000",
                    help="hackbench arguments (default: %(default)s)")
    ap.add_argument("--startup-runs", type=int, default=10)
    ap.add_argument("--only", choices=("cost", "startup"))
    ap.add_argument("--koord", default=KOORD,
                    help="the koord-interference binary to measure (default: %(default)s)")
    ap.add_argument("--koord-source", default=None,
                    help="what --koord was built from, for the report (default: the git state of bpf/)")
    ap.add_argument("--no-primitives", action="store_true",
                    help="leave out scripts/bench/prims.bpf.c (the price of each operation)")
    a = ap.parse_args()

    if os.geteuid() != 0:
        die("must run as root (sudo make bench): BPF stats, loading programs")
    os.makedirs(a.out, exist_ok=True)
    loader = os.path.join(a.out, "koord-bench-load")
    floor = os.path.join(a.out, "floor.bpf.o")
    prims = os.path.join(a.out, "prims.bpf.o")
    if not os.access(a.koord, os.X_OK):
        die(f"{a.koord} missing: run `make all` first")
    KOORD = os.path.join(a.out, "koord-interference.bench")
    shutil.copy2(a.koord, KOORD)
    for p in (KOORD, loader, floor, prims):
        if not os.access(p, os.X_OK if not p.endswith(".o") else os.R_OK):
            die(f"{p} missing: run `make all bench-build` first")
    perf = which_any("perf", "perf_6.1")
    hackbench = which_any("hackbench")
    runqlat = which_any("/usr/sbin/runqlat", "libbpf-runqlat", "runqlat")
    runqslower = which_any("/usr/sbin/runqslower", "libbpf-runqslower", "runqslower")
    bpftrace = which_any("bpftrace")
    bt = next((p for p in ("/usr/sbin/runqlat.bt", "/usr/share/bpftrace/tools/runqlat.bt")
               if os.path.exists(p)), None)
    missing = [n for n, p in (("perf", perf), ("hackbench", hackbench), ("runqlat", runqlat),
                              ("runqslower", runqslower), ("bpftrace", bpftrace),
                              ("runqlat.bt", bt)) if not p]
    if missing and a.only != "startup":
        die(f"missing: {', '.join(missing)} (scripts/bench/deps.sh installs them)")
    if a.only != "startup":
        ensure_tracefs()

    info = machine_info(a.koord_source)
    results = {"machine": info, "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
               "args": vars(a)}
    with open(SYSCTL) as f:
        old = f.read().strip()
    restore = lambda *_: set_stats(old)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    out_md = []
    try:
        if a.only != "startup":
            # Debian's runqlat.bt includes <linux/sched.h>, which bpftrace 0.17 cannot
            # parse where BTF is present; the upstream fix defines TASK_RUNNING instead.
            with open(bt) as f:
                src = f.read()
            fixed = os.path.join(a.out, "runqlat.bt")
            with open(fixed, "w") as f:
                f.write(src.replace("#include <linux/sched.h>",
                                    "#define TASK_RUNNING 0\t/* bench: as upstream, for BTF systems */"))
            tools = [
                Tool("koord-bpf", [KOORD, "-d", "3600"], "watching", 5),
                Tool("floor", [loader, floor], "bench-load: attached", 1),
                Tool("runqlat", [runqlat], None, 3),
                Tool("runqslower", [runqslower], None, 3),
                Tool("runqlat.bt", [bpftrace, fixed], "Tracing CPU", 3),
            ]
            if not a.no_primitives:
                tools.append(Tool("primitives", [loader, prims], "bench-load: attached", 9))
            loads = [
                {"name": "pipe", "cmd": [perf, "bench", "sched", "pipe", "-l", str(a.pipe_loops)]},
                {"name": "hackbench", "cmd": [hackbench, *a.hackbench.split()]},
            ]
            set_stats(1)
            log(f"kernel.bpf_stats_enabled=1 (was {old}); {a.rounds} interleaved rounds of "
                f"{len(tools)} tools x {len(loads)} loads")
            samples, context = measure_cost(tools, loads, a.rounds)
            set_stats(old)
            results["cost"] = {"samples": samples, "context": context}
            lines, verdicts = cost_report(samples, tools, loads)
            results["cost"]["verdicts"] = verdicts
            out_md += lines
            out_md.append("\n### Budget: koord-bpf's handlers together per switch vs runqlat's\n")
            out_md.append("| load | koord-bpf ns/switch | runqlat ns/switch | floor ns/switch | "
                          "ratio koord/runqlat median [min..max] | above floor, ratio | "
                          "budget ≤ 1 | stretch ≤ 0.5 |")
            out_md.append("|---|---|---|---|---|---|---|---|")
            for v in verdicts:
                sp = v["ratio_spread"]
                out_md.append(f"| {v['load']} | {v['koord']:.0f} | {v['runqlat']:.0f} | "
                              f"{v['floor']:.0f} | {v['ratio']:.2f} [{sp[0]:.2f}..{sp[1]:.2f}] | "
                              f"{v['above_floor_ratio']:.2f} | {v['budget']} | {v['stretch']} |")
            out_md.append("\nOther load during the rounds (load average; processes above 2% CPU):\n")
            for i, c in enumerate(context):
                tag = f"before round {i + 1}" if i < len(context) - 1 else "at the end"
                out_md.append(f"- {tag}: load {c['loadavg']}; " + (", ".join(c["busy"]) or "none"))
        if a.only != "cost":
            log(f"start-up: {a.startup_runs} runs each at --max-containers 4096 and 10000")
            st = startup(a.startup_runs, [4096, 10000])
            results["startup"] = st
            out_md.append("\n### Start-up and locked map memory\n")
            out_md.append("| --max-containers | exec → \"watching\" ms, median [min..max] | "
                          "budget ≤ 300 ms | maps' bytes_memlock |")
            out_md.append("|---|---|---|---|")
            for m, r in st.items():
                med = median(r["ms"])
                out_md.append(f"| {m} | {fmt_spread(r['ms'])} | {'PASS' if med <= 300 else 'OVER'} | "
                              f"{median(r['memlock']) / 1048576:.2f} MiB ({median(r['memlock']):.0f} B) |")
            if shutil.which("strace"):
                for m in (4096, 10000):
                    pn, pv = startup_phases(3, m, a.out)
                    results.setdefault("phases", {})[m] = pv
                    if not pv:
                        continue
                    out_md.append(f"\nStart-up phases at --max-containers {m} (strace -ttt of "
                                  f"{len(pv)} runs, ms, median; strace adds a little):\n")
                    out_md.append("| " + " | ".join(pn) + " | total |")
                    out_md.append("|" + "---|" * (len(pn) + 1))
                    out_md.append("| " + " | ".join(f"{median([r[i] for r in pv]):.0f}"
                                                    for i in range(len(pn))) +
                                  f" | {median([sum(r) for r in pv]):.0f} |")
            names = sorted(set().union(*(set(r["maps"] or {}) for r in st.values())))
            out_md.append("\n| map | type | " + " | ".join(
                f"max_entries / bytes_memlock at {m}" for m in st) + " |")
            out_md.append("|---|---|" + "---|" * len(st))
            for n in names:
                cells = []
                typ = "?"
                for m, r in st.items():
                    v = (r["maps"] or {}).get(n)
                    if v:
                        typ = v[0]
                        cells.append(f"{v[1]} / {v[2]}")
                    else:
                        cells.append("-")
                out_md.append(f"| {n} | {typ} | " + " | ".join(cells) + " |")
    finally:
        restore()
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    head = [f"Run {results['started']} .. {results['finished']} on {info['nproc']} CPUs "
            f"({info['cpu']}), kernel {info['kernel']}; {info['perf']}, {info['bpftrace']}, "
            f"{info['bpftool'].strip()}; packages: {', '.join(info['packages'])}; "
            f"collector built from bpf/ at {info['bpf_commit']} (binary sha256 {info['koord_sha256']}…)."]
    text = "\n".join(head + out_md) + "\n"
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    print(text)
    log(f"written {a.out}/results.md and results.json; kernel.bpf_stats_enabled back to {old}")


if __name__ == "__main__":
    main()
