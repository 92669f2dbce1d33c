#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fixture-driven tests of the real bwgovd binary.

A simulated kernel stands in for /sys/fs/cgroup: a cgroup v2 tree of regular
files whose cpu.stat and cpu.pressure a driver thread advances from a demand
model and whatever cpu.max / cpu.max.burst the daemon wrote. Synchronisation is
by waiting on the daemon's metrics file (its tick counters), never by sleeping
for a guessed time. No root needed.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_common import read_metrics  # noqa: E402

BWGOVD = os.environ.get("BWGOVD") or os.path.join(os.environ.get("BWGOV_BUILD_ROOT", "build"), "src/daemon/bwgovd")
PERIOD = 100000
SLICES = 10                     # the simulator advances in PERIOD / SLICES steps


def resting(quota):
    """Where a full bucket rests a baseline of `quota` without CPUQuotaMax=:
    four times it (BW_QUOTA_MAX_DEFAULT_FACTOR), never above the host's CPUs."""
    return min(4 * quota, (os.cpu_count() or 1) * PERIOD)


REST = resting(50000)           # most units here have a baseline of 50000


def write_in_place(path, text):
    # The daemon keeps cpu.stat/cpu.pressure open and preads them: the inode
    # must stay, so rewrite in place rather than rename.
    with open(path, "r+" if os.path.exists(path) else "w") as f:
        f.seek(0)
        f.write(text)
        f.truncate()


class SimCgroup:
    """A cgroup under CFS bandwidth control, one period at a time."""

    def __init__(self, root, path, quota=50000, burst=0):
        self.dir = os.path.join(root, path)
        os.makedirs(self.dir, exist_ok=True)
        self.lock = threading.Lock()
        self.demand = 0.0          # CPUs wanted, averaged over a period
        self.usage = 0
        self.nr_periods = 0
        self.nr_throttled = 0
        self.throttled = 0
        self.nr_bursts = 0
        self.burst_used = 0
        self.full = 0
        self.some = 0              # stall of the group's own tasks beyond throttling
        self.own_some = 0.0        # ... as a share of wall time
        self.bucket = 0            # kernel burst accumulation
        self.slice_index = 0
        self.q = self.b = None
        self.avail = None
        self.period_used = 0
        self.period_throttled = False
        self.max_burst_seen_violation = None
        with open(os.path.join(self.dir, "cpu.max"), "w") as f:
            f.write(f"{quota} {PERIOD}\n")
        with open(os.path.join(self.dir, "cpu.max.burst"), "w") as f:
            f.write(f"{burst}\n")
        self.flush()

    def read_max(self):
        with open(os.path.join(self.dir, "cpu.max")) as f:
            q, p = f.read().split()
        with open(os.path.join(self.dir, "cpu.max.burst")) as f:
            b = int(f.read().strip() or 0)
        return (None if q == "max" else int(q)), int(p), b

    def step(self, slice_usec):
        """One slice of a period (SLICES of them per period): at the start
        of a period the group gets its quota plus what its burst saved; it
        runs what it wants of that; when it runs dry it is throttled for
        the rest of the period. Counters move slice by slice, so that rates
        read at any moment are smooth, as the kernel's are."""
        if self.slice_index == 0:
            q, p, b = self.read_max()
            if q is not None and b > q:
                self.max_burst_seen_violation = (q, b)
            self.q, self.b = q, b
            self.avail = None if q is None else q + min(self.bucket, b)
            self.period_used = 0
            self.period_throttled = False
        want = int(self.demand * slice_usec)
        got = want if self.avail is None else min(want, self.avail)
        if self.avail is not None:
            self.avail -= got
            if want > got:
                # Throttled for the rest of the slice, on every CPU it ran on.
                frac = 1.0 - got / want
                self.period_throttled = True
                self.throttled += int(frac * slice_usec * max(1.0, self.demand))
                self.full += int(frac * slice_usec)
        self.usage += got
        self.period_used += got
        self.some += int(self.own_some * slice_usec)
        self.slice_index += 1
        if self.slice_index == SLICES:
            self.slice_index = 0
            self.nr_periods += 1
            if self.q is not None:
                if self.period_throttled:
                    self.nr_throttled += 1
                if self.period_used > self.q:
                    self.nr_bursts += 1
                    self.burst_used += self.period_used - self.q
                    self.bucket -= self.period_used - self.q
                else:
                    self.bucket = min(self.b, self.bucket + (self.q - self.period_used))

    def flush(self):
        write_in_place(os.path.join(self.dir, "cpu.stat"),
                       f"usage_usec {self.usage}\nuser_usec {self.usage}\nsystem_usec 0\n"
                       f"nr_periods {self.nr_periods}\nnr_throttled {self.nr_throttled}\n"
                       f"throttled_usec {self.throttled}\nnr_bursts {self.nr_bursts}\n"
                       f"burst_usec {self.burst_used}\n")
        write_in_place(os.path.join(self.dir, "cpu.pressure"),
                       f"some avg10=0.00 avg60=0.00 avg300=0.00 total={self.full + self.some}\n"
                       f"full avg10=0.00 avg60=0.00 avg300=0.00 total={self.full}\n")


