#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Overhead and scale of bwgovd against a simulated kernel (issue 6, item 4).

For each size N: a fixture tree of N cgroups (simkernel.py create) on tmpfs,
one Mode=elastic unit per cgroup (Interval=1s, baseline 0.5 CPU), and
simkernel.py playing the kernel (5 % of the cgroups with a square-wave load
that gets throttled, raised and decays; the rest steady under the baseline).

1. Native run: time until every unit is adopted, then over a window: CPU %
   of one core (/proc/PID/stat), VmRSS/VmHWM, bwgovd's writes, and the tick
   latency = how long the event loop stays busy after each wake-up,
   measured in-process by looptime.so (an LD_PRELOAD shim around
   epoll_wait, compiled here with the system compiler): units whose timers
   fall due together wait for each other, so the longest busy period is
   the worst delay of a tick.
2. `valgrind --tool=callgrind --instr-atstart=no`: instrumentation is
   switched on with callgrind_control only once every unit is adopted, runs
   for a few seconds and is dumped. Instructions per cgroup per tick = the
   unit timer's inclusive instructions per call + the host timer's
   (metrics, host pressure, periodic state save) per call divided by the
   number of units + the event loop's remaining instructions per unit tick;
   under valgrind the daemon falls behind the clock, so a plain total /
   unit ticks would overcount the once-per-interval work.

With every file held bwgovd keeps 3 fds per cgroup open in the fixture's
v2 tree (5 on hybrid); a size where that does not fit under RLIMIT_NOFILE
is reported as such (with the fds it held: its plan keeps fewer, see
bwgovd(8)) and still attempted, and an adoption that does not finish
within --adopt-timeout is reported with how far it got.

  overhead.py --bwgovd BUILD/src/daemon/bwgovd [--sizes 10,100,1000,10000]
              [--window 10] [--callgrind-ticks 3] [--out FILE.json]
"""

import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIMKERNEL = os.path.join(HERE, "simkernel.py")
CLK_TCK = os.sysconf("SC_CLK_TCK")
FDS_PER_CGROUP = 3
SIM_BUSY, SIM_CYCLE, SIM_SEED, SIM_TICK = 0.05, 40.0, 1, 0.5

sys.path.insert(0, HERE)
import simkernel  # noqa: E402


def log(msg):
    print(f"[overhead] {msg}", file=sys.stderr, flush=True)


def cpu_s(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def status(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def unit_writes(path):
    """{unit: bwgov_writes_total}."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("bwgov_writes_total{"):
                    name = line.split('unit="', 1)[1].split('"', 1)[0]
                    out[name] = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return out


def metrics(path):
    """(units adopted, sum of bwgov_writes_total, bwgov_ticks_total)."""
    adopted = writes = ticks = 0
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("bwgov_credit_usec{"):
                    adopted += 1
                elif line.startswith("bwgov_writes_total{"):
                    writes += int(line.split()[1])
                elif line.startswith("bwgov_ticks_total "):
                    ticks = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return adopted, writes, ticks


def children(pid):
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def find_descendant(pid, comm):
    """The first descendant of pid whose comm is comm (strace forks)."""
    todo = children(pid)
    while todo:
        c = todo.pop(0)
        try:
            with open(f"/proc/{c}/comm") as f:
                if f.read().strip() == comm[:15]:
                    return c
        except OSError:
            continue
        todo += children(c)
    return None


def stop(p, timeout=20):
    """SIGTERM, then SIGKILL (by PID) after timeout. Returns seconds taken
    to exit after SIGTERM, or None when it had to be killed."""
    if p is None or p.poll() is not None:
        return 0.0
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=timeout)
        return round(time.monotonic() - t0, 2)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


