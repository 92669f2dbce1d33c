# SPDX-License-Identifier: LGPL-2.1-or-later
"""Governors under test (bwgovd, the Koordinator-style comparator), their
CPU time and peak RSS from /proc, and an independent count of their writes:
strace records every write(2)/pwrite64(2) with the file it went to, and each
write to a bandwidth file is compared with the value that file held before
(the last value written to it, or what it held when tracing began)."""

import codecs
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
BANDWIDTH_FILES = ("cpu.max", "cpu.max.burst", "cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.cfs_burst_us")
SUN_PATH_MAX = 107         # a sockaddr_un path, its terminating NUL left out (bwgovd refuses longer)


def process_cpu_s(pid):
    """CPU seconds of a live process (all threads) in nanosecond resolution:
    its CPU-time clock, as clock_getcpuclockid(3) makes it (CPUCLOCK_SCHED of
    the whole process), or None."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)
    except (OSError, OverflowError):
        return None


def proc_stats(pid):
    """CPU seconds (user+system, all threads) and VmHWM/VmRSS in KiB. The
    CPU time comes from the process's CPU clock (ns); /proc/PID/stat counts
    in ticks of 10 ms, too coarse for a governor that uses a few ms per run."""
    out = {"cpu_s": None, "vmhwm_kib": None, "vmrss_kib": None}
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        # fields after "(comm)": state is [0]; utime, stime are fields 14, 15 of the full line
        out["cpu_s"] = (int(rest[11]) + int(rest[12])) / CLK_TCK
        precise = process_cpu_s(pid)
        if precise is not None:
            out["cpu_s"] = precise
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    out["vmhwm_kib"] = int(line.split()[1])
                elif line.startswith("VmRSS:"):
                    out["vmrss_kib"] = int(line.split()[1])
    except (OSError, IndexError, ValueError):
        pass
    return out


def stop_pid(p, timeout=10.0):
    """SIGTERM a Popen we started, SIGKILL it by PID after timeout."""
    if p is None or p.poll() is not None:
        return
    try:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def _norm(path, data):
    """A written value in a comparable form, or None if unparsable."""
    base = os.path.basename(path)
    s = data.strip()
    try:
        if base == "cpu.max":
            q, _, p = s.partition(" ")
            return ("max" if q == "max" else int(q), int(p) if p else None)
        v = int(s)
        if base == "cpu.cfs_quota_us" and v < 0:
            return -1
        return v
    except ValueError:
        return None


def _same(path, old, new):
    if old is None or new is None:
        return False
    if os.path.basename(path) == "cpu.max" and new[1] is None:
        return old[0] == new[0]          # "QUOTA" alone changes only the quota
    return old == new


_LINE = re.compile(r'^(?:\d+\s+)?(\d+\.\d+)\s+(write|pwrite64)\((\d+)<([^>]*)>,\s+"((?:[^"\\]|\\.)*)"'
                   r'(?:\.\.\.)?,\s+\d+(?:,\s*\d+)?\)\s+=\s+(-?\d+)')


def _children(pid):
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def find_descendant(pid, comm, timeout=5.0):
    """PID of the first descendant of pid named comm (strace forks the
    command it traces), or None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        todo = _children(pid)
        while todo:
            c = todo.pop(0)
            try:
                with open(f"/proc/{c}/comm") as f:
                    if f.read().strip() == comm[:15]:
                        return c
            except OSError:
                continue
            todo += _children(c)
        time.sleep(0.01)
    return None