class Sim(threading.Thread):
    """Advances every cgroup in simulated periods mapped to real time, and
    the host's /proc/pressure/cpu stand-in."""

    def __init__(self, cgroups, host_path, stat_path):
        super().__init__(daemon=True)
        self.cgroups = cgroups
        self.host_path = host_path
        self.stat_path = stat_path
        self.host_rate = 0.0       # host some pressure, fraction of wall time
        self.host_total = 0
        self.other_cpus = 0.0      # CPUs used outside the governed groups
        self.other_usec = 0
        self.idle_cpus = 0.0       # CPUs idle (the host is saturated at 0)
        self.idle_usec = 0
        self.stop = threading.Event()
        self.write_host()

    def write_host(self):
        write_in_place(self.host_path,
                       f"some avg10=0.00 avg60=0.00 avg300=0.00 total={self.host_total}\n"
                       f"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        # /proc/stat's aggregate line in USER_HZ (100) ticks: user = busy.
        busy = self.other_usec + sum(c.usage for c in self.cgroups)
        write_in_place(self.stat_path, f"cpu  {busy // 10000} 0 0 {self.idle_usec // 10000} 0 0 0 0 0 0\n"
                                       "cpu0 0 0 0 0 0 0 0 0 0 0\n")

    def run(self):
        last = time.monotonic()
        debt = 0.0
        while not self.stop.is_set():
            time.sleep(0.01)
            now = time.monotonic()
            debt += (now - last) * 1e6
            self.host_total += int(self.host_rate * (now - last) * 1e6)
            self.other_usec += int(self.other_cpus * (now - last) * 1e6)
            self.idle_usec += int(self.idle_cpus * (now - last) * 1e6)
            last = now
            while debt >= PERIOD // SLICES:
                debt -= PERIOD // SLICES
                for c in self.cgroups:
                    with c.lock:
                        c.step(PERIOD // SLICES)
            for c in self.cgroups:
                with c.lock:
                    c.flush()
            self.write_host()


class Daemon:
    def __init__(self, base, env=None):
        self.base = base
        self.env = env or {}            # added to the environment bwgovd runs in
        self.proc = None
        self.log_path = os.path.join(base, "bwgovd.log")

    def start(self):
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [BWGOVD, "--config-dir", os.path.join(self.base, "conf"),
             "--state-dir", os.path.join(self.base, "state"),
             "--runtime-dir", os.path.join(self.base, "run"),
             "--cgroup-root", os.path.join(self.base, "cg"),
             "--host-pressure", os.path.join(self.base, "host-pressure"),
             "--host-stat", os.path.join(self.base, "host-stat"),
             "--log-level", "debug"],
            stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL, env={**os.environ, **self.env})

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=10):
        rc = self.proc.wait(timeout)
        self.log.close()
        return rc

    def logtext(self):
        with open(self.log_path) as f:
            return f.read()

    def metrics(self):
        return read_metrics(self.base)

    def metric(self, name, unit=None, default=None):
        return self.metrics().get((name, unit), default)

    def wait_for(self, pred, timeout=30, what="condition"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"bwgovd exited ({self.proc.returncode}) waiting for {what}:\n" + self.logtext()[-3000:])
            v = pred()
            if v:
                return v
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}\n--- log tail ---\n" + self.logtext()[-3000:])

    def wait_ticks(self, unit, n=1, timeout=30):
        start = self.metric("bwgov_unit_ticks_total", unit, 0)
        self.wait_for(lambda: self.metric("bwgov_unit_ticks_total", unit, 0) >= start + n, timeout,
                      f"{n} ticks of {unit}")


class DaemonTest(unittest.TestCase):
    units = {"app.slice": dict(quota=50000, burst=0, conf="")}
    global_conf = "[Governor]\nInterval=100ms\nMetricsInterval=100ms\n"
    daemon_env = {}

    def prepare(self):
        """Called after the tree and configuration are written, before the
        daemon starts."""

    def setUp(self):
        if not os.path.exists(BWGOVD):
            self.skipTest(f"bwgovd not built at {BWGOVD}")
        self.base = tempfile.mkdtemp(prefix="bwgov-test-daemon-")
        for d in ("cg", "conf", "state", "run"):
            os.makedirs(os.path.join(self.base, d))
        with open(os.path.join(self.base, "cg", "cgroup.controllers"), "w") as f:
            f.write("cpuset cpu io memory pids\n")
        with open(os.path.join(self.base, "conf", "bwgov.conf"), "w") as f:
            f.write(self.global_conf)
        self.cg = {}
        for name, u in self.units.items():
            self.cg[name] = SimCgroup(os.path.join(self.base, "cg"), name, u["quota"], u["burst"])
            d = os.path.join(self.base, "conf", name + ".d")
            os.makedirs(d)
            with open(os.path.join(d, "10-test.conf"), "w") as f:
                f.write("[Bandwidth]\n" + u["conf"])
        self.sim = Sim(list(self.cg.values()), os.path.join(self.base, "host-pressure"),
                       os.path.join(self.base, "host-stat"))
        self.sim.start()
        self.prepare()
        self.d = Daemon(self.base, self.daemon_env)
        self.d.start()

    def tearDown(self):
        self.sim.stop.set()
        self.sim.join()
        if self.d.proc and self.d.proc.poll() is None:
            self.d.proc.kill()
            self.d.wait()
        for c in self.cg.values():
            self.assertIsNone(c.max_burst_seen_violation, "burst exceeded quota at some point")
        if self.d.proc and self.d.proc.returncode not in (0, None, -9):
            print(self.d.logtext()[-3000:], file=sys.stderr)
        shutil.rmtree(self.base, ignore_errors=True)

    def quota(self, unit):
        return self.cg[unit].read_max()[0]

    def burst(self, unit):
        return self.cg[unit].read_max()[2]

    def demand(self, unit, cpus):
        with self.cg[unit].lock:
            self.cg[unit].demand = cpus