class Fixture:
    """Tree, configuration and simulated kernel for N cgroups."""

    def __init__(self, n, base):
        self.n = n
        self.dir = tempfile.mkdtemp(prefix=f"bwgov-bench-ovh-{n}-", dir=base)
        self.cg = os.path.join(self.dir, "cg")
        self.conf = os.path.join(self.dir, "conf")
        self.sim = None
        subprocess.run([sys.executable, SIMKERNEL, "create", "--root", self.cg, "--count", str(n)], check=True)
        os.makedirs(self.conf)
        with open(os.path.join(self.conf, "bwgov.conf"), "w") as f:
            f.write("[Governor]\nInterval=1s\n")
        body = "[Bandwidth]\nMode=elastic\nCreditMax=30s\nCPUQuotaMax=150%\n"
        for i in range(n):
            d = os.path.join(self.conf, f"bwgov-ovh-{i}.d")
            os.mkdir(d)
            with open(os.path.join(d, "10-bench.conf"), "w") as f:
                f.write(body)

    def start_sim(self):
        self.sim_out = open(os.path.join(self.dir, "sim.json"), "w")
        # Counters move every SIM_TICK s: with whole seconds, a 1 s sample
        # sees 0 or 2 steps of a steady 0.3 CPU now and then (0.6 CPU: over
        # its 0.5 baseline, spending), an aliasing no kernel counter has.
        self.sim = subprocess.Popen([sys.executable, SIMKERNEL, "run", "--root", self.cg, "--count", str(self.n),
                                     "--tick", str(SIM_TICK),
                                     "--busy", str(SIM_BUSY), "--cycle", str(SIM_CYCLE), "--seed", str(SIM_SEED)],
                                    stdout=self.sim_out)

    def stop_sim(self):
        stop(self.sim)
        self.sim_out.close()
        try:
            with open(os.path.join(self.dir, "sim.json")) as f:
                return json.loads(f.read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            return None

    def daemon_args(self, tag):
        state = os.path.join(self.dir, f"state-{tag}")
        run = os.path.join(self.dir, f"run-{tag}")
        return run, ["--config-dir", self.conf, "--state-dir", state, "--runtime-dir", run,
                     "--cgroup-root", self.cg, "--host-pressure", "/dev/null", "--log-level", "info"]

    def remove(self):
        stop(self.sim)
        shutil.rmtree(self.dir, ignore_errors=True)


def count_governed(log_path):
    """Units that found their cgroup ("governing cgroup" at --log-level=info):
    progress while the metrics file is not yet written."""
    try:
        with open(log_path, errors="replace") as f:
            return sum(1 for line in f if ": governing cgroup " in line)
    except OSError:
        return 0


def wait_adopted(log_path, proc, metrics_path, n, timeout):
    """Adopted = every unit has a credit in the metrics file (written by the
    host timer after the units' first ticks)."""
    t0 = time.monotonic()
    last = (0, 0, 0)
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            break
        last = metrics(metrics_path)
        if last[0] >= n:
            return True, time.monotonic() - t0, last
        time.sleep(0.25)
    return False, time.monotonic() - t0, (max(last[0], count_governed(log_path)),) + tuple(last[1:])


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(p * len(v) + 0.5)) - 1))
    return v[k]


