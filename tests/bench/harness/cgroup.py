# SPDX-License-Identifier: LGPL-2.1-or-later
"""Benchmark cgroups on a v2 or a hybrid host (the same detection as
scripts/lib-cgroup.sh): create bwgov-bench-* cgroups, set a static baseline,
read counters, spawn processes inside, and remove what we created.

Only cgroups whose name starts with "bwgov-bench-" are ever created or
removed, and only processes we started are killed, by PID."""

import os
import signal
import subprocess
import time

PREFIX = "bwgov-bench-"


def kill_and_reap(p, timeout):
    """SIGKILL the process we started as P if it still runs (never one already
    reaped: its PID may be reused), then wait for it up to TIMEOUT seconds.
    Returns False if it did not exit in time."""
    if p.poll() is not None:
        return True
    try:
        p.kill()
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


class Layout:
    """Where bandwidth lives (bw) and where PSI/usage live (v2)."""

    def __init__(self, kind, bw, v2):
        self.kind = kind        # "v2" or "hybrid"
        self.bw = bw            # bandwidth root: cgroup2 mount or v1 cpu mount
        self.v2 = v2            # cgroup2 mount (PSI, usage) or None

    def __repr__(self):
        return f"Layout({self.kind}, bw={self.bw}, v2={self.v2})"


def detect():
    """Returns a Layout, or None when no usable cpu bandwidth controller."""
    v2 = cpu = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields = left.split()
            rfields = right.split()
            if len(fields) < 5 or len(rfields) < 3:
                continue
            mnt, fstype, opts = fields[4], rfields[0], rfields[2]
            if fstype == "cgroup2" and v2 is None:
                v2 = mnt
            elif fstype == "cgroup" and "cpu" in opts.split(",") and cpu is None:
                cpu = mnt
    if v2:
        try:
            with open(os.path.join(v2, "cgroup.controllers")) as f:
                if "cpu" in f.read().split():
                    return Layout("v2", v2, v2)
        except OSError:
            pass
    if cpu:
        return Layout("hybrid", cpu, v2)
    return None


def _read(path):
    with open(path) as f:
        return f.read()


def _write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def _kv(text):
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = int(parts[1])
            except ValueError:
                pass
    return out


def parse_psi(text):
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        for p in parts[1:]:
            if p.startswith("total="):
                out[parts[0]] = int(p[6:])
    return out