class TestRestingHeadroom(DaemonTest):
    units = {"app.slice": dict(quota=50000, burst=0, conf="CreditMax=30s\n")}

    def test_full_credit_rests_at_headroom_and_a_burst_runs_unthrottled(self):
        d = self.d
        # At adoption, with a full bucket: CPUQuotaMax= (4 x the baseline by
        # default) and the resting burst = quota, in one go, before any load.
        d.wait_for(lambda: self.quota("app.slice") == REST and self.burst("app.slice") == 50000, 10,
                   "the resting headroom")
        d.wait_ticks("app.slice", 5)
        writes = d.metric("bwgov_writes_total", "app.slice")
        self.assertEqual(writes, 2)             # cpu.max and cpu.max.burst, once each
        self.assertEqual(d.metric("bwgov_headroom_level", "app.slice"), 4)
        self.assertEqual(d.metric("bwgov_baseline_quota_usec", "app.slice"), 50000)
        c = self.cg["app.slice"]
        with c.lock:
            thr0 = c.nr_throttled
        # A phase at 1.8 x the baseline: the headroom is already there.
        self.demand("app.slice", 0.9)
        d.wait_ticks("app.slice", 15)
        self.demand("app.slice", 0.0)
        with c.lock:
            self.assertEqual(c.nr_throttled, thr0, "throttled although the credit paid for the headroom")
        self.assertEqual(d.metric("bwgov_writes_total", "app.slice"), writes, "writes during the phase")
        self.assertLess(d.metric("bwgov_credit_usec", "app.slice"), 30000000)
        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(), 0)
        self.assertEqual(self.cg["app.slice"].read_max(), (50000, PERIOD, 0))


class TestCreditExhaustion(DaemonTest):
    units = {"app.slice": dict(quota=50000, burst=0, conf="CreditMax=1s\nCPUQuotaMax=150%\n")}

    def test_overload_spends_credit_then_back_to_baseline(self):
        d = self.d
        d.wait_for(lambda: self.quota("app.slice") == 150000, 10, "the resting headroom")
        d.wait_ticks("app.slice", 2)
        c = self.cg["app.slice"]
        with c.lock:
            u0 = c.usage
        t0 = time.monotonic()
        self.demand("app.slice", 1.5)           # three times the baseline
        d.wait_for(lambda: self.quota("app.slice") == 50000, 30, "back to the baseline")
        self.assertIn("BWGOV_REASON=credit-exhausted", d.logtext())
        self.assertEqual(self.burst("app.slice"), 50000)
        # Keep the overload a while longer: no raise while it lasts, and the
        # contract must hold over the run. (The metrics file is rewritten
        # every interval: let it catch up with the kernel first.)
        d.wait_ticks("app.slice", 3)
        writes = d.metric("bwgov_writes_total", "app.slice")
        d.wait_ticks("app.slice", 30)
        self.assertEqual(self.quota("app.slice"), 50000)
        self.assertEqual(d.metric("bwgov_writes_total", "app.slice"), writes)
        with c.lock:
            used = c.usage - u0
        t = time.monotonic() - t0
        budget = 0.5 * t * 1e6 + 1e6 + 50000 + 0.5 * PERIOD   # + one period of simulator slack
        self.assertLessEqual(used, budget, f"used {used}us in {t:.1f}s, budget {budget:.0f}us")
        # Idle again: the credit refills and the headroom comes back.
        self.demand("app.slice", 0.0)
        d.wait_for(lambda: self.quota("app.slice") == 150000, 30, "headroom after the refill")


class TestObserve(DaemonTest):
    units = {"app.slice": dict(quota=50000, burst=0, conf="Mode=observe\n")}

    def test_observe_never_writes(self):
        d = self.d
        path = os.path.join(self.cg["app.slice"].dir, "cpu.max")
        st = os.stat(path)
        self.demand("app.slice", 0.9)
        d.wait_ticks("app.slice", 15)
        self.assertEqual(self.quota("app.slice"), 50000)
        self.assertEqual(self.burst("app.slice"), 0)
        self.assertEqual(os.stat(path).st_mtime_ns, st.st_mtime_ns)
        self.assertEqual(d.metric("bwgov_writes_total", "app.slice"), 0)