def instrument_first():
    """For strace's child before exec: SCHED_FIFO at the lowest priority,
    reset on fork (so that bwgovd, which strace forks, starts fair and
    chooses its own scheduling). strace stops bwgovd at every write it
    traces; on a host the benchmark saturates, a fair strace waited up to
    half a second for a CPU at each of them and held bwgovd, whose own
    reservation lets it run at once, up as no production host does. Its
    work is a few microseconds a write. A no-op where it is refused."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(1))
    except (OSError, AttributeError):
        pass


class WriteTrace:
    """A governor started under `strace -f --seccomp-bpf -e trace=write,pwrite64
    -yy`, so that every write from its first instruction on is recorded with
    the file it went to; analyse() counts its writes."""

    def __init__(self, path):
        self.path = path
        self.initial = {}
        self.proc = None        # strace
        self.pid = None         # the governor

    def launch(self, argv, comm, watch_files, **popen_kw):
        """watch_files: the governed cgroup's bandwidth files; their values
        now are the 'before' of the first write to each."""
        for f in watch_files:
            try:
                with open(f) as fh:
                    self.initial[f] = _norm(f, fh.read())
            except OSError:
                pass
        self.proc = subprocess.Popen(
            ["strace", "-f", "--seccomp-bpf", "-qq", "-e", "trace=write,pwrite64", "-e", "signal=none",
             "-yy", "-s", "256", "-ttt", "-o", self.path, "--"] + argv, preexec_fn=instrument_first, **popen_kw)
        self.pid = find_descendant(self.proc.pid, comm)
        return self.pid

    def stop(self, timeout=10.0):
        """SIGTERM the governor (by PID); strace exits with it."""
        if self.proc is None or self.proc.poll() is not None:
            return
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            if self.pid:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            stop_pid(self.proc)

    def analyse(self, cgroup_dirs, since=None, steady_since=None):
        """Counts over the trace: writes to bandwidth files of the governed
        cgroup, identical ones, failed ones, other writes into the cgroup's
        directories (PSI triggers), and the bandwidth writes after
        steady_since (epoch seconds)."""
        last = dict(self.initial)
        res = {"writes": 0, "identical": 0, "failed": 0, "other_cgroup_writes": 0,
               "writes_steady": 0, "identical_steady": 0, "write_times": [], "traced": True}
        dirs = tuple(d.rstrip("/") + "/" for d in cgroup_dirs if d)
        try:
            f = open(self.path, errors="replace")
        except OSError:
            res["traced"] = False
            return res
        with f:
            for line in f:
                m = _LINE.match(line)
                if not m:
                    continue
                t, _, _, path, data, rv = m.groups()
                if not path.startswith(dirs):
                    continue
                if os.path.basename(path) not in BANDWIDTH_FILES:
                    res["other_cgroup_writes"] += 1
                    continue
                t = float(t)
                if since is not None and t < since:
                    continue
                try:
                    text = codecs.escape_decode(data.encode())[0].decode(errors="replace")
                except ValueError:
                    text = data
                new = _norm(path, text)
                if int(rv) < 0:
                    res["failed"] += 1
                    continue
                res["writes"] += 1
                res["write_times"].append(t)
                ident = _same(path, last.get(path), new)
                if ident:
                    res["identical"] += 1
                steady = steady_since is not None and t >= steady_since
                if steady:
                    res["writes_steady"] += 1
                    res["identical_steady"] += int(ident)
                if new is not None:
                    if os.path.basename(path) == "cpu.max" and new[1] is None and path in last and last[path]:
                        new = (new[0], last[path][1])
                    last[path] = new
        return res


class NoTrace(WriteTrace):
    """WriteTrace's interface without strace: the governor started as it is,
    its writes counted by no one here (bwgovd's own bwgov_writes_total still
    is). For benchmarks that do not count writes, and for rows that must not
    carry the tracer's stops."""

    def launch(self, argv, comm, watch_files, **popen_kw):
        self.proc = subprocess.Popen(argv, **popen_kw)
        self.pid = self.proc.pid
        return self.pid


