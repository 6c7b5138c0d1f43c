# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What scale.py and reaction.py share: a kubepods-shaped cgroup tree of the
bench's own (/koord-bench-PID/kubepods/... in the cpu hierarchy), workloads
started inside its cgroups, and the daemon (build/koord-bpf) started on a free
port, asked over HTTP and stopped. Everything started or made here is
registered, and cleanup() undoes it all (also after Ctrl-C or SIGTERM)."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON = os.path.join(ROOT, "build", "koord-bpf")
WORK = os.path.join(ROOT, "build", "bench", "koord-bench-work")

_procs = []		# every process started here, stopped by cleanup()
_trees = []		# every tree made here, removed by cleanup()


def cpu_hierarchy():
    """The mount of the cpu controller: v1 /sys/fs/cgroup/cpu, else the v2 root."""
    for p in ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"):
        if os.path.exists(os.path.join(p, "cpu.shares")):
            return p, 1
    return "/sys/fs/cgroup", 2


class Tree:
    """/koord-bench-PID[-TAG]/kubepods/{besteffort,burstable}/pod<uuid>/<name>.

    @mirror: other v1 controllers (e.g. "memory") where every directory is made
    too, as a kubelet makes each pod in every hierarchy (cgroup v1 only)."""

    def __init__(self, tag="", mirror=()):
        self.hier, self.version = cpu_hierarchy()
        self.rel = f"/koord-bench-{os.getpid()}{tag}"
        self.path = self.hier + self.rel
        self.mirrors = [f"/sys/fs/cgroup/{m}" for m in mirror] if self.version == 1 else []
        for m in self.mirrors:
            if not os.path.isdir(m):
                raise RuntimeError(f"no {m} hierarchy to mirror the tree in")
        self._mkdir(self.path)
        _trees.append(self)
        self.kubepods = self.mkdir("kubepods")

    def _mkdir(self, path):
        os.mkdir(path)
        for m in self.mirrors:
            os.mkdir(m + self.relpath(path))
        if self.version == 2:	# v2: the cpu controller must be enabled for the children
            with open(os.path.join(path, "cgroup.subtree_control"), "w") as f:
                f.write("+cpu")

    def mkdir(self, rel):
        """mkdir -p of @rel below the tree; returns the absolute path."""
        path = self.path
        for part in rel.split("/"):
            path = os.path.join(path, part)
            if not os.path.isdir(path):
                self._mkdir(path)
        return path

    def pod(self, qos, name="c"):
        """A container of a new pod: qos "besteffort" or "burstable"."""
        return self.mkdir(f"kubepods/{qos}/pod{uuid.uuid4()}/{name}")

    def relpath(self, path):
        """@path as the daemon names it: relative to the hierarchy's root."""
        return path[len(self.hier):]

    def remove(self):
        """Kill what still runs in the tree, then remove it bottom-up, mirrors too."""
        for root in [self.hier] + self.mirrors:
            self._remove(root + self.rel)
        if self in _trees:
            _trees.remove(self)

    @staticmethod
    def _remove(top):
        if not os.path.isdir(top):
            return
        dirs = [d for d, _, _ in os.walk(top)]
        for d in dirs:
            for pid in read_pids(d):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for d in reversed(dirs):	# os.walk lists parents before children
            for _ in range(200):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:		# killed tasks not reaped yet
                    time.sleep(0.01)


def read_pids(cgroup):
    try:
        with open(os.path.join(cgroup, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def read_file(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def spawn(cmd, cgroup=None, cpu=None, **kw):
    """Start @cmd inside @cgroup, pinned to @cpu; stopped by cleanup()."""
    def enter():
        if cgroup:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write("0")
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    p = subprocess.Popen(cmd, preexec_fn=enter, stdin=kw.pop("stdin", subprocess.DEVNULL), **kw)
    _procs.append(p)
    return p


def stop(p, sig=signal.SIGKILL, timeout=15):
    """Stop @p with @sig (SIGKILL after @timeout); its exit status."""
    if p.poll() is None:
        try:
            p.send_signal(sig)
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in _procs:
        _procs.remove(p)
    return p.returncode


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """build/koord-bpf on a free port, with @config (a dict written to a file) or none."""

    def __init__(self, out, config=None, args=(), binary=DAEMON):
        self.port = free_port()
        self.state = tempfile.mkdtemp(prefix="koord-bench-state-")
        cmd = [binary, "--listen", f"127.0.0.1:{self.port}", *args]
        if config is not None:
            config.setdefault("koordBPF", {})["stateDir"] = self.state
            self.cfg = os.path.join(self.state, "config.json")
            with open(self.cfg, "w") as f:
                json.dump(config, f)
            cmd += ["--config", self.cfg]
        self.log = os.path.join(out, f"koord-bpf.{self.port}.log")
        with open(self.log, "w") as lf:
            self.proc = spawn(cmd, stdout=lf, stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.proc.pid

    def get(self, path, timeout=5):
        """(status, body bytes) of GET @path; (None, b"") when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}",
                                        timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, b""
        except OSError:
            return None, b""

    def wait_ready(self, timeout=60):
        """Until /healthz says ok (its first period is done)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"koord-bpf exited ({self.proc.returncode}); see {self.log}")
            if self.get("/healthz", 1)[0] == 200:
                return
            time.sleep(0.02)
        raise RuntimeError(f"koord-bpf not ready after {timeout} s; see {self.log}")

    def stop(self):
        """SIGTERM: it puts back every cgroup value it wrote. Its exit status."""
        rc = stop(self.proc, signal.SIGTERM, 60)	# a period at 10,000 containers takes seconds
        for f in os.listdir(self.state):
            os.unlink(os.path.join(self.state, f))
        os.rmdir(self.state)
        return rc


def metric(body, name):
    """The value of the unlabelled sample @name in a /metrics @body, or None."""
    for line in body.decode(errors="replace").splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def cleanup():
    """Stop every process started here (daemons with SIGTERM first), remove every tree."""
    for p in list(_procs):
        stop(p, signal.SIGTERM if os.path.basename(p.args[0]) == "koord-bpf" else signal.SIGKILL)
    for t in list(_trees):
        t.remove()


def parse_args(ap, name):
    """Add --koord, parse, and check what every run needs: root and the binaries."""
    ap.add_argument("--koord", default=DAEMON, help="the daemon (default: %(default)s)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit(f"{name}: must run as root (cgroups, BPF)")
    for p in (a.koord, WORK):
        if not os.access(p, os.X_OK):
            raise SystemExit(f"{name}: {p} missing: run `make all bench-build` first")
    return a


def on_signals():
    """SIGTERM and SIGHUP end the bench through the same cleanup as Ctrl-C."""
    def raise_interrupt(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, raise_interrupt)
    signal.signal(signal.SIGHUP, raise_interrupt)