class TestHostShedding(DaemonTest):
    global_conf = "[Governor]\nInterval=100ms\nMetricsInterval=100ms\nHostPressureLimit=40%\n"
    units = {
        "low.slice": dict(quota=50000, burst=0, conf="Priority=-10\nCreditMax=600s\n"),
        "high.slice": dict(quota=50000, burst=0, conf="Priority=10\nCreditMax=600s\n"),
    }

    def test_lowest_priority_sheds_first(self):
        d = self.d
        d.wait_for(lambda: self.quota("low.slice") == REST and self.quota("high.slice") == REST, 10,
                   "both resting at their headroom")
        d.wait_ticks("low.slice", 2)
        self.demand("low.slice", 0.9)
        self.demand("high.slice", 0.9)
        d.wait_ticks("low.slice", 3)
        d.wait_ticks("high.slice", 3)
        # A moderate excess (45 % against a 40 % limit) while half a CPU is
        # used outside the governed groups: the planner withdraws a share of
        # the headroom in use proportional to the excess, lowest priority
        # first, so only low.slice gives anything back at first.
        self.sim.other_cpus = 0.5
        self.sim.host_rate = 0.45
        d.wait_for(lambda: d.metric("bwgov_shed_permille", "low.slice", 0) > 0, 20, "shedding of low.slice")
        m = d.metrics()
        self.assertGreater(m[("bwgov_shed_permille", "low.slice")], m.get(("bwgov_shed_permille", "high.slice"), 0))
        self.assertEqual(m[("bwgov_host_over_limit", None)], 1)
        d.wait_for(lambda: self.quota("low.slice") < self.quota("high.slice"), 20, "low.slice below high.slice")
        self.assertGreaterEqual(self.quota("low.slice"), 50000)
        self.assertIn("BWGOV_REASON=host-shed", d.logtext())
        # Calm again: the headroom comes back, a level at a time.
        self.sim.host_rate = 0.0
        d.wait_for(lambda: self.quota("low.slice") == REST, 60, "low.slice's headroom back")

    def test_resting_headroom_is_shed(self):
        # Over the limit because high.slice spends above its baseline while
        # half a CPU is used outside and nothing idles: the headroom low.slice
        # rests at (it uses less than its baseline) is one wake-up away from
        # being spent, so it goes too, lowest priority first, without waiting
        # for low.slice to spend; and it comes back once the host is calm.
        d = self.d
        d.wait_for(lambda: self.quota("low.slice") == REST and self.quota("high.slice") == REST, 10,
                   "both resting at their headroom")
        d.wait_ticks("low.slice", 2)
        self.demand("low.slice", 0.3)
        self.demand("high.slice", 0.9)
        d.wait_ticks("high.slice", 3)
        self.sim.other_cpus = 0.5
        self.sim.host_rate = 0.45
        d.wait_for(lambda: d.metric("bwgov_host_over_limit") == 1, 10, "the host over its limit")
        d.wait_for(lambda: self.quota("low.slice") < REST, 10, "low.slice's resting headroom withdrawn")
        self.assertGreaterEqual(self.quota("low.slice"), 50000)
        self.assertLessEqual(self.quota("low.slice"), self.quota("high.slice"))
        self.assertIn("BWGOV_REASON=host-shed", d.logtext())
        self.assertIn("withdrawing headroom from", d.logtext())
        # A larger excess, held: everything back at the baseline, and no
        # write once it is (nothing left to shed, nothing raised: the host
        # stays saturated, so the brake holds although nobody is above its
        # baseline any more).
        self.sim.host_rate = 0.9
        d.wait_for(lambda: self.quota("low.slice") == 50000 and self.quota("high.slice") == 50000, 20,
                   "both at their baselines")
        d.wait_ticks("high.slice", 3)          # metrics.prom shows the last write
        writes = d.metric("bwgov_writes_total", "high.slice")
        d.wait_ticks("high.slice", 30)
        self.assertEqual(d.metric("bwgov_writes_total", "high.slice"), writes)
        self.assertEqual(self.quota("high.slice"), 50000)
        self.assertEqual(d.metric("bwgov_host_over_limit"), 1)
        self.sim.host_rate = 0.0
        d.wait_for(lambda: self.quota("low.slice") == REST and self.quota("high.slice") == REST, 60,
                   "the headroom back after the calm")


class TestHostBrakeNeedsHarm(DaemonTest):
    # Pressure that other processes make among themselves is no reason to
    # withdraw the headroom of a group that uses less than its baseline
    # (issue 29: a real server lost all its headroom to its client's and
    # other processes' pressure); nor is the headroom in use when the CPU it
    # took was idle anyway.
    global_conf = "[Governor]\nInterval=100ms\nMetricsInterval=100ms\nHostPressureLimit=40%\n"
    units = {"app.slice": dict(quota=50000, burst=0, conf="CreditMax=600s\n")}

    def test_others_pressure_alone_does_not_shed(self):
        d = self.d
        d.wait_for(lambda: self.quota("app.slice") == REST, 10, "the resting headroom")
        self.demand("app.slice", 0.3)
        self.sim.other_cpus = 1.5
        self.sim.host_rate = 0.60
        d.wait_ticks("app.slice", 30)
        self.assertEqual(d.metric("bwgov_host_over_limit"), 0)
        self.assertEqual(d.metric("bwgov_shed_permille", "app.slice"), 0)
        self.assertEqual(self.quota("app.slice"), REST)
        self.assertNotIn("host-shed", d.logtext())
        # Above its baseline while a CPU and a half idles: nobody deprived.
        self.sim.other_cpus = 0.3
        self.sim.idle_cpus = 1.5
        self.demand("app.slice", 0.9)
        d.wait_ticks("app.slice", 30)
        self.assertEqual(d.metric("bwgov_host_over_limit"), 0)
        self.assertNotIn("host-shed", d.logtext())
        # The same excess with the host saturated: shed.
        self.sim.idle_cpus = 0.0
        d.wait_for(lambda: d.metric("bwgov_shed_permille", "app.slice", 0) > 0, 20, "shedding")
        d.wait_for(lambda: self.quota("app.slice") < REST, 20, "headroom withdrawn")
        # Idle CPU again: the brake lets go, the headroom comes back.
        self.sim.idle_cpus = 1.5
        d.wait_for(lambda: d.metric("bwgov_host_over_limit") == 0, 20, "the brake off")
        d.wait_for(lambda: self.quota("app.slice") == REST, 60, "the headroom back")