class Cgroup:
    """One benchmark cgroup (both trees on hybrid)."""

    def __init__(self, layout, name):
        if not name.startswith(PREFIX):
            raise ValueError(f"refusing to manage {name}: not a {PREFIX}* cgroup")
        self.layout = layout
        self.name = name
        self.bw_dir = os.path.join(layout.bw, name)
        self.v2_dir = os.path.join(layout.v2, name) if layout.v2 else None
        self.procs = []

    @property
    def is_v2(self):
        return self.layout.kind == "v2"

    def create(self):
        if self.is_v2:
            sc = os.path.join(self.layout.v2, "cgroup.subtree_control")
            if "cpu" not in _read(sc).split():
                _write(sc, "+cpu")
        os.makedirs(self.bw_dir, exist_ok=True)
        if self.v2_dir and self.v2_dir != self.bw_dir:
            os.makedirs(self.v2_dir, exist_ok=True)
        return self

    # ---- bandwidth -------------------------------------------------------
    def bandwidth_files(self):
        """The files a governor writes, by kind."""
        if self.is_v2:
            return {"max": os.path.join(self.bw_dir, "cpu.max"),
                    "burst": os.path.join(self.bw_dir, "cpu.max.burst")}
        return {"quota": os.path.join(self.bw_dir, "cpu.cfs_quota_us"),
                "period": os.path.join(self.bw_dir, "cpu.cfs_period_us"),
                "burst": os.path.join(self.bw_dir, "cpu.cfs_burst_us")}

    def has_burst(self):
        return os.path.exists(self.bandwidth_files()["burst"])

    def get(self):
        """(quota_usec or None for unlimited, period_usec, burst_usec)."""
        f = self.bandwidth_files()
        burst = int(_read(f["burst"])) if os.path.exists(f["burst"]) else 0
        if self.is_v2:
            q, p = _read(f["max"]).split()
            return (None if q == "max" else int(q)), int(p), burst
        q = int(_read(f["quota"]))
        return (None if q < 0 else q), int(_read(f["period"])), burst

    def set(self, quota, period, burst=0):
        """Static baseline of a cgroup we created: burst down first, then
        period/quota, then burst up (the kernel wants burst <= quota)."""
        f = self.bandwidth_files()
        hb = os.path.exists(f["burst"])
        if hb:
            _write(f["burst"], 0)
        if self.is_v2:
            _write(f["max"], f"{'max' if quota is None else quota} {period}")
        else:
            _write(f["quota"], -1)
            _write(f["period"], period)
            _write(f["quota"], -1 if quota is None else quota)
        if hb and burst:
            _write(f["burst"], burst)
        elif burst:
            raise OSError("this kernel has no CPU burst")

    def set_weight(self, shares):
        """CPU weight against the rest of the host, in v1 cpu.shares units
        (1024 = default); v2 cpu.weight is shares * 100 / 1024."""
        if self.is_v2:
            _write(os.path.join(self.bw_dir, "cpu.weight"), max(1, min(10000, shares * 100 // 1024)))
        else:
            _write(os.path.join(self.bw_dir, "cpu.shares"), shares)

    # ---- counters --------------------------------------------------------
    def stat(self):
        """Cumulative counters: nr_periods, nr_throttled, throttled_usec,
        usage_usec, nr_bursts, burst_usec, psi_some_usec, psi_full_usec."""
        s = _kv(_read(os.path.join(self.bw_dir, "cpu.stat")))
        out = {"nr_periods": s.get("nr_periods", 0), "nr_throttled": s.get("nr_throttled", 0),
               "nr_bursts": s.get("nr_bursts", 0)}
        if "throttled_usec" in s:
            out["throttled_usec"] = s["throttled_usec"]
            out["burst_usec"] = s.get("burst_usec", 0)
        else:
            out["throttled_usec"] = s.get("throttled_time", 0) // 1000
            out["burst_usec"] = s.get("burst_time", 0) // 1000
        usage = None
        if self.v2_dir and os.path.exists(os.path.join(self.v2_dir, "cpu.stat")):
            usage = _kv(_read(os.path.join(self.v2_dir, "cpu.stat"))).get("usage_usec")
        if usage is None and os.path.exists(os.path.join(self.bw_dir, "cpuacct.usage")):
            usage = int(_read(os.path.join(self.bw_dir, "cpuacct.usage"))) // 1000
        out["usage_usec"] = usage or 0
        psi = {}
        if self.v2_dir and os.path.exists(os.path.join(self.v2_dir, "cpu.pressure")):
            psi = parse_psi(_read(os.path.join(self.v2_dir, "cpu.pressure")))
        out["psi_some_usec"] = psi.get("some", 0)
        out["psi_full_usec"] = psi.get("full", 0)
        return out

    # ---- processes -------------------------------------------------------
    def _enter(self):
        """preexec_fn: move the forked child into the cgroup before exec."""
        pid = str(os.getpid())
        with open(os.path.join(self.bw_dir, "cgroup.procs"), "w") as f:
            f.write(pid)
        if self.v2_dir and self.v2_dir != self.bw_dir:
            with open(os.path.join(self.v2_dir, "cgroup.procs"), "w") as f:
                f.write(pid)

    def spawn(self, argv, **kw):
        p = subprocess.Popen(argv, preexec_fn=self._enter, **kw)
        self.procs.append(p)
        return p

    def destroy(self):
        """Kill the processes we started in it that still run (by PID, never
        one already reaped, whose PID may be reused), then rmdir both trees.
        Returns a list of warnings."""
        warnings = []
        for p in self.procs:
            if not kill_and_reap(p, timeout=10):
                warnings.append(f"process {p.pid} did not exit after SIGKILL")
        self.procs = []
        for d in (self.bw_dir, self.v2_dir):
            if not d or not os.path.isdir(d):
                continue
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                try:
                    left = _read(os.path.join(d, "cgroup.procs")).split()
                except OSError:
                    left = []
                warnings.append(f"could not remove {d} (tasks left: {' '.join(left)})")
        return warnings


def _read_or_none(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def kill_cgroup(cg, timeout=10.0):
    """SIGKILL every process in our own bench cgroup (hackbench forks 160
    children): cgroup.kill of the v2 cgroup when there is one, else each PID
    of its cgroup.procs through a pidfd, checked to be in the cgroup after the
    pidfd is open (so a reused PID is never signalled). Returns the PIDs left."""
    if not cg.name.startswith(PREFIX):
        raise ValueError(f"refusing to kill processes of {cg.bw_dir}")
    deadline = time.monotonic() + timeout
    kill_file = os.path.join(cg.v2_dir, "cgroup.kill") if cg.v2_dir else None
    procs = os.path.join(cg.bw_dir, "cgroup.procs")
    rel = "/" + cg.name
    while True:
        left = [int(x) for x in (_read_or_none(procs) or "").split()]
        if not left or time.monotonic() > deadline:
            return left
        if kill_file and os.path.exists(kill_file):
            try:
                with open(kill_file, "w") as f:
                    f.write("1")
            except OSError:
                kill_file = None
        else:
            for pid in left:
                try:
                    fd = os.pidfd_open(pid)
                except OSError:
                    continue
                try:
                    cgs = _read_or_none(f"/proc/{pid}/cgroup") or ""
                    if any(line.split(":", 2)[-1] == rel for line in cgs.splitlines()):
                        signal.pidfd_send_signal(fd, signal.SIGKILL)
                except OSError:
                    pass
                finally:
                    os.close(fd)
        time.sleep(0.05)


def leftovers(layout):
    """bwgov-bench-* cgroups left by an earlier, killed run."""
    out = []
    for root in {layout.bw, layout.v2} - {None}:
        try:
            for n in os.listdir(root):
                if n.startswith(PREFIX):
                    out.append(os.path.join(root, n))
        except OSError:
            pass
    return out