def parse_metrics(path, unit):
    """bwgovd's metrics.prom: {family: value} for one unit plus globals."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("#"):
                    continue
                parts = line.split()
                if len(parts) != 2:
                    continue
                name, val = parts
                if "{" in name:
                    fam, _, lab = name.partition("{")
                    if lab != f'unit="{unit}"}}':
                        continue
                    name = fam
                try:
                    out[name] = int(val)
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def state_json(units, credit_usec=0):
    """bwgovd's state.json (schema 1) that records, per unit, the kernel's
    current value as the baseline and the given credit: started on it, bwgovd
    finds its baseline in place and adopts it with that credit (0: empty).
    units: {unit: {"cgroup": path relative to the cgroup root, "quota_usec",
    "period_usec", "burst_usec", "has_burst"}}."""
    out = {"schema_version": 1, "units": {}}
    for name, u in units.items():
        out["units"][name] = {
            "cgroup": u["cgroup"],
            "baseline": {"quota_usec": u["quota_usec"], "period_usec": u["period_usec"],
                         "burst_usec": u["burst_usec"], "has_burst": bool(u["has_burst"])},
            "written": None, "pending": None, "credit_usec": int(credit_usec), "paused": False}
    return out


class Bwgovd:
    """bwgovd governing one cgroup or several (each unit is named after its
    cgroup and gets a drop-in directory of its own). credit_max_s and
    quota_max_pct None leave CreditMax= and CPUQuotaMax= out (a unit without
    a quota); extra_unit goes into every unit's drop-in, per_unit
    ({unit: {key: value}}) into that unit's only."""

    def __init__(self, binary, workdir, unit, mode, credit_max_s, quota_max_pct, interval="1s",
                 extra_unit=None, extra_global=None, per_unit=None):
        self.binary = binary
        self.dir = workdir
        self.units = [unit] if isinstance(unit, str) else list(unit)
        self.unit = self.units[0]
        self.proc = None
        self.trace = None
        self.conf = os.path.join(workdir, "conf")
        self.state = os.path.join(workdir, "state")
        self.run = os.path.join(workdir, "run")
        self.log = os.path.join(workdir, "bwgovd.log")
        for d in [self.conf, self.state, self.run] + [os.path.join(self.conf, u + ".d") for u in self.units]:
            os.makedirs(d, exist_ok=True)
        # The varlink socket's path must fit a sockaddr_un: under a long work
        # directory (a long scenario or configuration name) the runtime
        # directory is a short one of its own, on a tmpfs as the work
        # directories are, until stop() copies its files back into workdir/run.
        self.run_kept = None
        if len(self.socket) > SUN_PATH_MAX:
            shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
            self.run_kept, self.run = self.run, tempfile.mkdtemp(prefix="bwgov-bench-run-", dir=shm)
        with open(os.path.join(self.conf, "bwgov.conf"), "w") as f:
            f.write(f"[Governor]\nInterval={interval}\n")
            # Adoption, writes and credit are read from metrics.prom: keep
            # it rewritten every Interval=, not every MetricsInterval= (10 s).
            if "MetricsInterval" not in (extra_global or {}):
                f.write(f"MetricsInterval={interval}\n")
            for k, v in (extra_global or {}).items():
                f.write(f"{k}={v}\n")
        for u in self.units:
            with open(os.path.join(self.conf, u + ".d", "10-bench.conf"), "w") as f:
                f.write(f"[Bandwidth]\nMode={mode}\n")
                if credit_max_s is not None:
                    f.write(f"CreditMax={credit_max_s:g}s\n")
                if quota_max_pct is not None:
                    f.write(f"CPUQuotaMax={quota_max_pct:g}%\n")
                for k, v in list((extra_unit or {}).items()) + list(((per_unit or {}).get(u) or {}).items()):
                    f.write(f"{k}={v}\n")

    @property
    def metrics_path(self):
        return os.path.join(self.run, "metrics.prom")

    def seed_state(self, units, credit_usec=0):
        """Write state.json before start (see state_json)."""
        with open(os.path.join(self.state, "state.json"), "w") as f:
            json.dump(state_json(units, credit_usec), f, indent=2)

    def start(self, trace, watch_files, timeout=10.0, ready_metric="bwgov_baseline_quota_usec"):
        """Starts bwgovd under trace (a WriteTrace) and waits until it has
        adopted every unit (its metrics show ready_metric for each; the
        baseline quota is absent for an unlimited cgroup, the baseline
        burst is there for every adopted unit)."""
        self.trace = trace
        with open(self.log, "w") as log:
            pid = trace.launch([self.binary, "--config-dir", self.conf, "--state-dir", self.state,
                                "--runtime-dir", self.run, "--log-level", "info"], os.path.basename(self.binary),
                               watch_files, stdout=subprocess.DEVNULL, stderr=log)
        self.proc = trace.proc
        if not pid:
            return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(ready_metric in parse_metrics(self.metrics_path, u) for u in self.units):
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    @property
    def pid(self):
        return self.trace.pid

    @property
    def socket(self):
        """Its varlink socket (bwgovctl --socket)."""
        return os.path.join(self.run, "io.bwgov.Governor")

    def metrics(self, unit=None):
        return parse_metrics(self.metrics_path, unit or self.unit)

    def stop(self):
        self.trace.stop()
        if self.run_kept:
            for e in os.scandir(self.run):
                if e.is_file(follow_symlinks=False):
                    shutil.copy2(e.path, self.run_kept)
            shutil.rmtree(self.run, ignore_errors=True)
            self.run, self.run_kept = self.run_kept, None
        return self.proc.returncode if self.proc else None

    def log_tail(self, n=20):
        try:
            with open(self.log) as f:
                return f.read().splitlines()[-n:]
        except OSError:
            return []


class Koordinator:
    """tests/bench/koordinator.py as its own process."""

    def __init__(self, script, bw_dir, v2, cap_pct=300.0, interval=1.0, workdir=None):
        self.argv = [sys.executable, script, "--dir", bw_dir, "--cap", f"{cap_pct:g}", "--interval", f"{interval:g}"]
        if v2:
            self.argv.append("--v2")
        self.proc = None
        self.log = os.path.join(workdir, "koordinator.log") if workdir else os.devnull

    def start(self, trace, watch_files):
        self.trace = trace
        with open(self.log, "w") as log:
            pid = trace.launch(self.argv, os.path.basename(sys.executable), watch_files, stdout=subprocess.PIPE,
                               stderr=log, text=True)
        self.proc = trace.proc
        time.sleep(0.15)          # interpreter start-up; it reads the baseline first
        return bool(pid) and self.proc.poll() is None

    @property
    def pid(self):
        return self.trace.pid

    def stop(self):
        self.trace.stop()
        try:
            out = self.proc.stdout.read()
            return json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError, OSError):
            return None