class TestHostBrakeNeedsOthers(DaemonTest):
    # PSI cannot tell whose tasks wait: a governed group with more runnable
    # threads than CPUs, alone, stalls the host by itself. Only work outside
    # the governed groups that wants the CPU can be deprived of it.
    global_conf = "[Governor]\nInterval=100ms\nMetricsInterval=100ms\nHostPressureLimit=40%\n"
    units = {"app.slice": dict(quota=50000, burst=0, conf="CreditMax=600s\n")}

    def test_pressure_without_other_work_does_not_shed(self):
        d = self.d
        d.wait_for(lambda: self.quota("app.slice") == REST, 10, "the resting headroom")
        self.demand("app.slice", 0.9)
        self.sim.host_rate = 0.60
        d.wait_ticks("app.slice", 30)
        self.assertEqual(d.metric("bwgov_host_over_limit"), 0)
        self.assertEqual(d.metric("bwgov_shed_permille", "app.slice"), 0)
        self.assertNotIn("host-shed", d.logtext())
        # The same pressure with a CPU's worth of work beside it: shed.
        self.sim.other_cpus = 1.0
        d.wait_for(lambda: d.metric("bwgov_shed_permille", "app.slice", 0) > 0, 20, "shedding")
        d.wait_for(lambda: self.quota("app.slice") < REST, 20, "headroom withdrawn")


def host_brake_conf(interval):
    """A saturated host's brake at HostPressureLimit=40%, the host sampled
    every 100 ms, the units every `interval`."""
    return (f"[Governor]\nInterval={interval}\nActiveInterval=100ms\nMetricsInterval=100ms\n"
            "HostPressureLimit=40%\n")


class HostBrakeTest(DaemonTest):
    """One group of 0.5 CPU with a long credit, brought to its resting
    headroom before each test (rested())."""
    units = {"app.slice": dict(quota=50000, burst=0, conf="CreditMax=600s\n")}

    def rested(self):
        self.d.wait_for(lambda: self.quota("app.slice") == REST, 10, "the resting headroom")
        return self.d


class TestHostBrakeClimb(HostBrakeTest):
    # A group whose use climbs between its own samples: carried forward at
    # its last rate, its usage counts short while /proc/stat's busy time has
    # grown already, and the difference, read as work outside the governed
    # groups, braked a build that filled the host beside nobody (issue 29:
    # 7 s instead of 3, with 27 of its 30 s of credit left). Read at the
    # host's sample, the use is the group's own.
    global_conf = host_brake_conf("2s")

    def test_a_climb_is_not_work_outside(self):
        d = self.rested()
        self.sim.host_rate = 0.9            # the group's own threads wait for each other
        for _ in range(2):
            time.sleep(2.5)                 # idle: its last rate is 0
            self.demand("app.slice", 1.9)
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                self.assertEqual(d.metric("bwgov_host_over_limit"), 0, d.logtext()[-1500:])
                time.sleep(0.1)
            self.demand("app.slice", 0.0)
        self.assertNotIn("host-shed", d.logtext())
        self.assertEqual(self.quota("app.slice"), REST)
        # The same climb beside a CPU's worth of work outside: shed.
        self.sim.other_cpus = 1.0
        self.demand("app.slice", 1.9)
        d.wait_for(lambda: self.quota("app.slice") < REST, 20, "headroom withdrawn")
        self.assertIn("BWGOV_REASON=host-shed", d.logtext())


class TestHostBrakeAtTheClimb(HostBrakeTest):
    # A group that climbs just after its own sample, beside work outside on
    # a saturated host: its use above the baseline is read at the host's
    # sample (every ActiveInterval=), not at its next own sample (Interval=,
    # five seconds here), so the brake takes the headroom back within a few
    # host samples. Waiting for the group's sample cost the host-protection
    # scenario's antagonist 5 % of its CPU (tests/bench, issue 29).
    global_conf = host_brake_conf("5s")

    def test_brake_within_host_samples_of_the_climb(self):
        d = self.rested()
        self.sim.other_cpus = 1.0
        self.sim.host_rate = 0.9
        time.sleep(1.0)                     # the host's averages settle: nobody above a baseline
        self.assertEqual(d.metric("bwgov_host_over_limit"), 0, d.logtext()[-1500:])
        d.wait_ticks("app.slice", 1, timeout=15)    # the climb comes just after the group's sample
        t0 = time.monotonic()
        self.demand("app.slice", 1.9)
        d.wait_for(lambda: self.quota("app.slice") < REST, 10, "headroom withdrawn")
        took = time.monotonic() - t0
        # 0.10 s here, the same beside two busy loops; 5.07 s when the
        # brake waited for the group's own next sample.
        self.assertLess(took, 2.5, d.logtext()[-1500:])
        self.assertIn("BWGOV_REASON=host-shed", d.logtext())