def build_shim(outdir):
    """Compile looptime.c (LD_PRELOAD, epoll_wait busy periods); None if no
    compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    so = os.path.join(outdir, "looptime.so")
    p = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", so, os.path.join(HERE, "looptime.c"), "-ldl"],
                       capture_output=True, text=True)
    return so if p.returncode == 0 else None


def read_shim(path, t_from_ns, t_to_ns):
    busy = []
    try:
        with open(path) as f:
            next(f)
            for line in f:
                at, ns = line.split()
                if t_from_ns <= int(at) <= t_to_ns:
                    busy.append(int(ns) / 1e9)
    except (OSError, StopIteration, ValueError):
        return None
    return busy


class Probe:
    """What systemd and an operator would see while the daemon adopts, runs
    and stops: a fake service manager (NOTIFY_SOCKET, WATCHDOG_USEC) that
    records READY=1 and every WATCHDOG=1, and `bwgovctl status` run every
    50 ms with its latency. Phases are marked by time."""

    WATCHDOG_USEC = 2000000

    def __init__(self, tmpdir, bwgovctl, socket_path, watchdog_usec=None):
        self.watchdog_usec = watchdog_usec or self.WATCHDOG_USEC
        self.sock_path = os.path.join(tmpdir, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.sock_path)
        self.sock.settimeout(0.2)
        self.ctl, self.socket_path = bwgovctl, socket_path
        self.ready_at = None
        self.watchdog = []
        self.status = []                # (t, seconds, rc, stderr)
        self.done = False
        self.paused = False             # no status calls (while CPU is measured)
        self.t0 = time.monotonic()
        self.threads = [threading.Thread(target=self._notify, daemon=True),
                        threading.Thread(target=self._poll, daemon=True)]

    def env(self):
        return {"NOTIFY_SOCKET": self.sock_path, "WATCHDOG_USEC": str(self.watchdog_usec)}

    def start(self):
        self.t0 = time.monotonic()
        for t in self.threads:
            t.start()

    def _notify(self):
        while not self.done:
            try:
                msg = self.sock.recv(4096).decode(errors="replace")
            except (socket.timeout, OSError):
                continue
            now = time.monotonic() - self.t0
            if "WATCHDOG=1" in msg.split("\n"):
                self.watchdog.append(now)
            if "READY=1" in msg.split("\n") and self.ready_at is None:
                self.ready_at = now

    def _poll(self):
        while not self.done:
            if self.ctl and not self.paused and os.path.exists(self.socket_path):
                t = time.monotonic()
                err = ""
                try:
                    r = subprocess.run([self.ctl, "--socket", self.socket_path, "status"], capture_output=True,
                                       timeout=30)
                    rc, err = r.returncode, r.stderr.decode(errors="replace").strip()[-200:]
                except subprocess.TimeoutExpired:
                    rc = -1
                self.status.append((t - self.t0, time.monotonic() - t, rc, err))
            time.sleep(0.05)

    def stop(self):
        self.done = True
        for t in self.threads:
            t.join(timeout=35)
        self.sock.close()

    def summary(self, t_from, t_to):
        """Status latency and watchdog gaps within [t_from, t_to] (seconds
        since start)."""
        lat = [x[1] for x in self.status if t_from <= x[0] <= t_to]
        # No daemon answered: bwgovctl found none (exit 3, the socket gone
        # or refusing), or it closed the connection before its reply. While
        # stopping, that is a call that met the exit; counted apart.
        def gone_(x):
            return x[2] == 3 or (x[2] != 0 and "closed the connection" in x[3])
        failed = sum(1 for x in self.status if t_from <= x[0] <= t_to and x[2] != 0 and not gone_(x))
        gone = sum(1 for x in self.status if t_from <= x[0] <= t_to and gone_(x))
        pings = [t_from] + [w for w in self.watchdog if t_from <= w <= t_to] + [t_to]
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        errors = [f"exit {x[2]}: {x[3]}" for x in self.status if t_from <= x[0] <= t_to and x[2] != 0]
        return {"status_calls": len(lat), "status_failed": failed, "status_not_running": gone,
                "status_errors": errors[:3],
                "status_max_ms": round(max(lat) * 1e3, 1) if lat else None,
                "status_p99_ms": round(pct(lat, 0.99) * 1e3, 1) if lat else None,
                "watchdog_pings": len(pings) - 2,
                "watchdog_max_gap_s": round(max(gaps), 2) if gaps else None}


def restored(fx):
    """Cgroups of the simulated tree not back at what simkernel create
    wrote (cpu.max "50000 100000", cpu.max.burst 0)."""
    bad = []
    for i in range(fx.n):
        d = os.path.join(fx.cg, simkernel.cgroup_name(i))
        try:
            with open(os.path.join(d, "cpu.max")) as f:
                q, per = f.read().split()
            with open(os.path.join(d, "cpu.max.burst")) as f:
                b = int(f.read().split()[0])
            if int(q) != 50000 or int(per) != 100000 or b != 0:
                bad.append(simkernel.cgroup_name(i))
        except (OSError, ValueError):
            bad.append(simkernel.cgroup_name(i))
    return bad


def metrics_at(path):
    """(metrics(path), unit_writes(path), mtime) of one version of the file."""
    try:
        mt = os.stat(path).st_mtime
    except OSError:
        mt = None
    return metrics(path), unit_writes(path), mt


def native_run(fx, bwgovd, window, adopt_timeout, stop_timeout=60, bwgovctl=None):
    run, args = fx.daemon_args("native")
    shim = build_shim(fx.dir)
    shim_out = os.path.join(fx.dir, "looptime.txt")
    probe = Probe(fx.dir, bwgovctl, os.path.join(run, "io.bwgov.Governor"))
    env = dict(os.environ)
    env.update(probe.env())
    if shim:
        env.update(LD_PRELOAD=shim, LOOPTIME_OUT=shim_out)
    logf = open(os.path.join(fx.dir, "native.log"), "w")
    probe.start()
    t0 = time.monotonic()
    d = subprocess.Popen([bwgovd] + args, stdout=subprocess.DEVNULL, stderr=logf, env=env)
    res = {"mode": "native", "tick_latency_from": "looptime.so (epoll_wait shim)" if shim else None}
    try:
        pid = d.pid
        ok, took, (adopted, _, _) = wait_adopted(os.path.join(fx.dir, "native.log"), d,
                                                 os.path.join(run, "metrics.prom"), fx.n, adopt_timeout)
        res.update({"adopted": adopted, "adopt_s": round(took, 2), "adopt_cpu_s": cpu_s(pid),
                    "adopt_complete": ok, "ready_s": probe.ready_at and round(probe.ready_at, 2)})
        res["during_adoption"] = probe.summary(0, took)
        if not ok:
            res["vmrss_kib"] = status(pid, "VmRSS")
            res["vmhwm_kib"] = status(pid, "VmHWM")
            res["stop_s"] = stop(d, timeout=stop_timeout)
            return res
        # A few status calls while it runs, then none: the CPU window
        # measures the daemon, not its answers to the probe.
        time.sleep(1.5)                                   # first decisions after priming
        probe.paused = True
        time.sleep(0.5)
        mp = os.path.join(run, "metrics.prom")
        c0, w0, m0 = cpu_s(pid), time.monotonic(), time.monotonic_ns()
        (_, wr0, tk0), uw0, mt0 = metrics_at(mp)
        time.sleep(window)
        c1, w1, m1 = cpu_s(pid), time.monotonic(), time.monotonic_ns()
        (_, wr1, tk1), uw1, mt1 = metrics_at(mp)
        res["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
        rss, hwm = status(pid, "VmRSS"), status(pid, "VmHWM")
        probe.paused = False
        time.sleep(1.0)
        # The counters are as of the metrics file's writes (every
        # MetricsInterval=): rates over the time between those two writes.
        span = (mt1 - mt0) if mt0 and mt1 and mt1 > mt0 else None
        plan = simkernel.demand_plan(fx.n, SIM_BUSY, SIM_CYCLE, SIM_SEED)
        steady_units = [simkernel.cgroup_name(i) for i, (busy, _) in enumerate(plan) if not busy]
        steady_writes = sum(uw1.get(u, 0) - uw0.get(u, 0) for u in steady_units)
        res.update({
            "window_s": round(w1 - w0, 2),
            "cpu_pct_one_core": round(100.0 * (c1 - c0) / (w1 - w0), 3),
            "cpu_s_window": round(c1 - c0, 3),
            "vmrss_kib": rss, "vmhwm_kib": hwm,
            "counter_span_s": span and round(span, 2),
            "writes_window": wr1 - wr0, "unit_ticks_window": tk1 - tk0,
            "cpu_us_per_unit_tick": (round(1e6 * (c1 - c0) / (w1 - w0) / ((tk1 - tk0) / span), 1)
                                     if span and tk1 > tk0 else None),
            "writes_per_min_per_cgroup": round((wr1 - wr0) / fx.n / (span / 60), 4) if span else None,
            "writes_per_min_steady_cgroup": (round(steady_writes / len(steady_units) / (span / 60), 4)
                                             if steady_units and span else None),
            "startup_wall_s": round(time.monotonic() - t0, 2),
        })
        t_stop = time.monotonic() - probe.t0
        res["stop_s"] = stop(d, timeout=stop_timeout)
        res["during_stop"] = probe.summary(t_stop, time.monotonic() - probe.t0)
        res["during_run"] = probe.summary(took, t_stop)
        res["not_restored"] = len(restored(fx))
        busy = read_shim(shim_out, m0, m1) if shim else None
        if busy is not None:
            res["wakeups_per_s"] = round(len(busy) / (w1 - w0), 1)
            res["tick_busy_ms"] = {"p50": pct(busy, 0.5) and round(pct(busy, 0.5) * 1e3, 3),
                                   "p99": pct(busy, 0.99) and round(pct(busy, 0.99) * 1e3, 3),
                                   "max": round(max(busy) * 1e3, 3) if busy else None}
        return res
    finally:
        stop(d, timeout=stop_timeout)
        probe.stop()
        logf.close()
        try:
            with open(os.path.join(fx.dir, "native.log")) as f:
                text = f.read()
            res["emfile_warnings"] = text.count("Too many open files")
        except OSError:
            pass


def parse_callgrind(path):
    """Total Ir, and per callee (name without a .isra/.part suffix) the
    calls into it and their inclusive Ir, from a callgrind dump."""
    total = 0
    names = {}
    callees = {}
    cur_cfn = None
    pending = None
    with open(path, errors="replace") as f:
        for line in f:
            if pending is not None:
                parts = line.split()
                if parts:
                    try:
                        pending[1] += int(parts[-1])
                    except ValueError:
                        pass
                pending = None
                continue
            if line.startswith(("summary:", "totals:")):
                total = max(total, int(line.split()[1]))
            elif line.startswith(("fn=", "cfn=")):
                m = re.match(r'c?fn=\((\d+)\)(?: (.*))?', line.strip())
                if m:
                    if m.group(2):
                        names[m.group(1)] = m.group(2)
                    name = names.get(m.group(1))
                else:
                    name = line.strip().split("=", 1)[1]
                if line.startswith("cfn="):
                    cur_cfn = name
            elif line.startswith("calls="):
                fn = (cur_cfn or "?").split(".")[0]
                c = callees.setdefault(fn, [0, 0])
                c[0] += int(line.split("=")[1].split()[0])
                pending = c
                cur_cfn = None
    return total, {k: {"calls": v[0], "incl": v[1]} for k, v in callees.items()}


# Phases, per cgroup per tick: the unit-side ones per unit tick, the host
# timer's (metrics) per host pass over the n units.
PARTS = {"reads": ("bw_cg_read_stat", "bw_cg_read_stat_light", "bw_cg_read_usage", "bw_cg_read_quota",
                   "bw_cg_read_bandwidth", "bw_cg_read_pressure"),
         "policy": "bw_policy_decide",
         "history and state record": ("bw_history_push", "store_record_unit"),
         "scheduling": ("ticker_schedule", "unit_schedule"),
         "state saves": ("bw_state_save", "bw_state_journal_append"),
         "metrics": ("metrics_job_new", "metrics_job_step", "metrics_write"),
         "writes": "bw_cg_write_bandwidth"}
HOST_PARTS = ("metrics",)


def per_cgroup_tick(total, callees, n):
    """Instructions per cgroup per tick: everything outside the host timer
    (the units' samples, decisions, writes, the ticker and the event loop)
    per unit tick, plus the host timer (host pressure, shedding, latency
    guard, metrics and the steps that finish them, the periodic state
    save) per pass spread over the n
    units it serves. Under valgrind the daemon runs slower than the clock,
    so host-timer work per unit tick would be overcounted by a plain
    total / unit ticks. Works with the ticker (manager_units_due ->
    unit_tick) and with the older per-unit timers (on_unit_timer ->
    unit_tick). Parts: instructions per cgroup per tick of each phase
    (inclusive, so they overlap the totals, not each other); "event loop
    and other" is what is left of the unit side. A unit tick is counted
    at unit_on_due() (called across files, never inlined; it also
    reschedules), else at unit_tick(), which the compiler may inline into
    it."""
    t = callees.get("unit_on_due") or callees.get("unit_tick")
    h = callees.get("on_host_timer") or {"calls": 0, "incl": 0}
    # The metrics file is written in steps from a timer of its own after
    # the host pass that starts it: host-timer work too.
    m = callees.get("on_metrics_step") or {"calls": 0, "incl": 0}
    if not t or not t["calls"]:
        return None, {}
    unit_side = max(0, total - h["incl"] - m["incl"])
    unit = unit_side / t["calls"]
    host = (h["incl"] + m["incl"]) / h["calls"] / n if h["calls"] else 0.0
    parts = {"unit side": round(unit), "host timer / n": round(host),
             "unit tick": round(t["incl"] / t["calls"])}
    for label, fns in PARTS.items():
        fns = (fns,) if isinstance(fns, str) else fns
        ir = sum((callees.get(fn) or {}).get("incl", 0) for fn in fns)
        if label in HOST_PARTS:
            parts[label] = round(ir / h["calls"] / n) if h["calls"] else 0
        else:
            parts[label] = round(ir / t["calls"])
    parts["event loop and other"] = max(0, round(unit - t["incl"] / t["calls"]))
    return round(unit + host), parts


def callgrind_run(fx, bwgovd, ticks, adopt_timeout):
    run, args = fx.daemon_args("callgrind")
    out = os.path.join(fx.dir, "callgrind.out")
    logf = open(os.path.join(fx.dir, "callgrind.log"), "w")
    vg = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                           bwgovd] + args, stdout=subprocess.DEVNULL, stderr=logf)
    res = {"mode": "callgrind", "ticks_requested": ticks}
    try:
        ok, took, (adopted, _, _) = wait_adopted(os.path.join(fx.dir, "callgrind.log"), vg,
                                                 os.path.join(run, "metrics.prom"), fx.n, adopt_timeout)
        res.update({"adopted": adopted, "adopt_s": round(took, 2), "adopt_complete": ok})
        if not ok:
            return res
        time.sleep(1.5)
        if subprocess.run(["callgrind_control", "-i", "on", str(vg.pid)], capture_output=True).returncode != 0:
            res["error"] = "callgrind_control -i on failed"
            return res
        time.sleep(ticks)
        if subprocess.run(["callgrind_control", "-d", str(vg.pid)], capture_output=True).returncode != 0:
            res["error"] = "callgrind_control -d failed"
            return res
        dumps = sorted(f for f in os.listdir(fx.dir) if f.startswith("callgrind.out."))
        if not dumps:
            res["error"] = "no callgrind dump"
            return res
        dump = os.path.join(fx.dir, dumps[-1])
        total, callees = parse_callgrind(dump)
        ipt, parts = per_cgroup_tick(total, callees, fx.n)
        res.update({"instructions": total,
                    "unit_ticks": (callees.get("on_unit_timer") or {}).get("calls"),
                    "host_ticks": (callees.get("on_host_timer") or {}).get("calls"),
                    "writes": (callees.get("bw_cg_write_bandwidth") or {}).get("calls"),
                    "instructions_per_cgroup_tick": ipt, "parts": parts})
        return res
    finally:
        stop(vg, timeout=60)
        logf.close()


def default_bwgovctl(bwgovd):
    """BUILD/src/ctl/bwgovctl next to BUILD/src/daemon/bwgovd, if built."""
    p = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(bwgovd))), "ctl", "bwgovctl")
    return p if os.access(p, os.X_OK) else None


def run_size(n, bwgovd, base, window, ticks, adopt_timeout, do_callgrind=True, stop_timeout=60, bwgovctl=None):
    """One size: native run (with the watchdog and status probe), then
    callgrind. The daemon gets RLIMIT_NOFILE's soft limit raised to the
    hard one, as under systemd with LimitNOFILE=; where the hard limit is
    below what every held file would need, it releases files (bwgovd(8),
    FILE DESCRIPTORS)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = FDS_PER_CGROUP * n + 32
    res = {"cgroups": n, "fds_all_held": need, "rlimit_nofile": [soft, hard], "fd_limited": need > hard}
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass
    bwgovctl = bwgovctl or default_bwgovctl(bwgovd)
    log(f"{n} cgroups: building the fixture")
    fx = Fixture(n, base)
    try:
        fx.start_sim()
        log(f"{n} cgroups: native run")
        res["native"] = native_run(fx, bwgovd, window, adopt_timeout, stop_timeout, bwgovctl)
        if do_callgrind and shutil.which("valgrind") and res["native"].get("adopt_complete"):
            log(f"{n} cgroups: callgrind run")
            res["callgrind"] = callgrind_run(fx, bwgovd, ticks, adopt_timeout * 4)
        res["simkernel"] = fx.stop_sim()
    finally:
        fx.remove()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return res


def markdown(results):
    hdr = ["cgroups", "instructions / cgroup / tick", "CPU % of one core", "RSS · peak (VmRSS · VmHWM)",
           "adoption (s)", "stop (s), all restored", "status max (ms) adopting · running · stopping",
           "watchdog max gap (s)", "notes"]
    lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for r in results:
        nat = r.get("native") or {}
        cg = r.get("callgrind") or {}
        notes = []
        if r.get("fd_limited"):
            notes.append(f"every file held would need ~{r['fds_all_held']} fds, hard limit {r['rlimit_nofile'][1]}: "
                         f"{nat.get('fds')} held")
        if nat.get("emfile_warnings"):
            notes.append(f"{nat['emfile_warnings']} EMFILE lines")
        if nat and not nat.get("adopt_complete"):
            notes.append(f"adoption incomplete: {nat.get('adopted')}/{r['cgroups']} after {nat.get('adopt_s')} s")
        if nat.get("cpu_us_per_unit_tick") is not None:
            notes.append(f"{nat['cpu_us_per_unit_tick']:g} µs CPU per unit tick")
        if nat.get("writes_per_min_steady_cgroup") is not None:
            notes.append(f"{nat['writes_per_min_steady_cgroup']:.3f} writes/min per steady cgroup")
        if cg.get("error"):
            notes.append(cg["error"])
        st = [(nat.get(k) or {}).get("status_max_ms") for k in ("during_adoption", "during_run", "during_stop")]
        gaps = [(nat.get(k) or {}).get("watchdog_max_gap_s") for k in ("during_adoption", "during_run", "during_stop")]
        gaps = [g for g in gaps if g is not None]
        stop_s = nat.get("stop_s")
        lines.append("| " + " | ".join([
            str(r["cgroups"]),
            f"{cg['instructions_per_cgroup_tick']:,}" if cg.get("instructions_per_cgroup_tick") else "–",
            f"{nat['cpu_pct_one_core']:.2f}" if nat.get("cpu_pct_one_core") is not None else "–",
            (f"{nat['vmrss_kib'] / 1024:.1f} · {nat['vmhwm_kib'] / 1024:.1f} MiB"
             if nat.get("vmhwm_kib") and nat.get("vmrss_kib") else "–"),
            f"{nat.get('adopt_s')}" if nat.get("adopt_s") is not None else "–",
            ("killed" if stop_s is None and "stop_s" in nat else f"{stop_s}") +
            (f", {'yes' if nat.get('not_restored') == 0 else str(nat.get('not_restored')) + ' not'}"
             if "not_restored" in nat else ""),
            " · ".join("–" if x is None else f"{x:g}" for x in st),
            f"{max(gaps):g}" if gaps else "–",
            "; ".join(notes) or "–"]) + " |")
    phases = [k for k in ("unit side", "host timer / n", "unit tick", "reads", "policy", "history and state record",
                          "scheduling", "writes", "state saves", "metrics", "event loop and other")]
    rows = [r for r in results if (r.get("callgrind") or {}).get("parts")]
    if rows:
        lines += ["", "Instructions per cgroup per tick by phase (inclusive; the first two add up to the total):", "",
                  "| cgroups | " + " | ".join(phases) + " |", "|" + "---|" * (len(phases) + 1)]
        for r in rows:
            pp = r["callgrind"]["parts"]
            lines.append(f"| {r['cgroups']} | " + " | ".join(f"{pp.get(k, 0):,}" for k in phases) + " |")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bwgovd", required=True, help="the bwgovd binary to measure (BUILD/src/daemon/bwgovd)")
    ap.add_argument("--sizes", default="10,100,1000,10000",
                    help="comma-separated cgroup counts, one run each (default 10,100,1000,10000)")
    ap.add_argument("--window", type=float, default=21.0,
                    help="native measurement window, seconds (≥ 2 × MetricsInterval=, whose file has the counters)")
    ap.add_argument("--callgrind-ticks", type=float, default=21.0,
                    help="seconds of instrumentation (≥ 21: two periodic state saves and two metrics writes)")
    ap.add_argument("--callgrind-max", type=int, default=10000, help="largest size run under callgrind")
    ap.add_argument("--bwgovctl", help="bwgovctl for the status probe (default: next to --bwgovd in the build)")
    ap.add_argument("--adopt-timeout", type=float, default=60.0,
                    help="seconds to wait until every unit is adopted, four times that above 1 000 cgroups "
                         "(default 60)")
    ap.add_argument("--tmp", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                    help="where the fixture trees are made (default /dev/shm, a tmpfs, when there is one)")
    ap.add_argument("--out", help="write the results as JSON to this file (default: only the table on stdout)")
    a = ap.parse_args(argv)
    results = []
    for n in [int(x) for x in a.sizes.split(",") if x]:
        results.append(run_size(n, a.bwgovd, a.tmp, a.window, a.callgrind_ticks,
                                a.adopt_timeout * (4 if n > 1000 else 1),
                                do_callgrind=n <= a.callgrind_max, bwgovctl=a.bwgovctl))
        log(json.dumps(results[-1]))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