class TestBurstOwnership(DaemonTest):
    # CPUQuotaMax= at the baseline: no headroom, only the resting burst.
    units = {"app.slice": dict(quota=50000, burst=10000, conf="CPUQuotaMax=50%\nCreditMax=60s\n")}

    def test_quota_rewritten_while_boosted_burst_still_restored(self):
        # systemd rewrites cpu.max (not the burst) on unit start and
        # daemon-reload; stopping right after must still give back the burst.
        d = self.d
        d.wait_for(lambda: self.burst("app.slice") == 50000, 20, "the resting burst")
        self.assertEqual(self.quota("app.slice"), 50000)
        c = self.cg["app.slice"]
        with c.lock:
            write_in_place(os.path.join(c.dir, "cpu.max"), f"60000 {PERIOD}\n")
        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(), 0)
        self.assertEqual(self.cg["app.slice"].read_max(), (60000, PERIOD, 10000))


class TestExternalAndRestore(DaemonTest):
    units = {"app.slice": dict(quota=50000, burst=10000, conf="CreditMax=60s\n")}

    def boost(self):
        self.d.wait_ticks("app.slice", 2)
        self.demand("app.slice", 0.9)
        self.d.wait_for(lambda: self.quota("app.slice") > 50000, 20, "a boost")

    def test_external_change_on_a_quiet_unit(self):
        # A quiet unit's light samples read its quota file only after a
        # write to it was seen (inotify, quotawatch.c): each of these writes,
        # at different phases of the one-in-twenty full samples, is still
        # taken within two ticks, and nothing else is read as one.
        d = self.d
        d.wait_for(lambda: self.quota("app.slice") == REST, 10, "the resting headroom")
        d.wait_ticks("app.slice", 25)
        self.assertEqual(d.metric("bwgov_external_changes_total", "app.slice"), 0)
        c = self.cg["app.slice"]
        for i, q in enumerate((60000, 75000, 90000)):  # each above the resting burst
            d.wait_ticks("app.slice", 7)
            with c.lock:
                write_in_place(os.path.join(c.dir, "cpu.max"), f"{q} {PERIOD}\n")
            start = d.metric("bwgov_unit_ticks_total", "app.slice")
            d.wait_for(lambda: d.metric("bwgov_baseline_quota_usec", "app.slice") == q, 10, f"re-base on {q}")
            self.assertLessEqual(d.metric("bwgov_unit_ticks_total", "app.slice") - start, 2)
            d.wait_for(lambda: self.quota("app.slice") == resting(q), 10, f"headroom on {q}")
            self.assertEqual(d.metric("bwgov_external_changes_total", "app.slice"), i + 1)
        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(), 0)
        self.assertEqual(self.cg["app.slice"].read_max(), (90000, PERIOD, 10000))

    def test_external_change_becomes_the_baseline(self):
        # Someone else's quota is the new contract: never written back; the
        # headroom is then built on it (CPUQuotaMax= defaults to four times it).
        d = self.d
        d.wait_for(lambda: self.quota("app.slice") == REST, 10, "the resting headroom")
        d.wait_ticks("app.slice", 2)
        c = self.cg["app.slice"]
        with c.lock:
            write_in_place(os.path.join(c.dir, "cpu.max"), f"70000 {PERIOD}\n")
        start = d.metric("bwgov_unit_ticks_total", "app.slice")
        d.wait_for(lambda: d.metric("bwgov_baseline_quota_usec", "app.slice") == 70000, 10, "re-base")
        self.assertLessEqual(d.metric("bwgov_unit_ticks_total", "app.slice") - start, 2)
        self.assertGreaterEqual(d.metric("bwgov_external_changes_total", "app.slice"), 1)
        d.wait_for(lambda: self.quota("app.slice") == resting(70000), 10, "headroom on the new baseline")
        d.wait_ticks("app.slice", 10)
        self.assertEqual(self.quota("app.slice"), resting(70000))
        self.assertEqual(d.metric("bwgov_external_changes_total", "app.slice"), 1)
        self.assertIn("BWGOV_REASON=external-change", d.logtext())
        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(), 0)
        self.assertEqual(self.cg["app.slice"].read_max(), (70000, PERIOD, 10000))

    def test_sigterm_restores_exactly(self):
        self.boost()
        self.d.signal(signal.SIGTERM)
        self.assertEqual(self.d.wait(), 0)
        self.assertEqual(self.cg["app.slice"].read_max(), (50000, PERIOD, 10000))

    def test_sigkill_while_boosted_keeps_baseline(self):
        self.boost()
        boosted = self.quota("app.slice")
        self.d.signal(signal.SIGKILL)
        self.d.wait()
        self.assertEqual(self.quota("app.slice"), boosted)     # nobody restored it
        self.demand("app.slice", 0.0)
        os.unlink(os.path.join(self.base, "run", "metrics.prom"))   # the dead daemon's
        self.d.start()
        self.d.wait_for(lambda: self.d.metric("bwgov_baseline_quota_usec", "app.slice") is not None, 10, "adoption")
        self.assertEqual(self.d.metric("bwgov_baseline_quota_usec", "app.slice"), 50000)
        self.assertEqual(self.d.metric("bwgov_external_changes_total", "app.slice"), 0)
        self.d.signal(signal.SIGTERM)
        self.assertEqual(self.d.wait(), 0)
        self.assertEqual(self.cg["app.slice"].read_max(), (50000, PERIOD, 10000))

    def test_restore_without_state_directory(self):
        # Issue 17, finding 4: the state directory removed while boosted;
        # putting the baseline back needs no write-ahead record.
        self.boost()
        shutil.rmtree(os.path.join(self.base, "state"))
        self.d.signal(signal.SIGTERM)
        self.d.wait()
        self.assertEqual(self.cg["app.slice"].read_max(), (50000, PERIOD, 10000))
        self.assertIn("Failed to save", self.d.logtext())      # said, and did not stop the restore


class TestStaleState(unittest.TestCase):
    """Issue 17, finding 5: a state.json whose "written" equals what the
    kernel holds keeps its baseline only when it was saved in this boot; one
    from an earlier boot (or whose "written" bwgov could not have written)
    makes the kernel's value the baseline, and a stop leaves it there."""

    def run_with(self, boot_id, written_quota):
        base = tempfile.mkdtemp(prefix="bwgov-test-daemon-")
        try:
            for d in ("cg", "conf", "state", "run"):
                os.makedirs(os.path.join(base, d))
            with open(os.path.join(base, "cg", "cgroup.controllers"), "w") as f:
                f.write("cpuset cpu io memory pids\n")
            with open(os.path.join(base, "conf", "bwgov.conf"), "w") as f:
                f.write("[Governor]\nInterval=100ms\nMetricsInterval=100ms\n")
            os.makedirs(os.path.join(base, "conf", "app.slice.d"))
            with open(os.path.join(base, "conf", "app.slice.d", "10.conf"), "w") as f:
                f.write("[Bandwidth]\nCPUQuotaMax=100%\n")
            cg = SimCgroup(os.path.join(base, "cg"), "app.slice", written_quota, 0)
            bw = lambda q, b=0: {"quota_usec": q, "period_usec": PERIOD, "burst_usec": b, "has_burst": True}
            state = {"schema_version": 1, "units": {"app.slice": {
                "cgroup": "app.slice", "baseline": bw(50000), "written": bw(written_quota),
                "credit_usec": 0, "debt_usec": 0, "paused": False}}}
            if boot_id:
                state["boot_id"] = boot_id
            with open(os.path.join(base, "state", "state.json"), "w") as f:
                json.dump(state, f)
            for n in ("host-pressure", "host-stat"):
                with open(os.path.join(base, n), "w") as f:
                    f.write("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" if n == "host-pressure"
                            else "cpu  0 0 0 100000 0 0 0 0 0 0\n")
            d = Daemon(base)
            d.start()
            d.wait_for(lambda: d.metric("bwgov_baseline_quota_usec", "app.slice") is not None, 10, "adoption")
            baseline = d.metric("bwgov_baseline_quota_usec", "app.slice")
            d.signal(signal.SIGTERM)
            self.assertEqual(d.wait(), 0)
            return baseline, cg.read_max()[0]
        finally:
            shutil.rmtree(base, ignore_errors=True)

    def test_boot(self):
        with open("/proc/sys/kernel/random/boot_id") as f:
            now = f.read().strip()
        # This boot's record: the kernel's 80000 is bwgov's; the baseline stands.
        self.assertEqual(self.run_with(now, 80000), (50000, 50000))
        # An earlier boot's: 80000 is the contract now, left in place.
        self.assertEqual(self.run_with("00000000-0000-0000-0000-000000000000", 80000), (80000, 80000))
        # This boot, but a "written" below the baseline: not bwgov's.
        self.assertEqual(self.run_with(now, 40000), (40000, 40000))


class TestStateLock(DaemonTest):
    """Issue 17, finding 1: a second bwgovd on the same state directory
    refuses to start, naming the directory and the first one's pid; the
    first keeps governing."""

    def test_second_daemon_refuses(self):
        self.d.wait_for(lambda: self.quota("app.slice") == REST, 10, "the resting headroom")
        second = Daemon(self.base)
        second.log_path = os.path.join(self.base, "second.log")
        second.start()
        self.assertNotEqual(second.wait(10), 0)
        text = second.logtext()
        self.assertIn(f"State directory {os.path.join(self.base, 'state')} is in use by another bwgovd, "
                      f"pid {self.d.proc.pid}: refusing to start", text)
        self.assertEqual(self.quota("app.slice"), REST)       # nothing written by the second
        self.d.wait_ticks("app.slice", 3)
        self.d.signal(signal.SIGTERM)
        self.assertEqual(self.d.wait(), 0)
        self.assertEqual(self.cg["app.slice"].read_max(), (50000, PERIOD, 0))
        # The lock goes with the daemon: the next one starts.
        third = Daemon(self.base)
        third.log_path = os.path.join(self.base, "third.log")
        third.start()
        third.wait_for(lambda: "Received" in third.logtext() or "governing cgroup" in third.logtext(), 10,
                       "the third daemon governing")
        third.signal(signal.SIGTERM)
        self.assertEqual(third.wait(), 0)


class TestBatchedSaves(DaemonTest):
    """Adoption and restore of many units cost a few state saves, not one
    (a whole-file rewrite and fsync) per unit: with a thousand units that
    made adoption O(N^2) and a stop outlast systemd's timeout."""
    units = {f"u{i:02d}.slice": dict(quota=50000, burst=0, conf="CreditMax=60s\n") for i in range(40)}

    def test_adopt_and_restore_in_few_saves(self):
        d = self.d
        d.wait_for(lambda: all(d.metric("bwgov_baseline_quota_usec", u) is not None for u in self.units),
                   20, "adoption of every unit")
        d.wait_for(lambda: d.metric("bwgov_state_saves_total") is not None, 10, "metrics")
        # A few, not one per unit (40): the bound of 5 held on quiet hosts;
        # 6 were counted with the host at a load of 12 on 2 CPUs (adoption
        # spread over more ticks).
        self.assertLessEqual(d.metric("bwgov_state_saves_total"), 10, "saves after adopting 40 units")
        # The resting headroom went in with the adoption, in the same few saves.
        d.wait_for(lambda: all(self.quota(u) > 50000 for u in self.units), 30, "every unit at its headroom")
        for u in self.units:
            self.demand(u, 0.9)
        # Quiet for a while, so that no deferred save is pending when the
        # stop comes (a stop used to save once per restored unit then).
        quiet = {"saves": None, "since": time.monotonic()}

        def settled():
            n = d.metric("bwgov_state_saves_total")
            if n != quiet["saves"]:
                quiet.update(saves=n, since=time.monotonic())
            return time.monotonic() - quiet["since"] >= 2.0
        d.wait_for(settled, 30, "no state saves for 2 s")
        before = d.metric("bwgov_state_saves_total")
        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(), 0)
        for u in self.units:
            self.assertEqual(self.cg[u].read_max()[0], 50000, f"{u} restored")
        # The last metrics file is written at exit: intents once, outcome once.
        self.assertLessEqual(d.metric("bwgov_state_saves_total") - before, 3, "saves to restore 40 units")
        with open(os.path.join(self.base, "state", "state.json")) as f:
            state = json.load(f)
        self.assertFalse([n for n, u in state["units"].items() if u["pending"]], "no intent left pending")


class TestConfiguredBaseline(DaemonTest):
    units = {"box": dict(quota=50000, burst=0, conf="CPUQuota=20%\nCPUBurstMax=0\nMode=elastic\n")}

    def test_cpuquota_is_put_in_place_and_burst_left_alone(self):
        d = self.d
        # CPUQuota= is the contract; the headroom (4 x by default) rests on it.
        d.wait_for(lambda: d.metric("bwgov_baseline_quota_usec", "box") == 20000, 10, "CPUQuota= adopted")
        d.wait_for(lambda: self.quota("box") == resting(20000), 10, "the resting headroom over CPUQuota=")
        d.wait_ticks("box", 5)
        self.assertEqual(d.metric("bwgov_external_changes_total", "box"), 0)
        self.assertIn("BWGOV_REASON=configured-baseline", d.logtext())
        self.demand("box", 0.5)                 # spending: quota may move, the burst must not
        d.wait_ticks("box", 10)
        self.assertEqual(self.burst("box"), 0)
        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(), 0)
        self.assertEqual(self.cg["box"].read_max(), (20000, PERIOD, 0))


class TestReload(DaemonTest):
    units = {"app.slice": dict(quota=50000, burst=0, conf="Mode=observe\n")}

    def test_broken_dropin_keeps_old_config(self):
        d = self.d
        d.wait_ticks("app.slice", 2)
        bad = os.path.join(self.base, "conf", "app.slice.d", "20-broken.conf")
        with open(bad, "w") as f:
            f.write("[Bandwidth]\nMode=elastic\nCPUQuotaMax=lots\n")
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: d.metric("bwgov_reload_failures_total") == 1, 10, "reload failure")
        self.assertRegex(d.logtext(), re.escape(bad) + r":3\b")
        # Still observing: the elastic Mode= in the broken file did not apply.
        self.demand("app.slice", 0.9)
        d.wait_ticks("app.slice", 10)
        self.assertEqual(self.quota("app.slice"), 50000)
        self.assertEqual(d.metric("bwgov_writes_total", "app.slice"), 0)
        # A good reload applies.
        os.unlink(bad)
        with open(os.path.join(self.base, "conf", "app.slice.d", "20-good.conf"), "w") as f:
            f.write("[Bandwidth]\nMode=elastic\n")
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: d.metric("bwgov_reloads_total") == 2, 10, "second reload")
        d.wait_for(lambda: self.quota("app.slice") > 50000, 20, "elastic after reload")


if __name__ == "__main__":
    unittest.main(verbosity=2)
