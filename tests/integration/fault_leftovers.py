#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fault matrix's "nothing left behind" rows (tests/FAULTS.md, issue 30):
the levers of latency protection and contention (freezer, cpu.idle, the
weight, the cpuset) and raised quotas must not outlive bwgovd on any exit
path, and no cgroup may have two governors, whatever the configuration.
Each test is one finding of issue 30, made to happen on this host's real
cgroups (root), the fault shim (tests/fault) preloaded where the kernel
cannot be made to fail on demand:

  1  a thaw that fails is retried with back-off; "frozen" counts it; a stop
     that cannot thaw exits non-zero and `bwgovd --restore` thaws after it;
  2  SIGKILL during a gang turn, then a start with a broken configuration,
     or without the unit: nothing stays frozen;
  3  SIGKILL with a best-effort unit in cpu.idle, restarted without it:
     cpu.idle back to 0, its weight back to its own;
  4  lever records in state.json that bwgovd could not have made, or from
     an earlier boot: nothing frozen or idled at start;
  5  a Subgroup= and a Cgroup= on one cgroup, a prefix unit and an explicit
     one, two daemons: the second claim refused, the quota within its
     contract, the baseline back after the stop;
  6  a reload that drops a gang-frozen unit with a raised quota after
     pause/resume: no crash, thawed, the baseline back;
  7  an operator's write while bwgovd was down, or while it held the
     weight, is kept; the weight from before cpu.idle comes back.

Skips (77) without root or a cgroup CPU controller.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_governor import BWGOVCTL, BWGOVD, Cgroup, mounts  # noqa: E402
from live_governor import read_file as rd, write_file as wr  # noqa: E402
from live_common import remove_cgroups  # noqa: E402
from statefile import saved_units  # noqa: E402

BUILD_ROOT = os.environ.get("BWGOV_BUILD_ROOT", "build")
SHIM = os.environ.get("BWGOV_FAULT_INJECT") or os.path.join(BUILD_ROOT, "tests/fault/bwgov-fault-inject.so")
PERIOD = 100000
SANITIZER = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: \w+Sanitizer")
TAG = f"bwgov-test-lo{os.getpid()}"
# The contract of the one-governor tests: the quota rests at twice its 30 %.
CAP = "CreditMax=5s\nCPUQuotaMax=60%\n"


def wait_for(pred, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def slurp(path):
    """A file's whole text (closed at once; undecodable bytes replaced)."""
    with open(path, errors="replace") as f:
        return f.read()


class Group:
    """A real cgroup (the bandwidth one and its cgroup2 twin) of this test."""

    def __init__(self, name, quota=None):
        self.cg = Cgroup(name)
        self.name = name
        self.layout = self.cg.layout
        self.procs = []
        if quota:
            self.cg.set(quota, PERIOD, 0)

    @property
    def freeze_file(self):
        return os.path.join(self.cg.v2, "cgroup.freeze")

    def frozen(self):
        return rd(self.freeze_file) == "1"

    def idle(self):
        return rd(os.path.join(self.cg.bw, "cpu.idle"))

    @property
    def weight_file(self):
        return os.path.join(self.cg.bw, "cpu.weight" if self.layout == "v2" else "cpu.shares")

    def weight(self):
        return rd(self.weight_file)

    def quota(self):
        return self.cg.get()[0]

    def spin(self, n):
        for _ in range(n):
            self.procs.append(self.cg.spawn(["sh", "-c", "while :; do :; done"], subprocess.DEVNULL))

    def waker(self):
        self.procs.append(self.cg.spawn(["sh", "-c", "while :; do sleep 0.001; done"], subprocess.DEVNULL))

    def stop_load(self):
        try:
            if os.path.exists(self.freeze_file) and self.frozen():
                wr(self.freeze_file, 0)
        except OSError:
            pass
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        self.procs.clear()

    def cleanup(self):
        self.stop_load()
        try:
            wr(os.path.join(self.cg.bw, "cpu.idle"), "0")
        except OSError:
            pass
        dirs = remove_cgroups((self.cg.bw, self.cg.v2))
        if dirs:
            print(f"warning: cannot remove {dirs}", file=sys.stderr)


class LeftoverTest(unittest.TestCase):
    """A bwgovd on real cgroups of this test, configured through drop-ins
    in a directory of its own; the shim preloaded when asked."""

    shim = False

    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("real cgroups need root")
        if not os.path.exists(BWGOVD):
            self.skipTest(f"bwgovd not built at {BWGOVD}")
        self.layout, bw_root, v2_root = mounts()
        if not bw_root or not v2_root:
            self.skipTest("no cgroup CPU controller, or no cgroup2 tree for the freezer")
        if self.shim and not os.path.exists(SHIM):
            self.skipTest(f"fault shim not built at {SHIM}")
        self.base = tempfile.mkdtemp(prefix="bwgov-test-leftovers-")
        self.groups = []
        self.procs = []
        self.logs = []
        self.fault_gen = 0
        self.ctl_path = os.path.join(self.base, "fault.ctl")
        self.fault_log = os.path.join(self.base, "fault.log")
        for d in ("conf", "state", "run"):
            os.makedirs(os.path.join(self.base, d))
        self.global_conf("")

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for g in reversed(self.groups):
            g.cleanup()
        for log in self.logs:
            text = slurp(log)
            if SANITIZER.search(text):
                print(text[-4000:], file=sys.stderr)
        shutil.rmtree(self.base, ignore_errors=True)

    # ---- the world ---------------------------------------------------------

    def group(self, suffix, quota=None):
        g = Group(f"{TAG}-{suffix}", quota)
        self.groups.append(g)
        return g

    def global_conf(self, text, d=None):
        wr(os.path.join(d or self.base, "conf", "bwgov.conf"), "[Governor]\nHostPressureLimit=0%\nMetricsInterval=1s\n"
           + text)

    def unit(self, name, body, d=None):
        p = os.path.join(d or self.base, "conf", name + ".d")
        os.makedirs(p, exist_ok=True)
        wr(os.path.join(p, "10-test.conf"), "[Bandwidth]\n" + body)
        return os.path.join(p, "10-test.conf")

    def drop(self, name, d=None):
        shutil.rmtree(os.path.join(d or self.base, "conf", name + ".d"), ignore_errors=True)

    def fault(self, rules):
        self.fault_gen += 1
        wr(self.ctl_path, rules)
        t = time.time_ns() + self.fault_gen * 1000
        os.utime(self.ctl_path, ns=(t, t))

    def injected(self):
        try:
            return len(slurp(self.fault_log).splitlines())
        except FileNotFoundError:
            return 0

    # ---- the daemon --------------------------------------------------------

    def start(self, *extra, d=None, log="bwgovd.log"):
        d = d or self.base
        path = os.path.join(d, log)
        self.logs.append(path)
        env = dict(os.environ)
        if self.shim:
            asan = env.get("ASAN_OPTIONS", "")
            env.update(LD_PRELOAD=SHIM, BWGOV_FAULT_CTL=self.ctl_path, BWGOV_FAULT_LOG=self.fault_log,
                       ASAN_OPTIONS=(asan + ":" if asan else "") + "verify_asan_link_order=0")
        with open(path, "a") as out:
            p = subprocess.Popen([BWGOVD, "--config-dir", os.path.join(d, "conf"), "--state-dir",
                                  os.path.join(d, "state"), "--runtime-dir", os.path.join(d, "run"),
                                  "--log-level", "debug", *extra], stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                 env=env)
        self.procs.append(p)
        return p

    def restore(self, d=None):
        """bwgovd --restore, as ExecStopPost= runs it: its exit status."""
        p = self.start("--restore", d=d, log="restore.log")
        return p.wait(30)

    def stop(self, p, sig=signal.SIGTERM, timeout=30):
        p.send_signal(sig)
        return p.wait(timeout)

    def log(self, name="bwgovd.log", d=None):
        try:
            return slurp(os.path.join(d or self.base, name))
        except FileNotFoundError:
            return ""

    def ctl(self, *args, d=None):
        return subprocess.run([BWGOVCTL, *args, "--socket", os.path.join(d or self.base, "run", "io.bwgov.Governor")],
                              capture_output=True, text=True, timeout=30)

    def saved(self, d=None):
        try:
            return saved_units(os.path.join(d or self.base, "state"))
        except (OSError, ValueError):
            return {}

    def alive(self, p):
        self.assertIsNone(p.poll(), "bwgovd exited:\n" + self.log()[-3000:])

    def no_sanitizer_report(self):
        for log in self.logs:
            self.assertIsNone(SANITIZER.search(slurp(log)), f"a sanitizer report in {log}")

    # ---- scenarios shared by several findings ------------------------------

    def gang(self, quota=None, spinners=2):
        """Two busy Class=throughput groups under Contention=gang; returns
        them once bwgovd has frozen one."""
        a, b = self.group("a", quota), self.group("b", quota)
        for g in (a, b):
            wr(g.weight_file, 1000 if g.layout == "v2" else 10240)
            g.spin(spinners)
        self.global_conf("Contention=gang\nContentionInterval=300ms\n")
        for g in (a, b):
            self.unit(g.name, f"Cgroup={g.name}\nClass=throughput\n")
        return a, b

    def protection(self, be_shares=None):
        """lat (LatencyTarget=, a waking thread in a child) and be
        (Class=best-effort, hogs on every CPU)."""
        lat, be = self.group("lat"), self.group("be")
        work = Group(f"{lat.name}/work")
        self.groups.append(work)
        if be_shares:
            wr(be.weight_file, be_shares)
        if not os.path.exists(os.path.join(be.cg.bw, "cpu.idle")):
            self.skipTest("this kernel has no cpu.idle")
        work.waker()
        be.spin(2 * (os.cpu_count() or 1))
        self.unit("lat", f"Cgroup={lat.name}\nLatencyTarget=300us\n")
        self.unit("be", f"Cgroup={be.name}\nClass=best-effort\n")
        return lat, be

    def rung(self, unit):
        p = self.ctl("explain", unit, "--json")
        return json.loads(p.stdout)["protection"]["level"] if p.returncode == 0 else None


# ---- finding 1: a thaw that fails ------------------------------------------------

class ThawFails(LeftoverTest):
    shim = True

    def test_a_failed_thaw_is_retried_and_counted(self):
        a, b = self.gang()
        p = self.start()
        self.assertTrue(wait_for(lambda: a.frozen() or b.frozen(), 15), "gang: a group frozen")
        self.fault("write cgroup.freeze EACCES data=0\n")       # every thaw fails from now on
        frozen = a if a.frozen() else b
        unit = frozen.name
        # Paused, it leaves the gang: its thaw fails, and contention is over.
        self.assertEqual(self.ctl("pause", unit).returncode, 0)
        self.assertTrue(wait_for(lambda: self.injected() >= 1, 5), "a thaw met EACCES")
        self.assertTrue(wait_for(lambda: "is over" in self.log(), 5), self.log()[-2000:])
        over = [ln for ln in self.log().splitlines() if "Contention among" in ln and "is over" in ln][-1]
        self.assertTrue(frozen.frozen(), "the group is still frozen (the kernel refused the thaw)")
        self.assertNotIn(" 0 frozen", over, f"bwgovd says nothing is frozen while {unit} is: {over}")
        self.assertIn("freeze", self.saved().get(unit, {}).get("levers", {}), "the record stays while frozen")
        time.sleep(1.5)
        self.assertGreaterEqual(self.injected(), 3, "the thaw is tried again (back-off)")
        self.fault("")
        self.assertTrue(wait_for(lambda: not frozen.frozen(), 10), "thawed once the kernel takes it")
        self.assertTrue(wait_for(lambda: "freeze" not in self.saved().get(unit, {}).get("levers", {}), 5),
                        "the record forgotten once thawed")
        self.ctl("resume", unit)
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.assertFalse(a.frozen() or b.frozen(), "nothing frozen after the stop")
        self.no_sanitizer_report()

    def test_a_stop_that_cannot_thaw_fails_and_restore_thaws(self):
        a, b = self.gang()
        p = self.start()
        self.assertTrue(wait_for(lambda: a.frozen() or b.frozen(), 15), "gang: a group frozen")
        self.fault("write cgroup.freeze EACCES data=0\n")
        frozen = a if a.frozen() else b
        # Frozen at the stop (the next slot's thaw fails too): the stop
        # cannot put it back.
        self.assertTrue(wait_for(lambda: self.injected() >= 1 or frozen.frozen(), 5))
        rc = self.stop(p)
        still = [g.name for g in (a, b) if g.frozen()]
        self.assertTrue(still, "the kernel refused every thaw: a group stays frozen")
        self.assertNotEqual(rc, 0, "a stop that leaves a group frozen says so in its exit status")
        self.assertIn("could not put back", self.log())
        for n in still:
            self.assertIn("freeze", self.saved().get(n, {}).get("levers", {}), f"{n}'s record kept for the next")
        self.fault("")
        self.assertEqual(self.restore(), 0, self.log("restore.log")[-2000:])
        self.assertFalse(a.frozen() or b.frozen(), "bwgovd --restore thawed it")
        self.assertFalse(any("levers" in v for v in self.saved().values()), "no lever record left")
        self.no_sanitizer_report()


# ---- finding 2: SIGKILL during a gang turn, then a start ------------------------

class KilledDuringGang(LeftoverTest):

    def killed_frozen(self):
        a, b = self.gang()
        p = self.start()
        self.assertTrue(wait_for(lambda: a.frozen() or b.frozen(), 15), "gang: a group frozen")
        self.stop(p, signal.SIGKILL)
        self.assertTrue(a.frozen() or b.frozen(), "SIGKILL left a group frozen")
        return a, b

    def test_a_broken_configuration_thaws_before_refusing_to_start(self):
        a, b = self.killed_frozen()
        bad = self.unit(a.name, f"Cgroup={a.name}\nClass=throughput\nCreditMax=soon\n")
        p = self.start()
        self.assertNotEqual(p.wait(30), 0, "a broken configuration: bwgovd does not start")
        self.assertIn(f"{bad}:4", self.log(), "the error names the file and line")
        self.assertFalse(a.frozen() or b.frozen(), "nothing left frozen behind a daemon that will not start")
        self.no_sanitizer_report()

    def test_a_unit_no_longer_configured_is_thawed_at_start(self):
        a, b = self.killed_frozen()
        frozen = a if a.frozen() else b
        self.global_conf("")                    # Contention=share, the default
        self.drop(frozen.name)
        p = self.start()
        self.assertTrue(wait_for(lambda: not frozen.frozen(), 5), "thawed at start, though no longer configured")
        self.alive(p)
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.assertFalse(a.frozen() or b.frozen())
        self.no_sanitizer_report()


# ---- finding 3: SIGKILL with a unit in cpu.idle, restarted without it ------------

class KilledWhileIdle(LeftoverTest):

    def test_idle_and_weight_back_at_start_without_the_unit(self):
        lat, be = self.protection(be_shares="500" if self.layout != "v2" else "50")
        own = be.weight()
        p = self.start()
        self.assertTrue(wait_for(lambda: be.idle() == "1", 40), "be put in cpu.idle: " + self.log()[-2000:])
        self.stop(p, signal.SIGKILL)
        self.assertEqual(be.idle(), "1", "SIGKILL left cpu.idle")
        be.stop_load()
        self.drop("be")
        p = self.start()
        self.assertTrue(wait_for(lambda: be.idle() == "0", 5), "out of cpu.idle at start, though no longer "
                        "configured")
        self.assertEqual(be.weight(), own, "its own weight back (the kernel resets it when cpu.idle goes to 0)")
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.no_sanitizer_report()


# ---- finding 4: lever records bwgovd could not have made -----------------------

class ImplausibleRecords(LeftoverTest):

    def state(self, g, levers, boot_id=None):
        boot = boot_id or slurp("/proc/sys/kernel/random/boot_id").strip()
        doc = {"schema_version": 1, "boot_id": boot, "generation": 1, "units": {
            "plain": {"cgroup": g.name, "credit_usec": 0, "paused": False, "written": None, "pending": None,
                      "baseline": {"quota_usec": 50000, "period_usec": PERIOD, "burst_usec": 0, "has_burst": True},
                      "levers": levers}}}
        wr(os.path.join(self.base, "state", "state.json"), json.dumps(doc))

    def check_untouched(self, g):
        self.unit("plain", f"Cgroup={g.name}\n")
        p = self.start()
        self.assertTrue(wait_for(lambda: "plain: governing cgroup" in self.log(), 10), self.log()[-2000:])
        time.sleep(1)
        self.assertFalse(g.frozen(), "a plain unit frozen at start from a state file's record")
        if os.path.exists(os.path.join(g.cg.bw, "cpu.idle")):
            self.assertEqual(g.idle(), "0", "a plain unit put in cpu.idle at start from a state file's record")
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.no_sanitizer_report()

    def test_originals_bwgovd_never_saves(self):
        g = self.group("plain", 50000)
        self.state(g, {"freeze": "1", "idle": "1"})
        self.check_untouched(g)

    def test_records_bwgovd_never_makes(self):
        g = self.group("plain", 50000)
        self.state(g, {"freeze": {"original": "1", "written": "0"}, "idle": {"original": "1", "written": "0"}})
        self.check_untouched(g)

    def test_records_of_an_earlier_boot(self):
        g = self.group("plain", 50000)
        wr(g.freeze_file, 1)                    # someone froze it: that is not bwgovd's
        self.state(g, {"freeze": "0"}, boot_id="0" * 8 + "-0000-0000-0000-" + "0" * 12)
        self.unit("plain", f"Cgroup={g.name}\n")
        p = self.start()
        self.assertTrue(wait_for(lambda: "plain: governing cgroup" in self.log(), 10), self.log()[-2000:])
        time.sleep(1)
        self.assertTrue(g.frozen(), "a record of an earlier boot thawed someone else's frozen group")
        wr(g.freeze_file, 0)
        self.assertEqual(self.stop(p), 0)


# ---- finding 5: one governor per cgroup --------------------------------------------

class OneGovernor(LeftoverTest):
    """The second claim on a cgroup is refused with the file and line of
    both; the quota never leaves the first one's contract (CPUQuotaMax= of
    twice the baseline, 60 % of a CPU over 30 %; two governors ratchet it
    up); the stop puts the baseline back."""

    def watch(self, g, seconds, limit):
        top = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            q = g.quota()
            top = max(top, int(q) if q != "max" else 1 << 40)
            time.sleep(0.05)
        self.assertLessEqual(top, limit, f"the quota went to {top}, over the contract's {limit}")
        return top

    def test_subgroup_and_cgroup_name_one_cgroup(self):
        scope = self.group("sub.scope")
        sub = self.group("sub.scope/container", 30000)
        first = self.unit(scope.name, f"Subgroup=container\n{CAP}")     # found by its name
        second = self.unit("other", f"Cgroup={sub.name}\n{CAP}")
        p = self.start()
        self.watch(sub, 3, 60000)
        self.assertTrue(wait_for(lambda: "not governing it twice" in self.log(), 10), self.log()[-3000:])
        err = [ln for ln in self.log().splitlines() if "not governing it twice" in ln][0]
        self.assertIn(os.path.dirname(first), err)
        self.assertIn(second + ":2", err)
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.assertEqual(sub.quota(), "30000", "the baseline back after the stop")

    def test_subgroup_and_cgroup_in_the_configuration(self):
        # Both named in the configuration: a reload that adds the second
        # is refused whole (the first keeps it), and so is a start.
        scope = self.group("sub2")
        sub = self.group("sub2/container", 30000)
        self.unit("one", f"Cgroup={scope.name}\nSubgroup=container\n{CAP}")
        p = self.start()
        self.assertTrue(wait_for(lambda: sub.quota() == "60000", 10), "the first governs: " + self.log()[-2000:])
        second = self.unit("two", f"Cgroup={sub.name}\n{CAP}")
        r = self.ctl("reload")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(second + ":2", r.stdout + r.stderr)
        self.watch(sub, 2, 60000)
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.assertEqual(sub.quota(), "30000", "the baseline back after the stop")
        p = self.start()
        try:
            rc = p.wait(30)
        except subprocess.TimeoutExpired:
            rc = None
        self.assertIsNotNone(rc, "a start with both is refused")
        self.assertNotEqual(rc, 0)
        self.assertIn(second + ":2", self.log())
        self.assertEqual(sub.quota(), "30000")

    def test_prefix_unit_and_explicit_unit(self):
        g = self.group("pfx-abc.scope", 30000)
        self.unit(f"{TAG}-pfx-.scope", CAP)
        explicit = self.unit("explicit", f"Cgroup={g.name}\n{CAP}")
        p = self.start()
        self.watch(g, 3, 60000)
        self.assertTrue(wait_for(lambda: "not governing it twice" in self.log(), 10), self.log()[-3000:])
        self.assertIn(explicit + ":2", self.log())
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.assertEqual(g.quota(), "30000")

    def test_two_daemons(self):
        g = self.group("two", 30000)
        other = os.path.join(self.base, "other")
        for d in ("conf", "state", "run"):
            os.makedirs(os.path.join(other, d))
        for d in (self.base, other):
            self.global_conf("", d=d)
            self.unit("two", f"Cgroup={g.name}\n{CAP}", d=d)
        p = self.start()
        self.assertTrue(wait_for(lambda: g.quota() == "60000", 10), "the first governs: " + self.log()[-2000:])
        q = self.start(d=other)
        self.watch(g, 3, 60000)
        self.assertTrue(wait_for(lambda: "governed by another bwgovd" in self.log(d=other), 10),
                        self.log(d=other)[-3000:])
        self.assertIn(f"pid {p.pid}", self.log(d=other), "the second names the daemon that holds it")
        self.assertEqual(self.stop(q), 0, self.log(d=other)[-2000:])
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.assertEqual(g.quota(), "30000")


# ---- finding 6: a reload drops a gang-frozen unit --------------------------------

class ReloadDropsFrozen(LeftoverTest):

    def test_reload_after_pause_and_resume(self):
        a, b = self.gang(quota=90000)
        keep = self.group("0", 50000)       # a unit kept, sorting before the one dropped
        self.unit("a-kept", f"Cgroup={keep.name}\n")
        p = self.start()
        self.assertTrue(wait_for(lambda: a.frozen() or b.frozen(), 15), "gang: a group frozen")
        frozen = a if a.frozen() else b
        self.assertEqual(self.ctl("pause", frozen.name).returncode, 0)
        self.assertEqual(self.ctl("resume", frozen.name).returncode, 0)
        self.assertTrue(wait_for(lambda: frozen.frozen() and int(frozen.quota()) > 90000, 15),
                        f"frozen again with its headroom ({frozen.quota()})")
        self.drop(frozen.name)
        p.send_signal(signal.SIGHUP)
        self.assertTrue(wait_for(lambda: "Configuration reloaded" in self.log(), 10), self.log()[-3000:])
        self.alive(p)
        self.assertTrue(wait_for(lambda: not frozen.frozen() and frozen.quota() == "90000", 5),
                        f"the dropped unit thawed and at its baseline ({frozen.quota()})")
        self.assertEqual(self.stop(p), 0, self.log()[-2000:])
        self.no_sanitizer_report()


# ---- finding 7: an operator's values --------------------------------------------

class OperatorValues(LeftoverTest):

    def climb_to(self, unit, level, p):
        ok = wait_for(lambda: self.rung(unit) == level or (level == "weight" and self.rung(unit) in
                                                            ("weight", "weight-high", "slice", "idle")), 40, 0.2)
        self.assertTrue(ok, f"{unit} at {level}: " + self.log()[-2000:])

    def test_a_write_while_bwgovd_was_down_is_kept(self):
        lat, be = self.protection()
        own = lat.weight()
        p = self.start()
        self.climb_to("lat", "weight", p)
        self.assertNotEqual(lat.weight(), own)
        self.stop(p, signal.SIGKILL)
        mine = "300" if self.layout == "v2" else "3000"
        wr(lat.weight_file, mine)
        be.stop_load()
        # Restarted with lat a plain unit: nothing would raise its weight
        # again, whatever else runs on this host.
        self.unit("lat", f"Cgroup={lat.name}\n")
        n = self.log().count("lat: governing cgroup")
        p = self.start()
        self.assertTrue(wait_for(lambda: self.log().count("lat: governing cgroup") > n, 10), self.log()[-2000:])
        time.sleep(1)
        self.assertEqual(lat.weight(), mine, "the operator's weight, written while bwgovd was down, kept")
        self.assertEqual(self.stop(p), 0)
        self.assertEqual(lat.weight(), mine)

    def test_a_write_while_held_is_kept(self):
        lat, be = self.protection()
        p = self.start()
        self.climb_to("lat", "weight", p)
        mine = "300" if self.layout == "v2" else "3000"
        wr(lat.weight_file, mine)
        time.sleep(2.5)
        self.assertEqual(lat.weight(), mine, "the operator's weight, written while bwgovd held the lever, kept")
        self.assertIn("someone else", self.log())
        self.assertEqual(self.stop(p), 0)
        self.assertEqual(lat.weight(), mine)

    def test_the_original_written_back_is_set_again(self):
        """systemd writes a slice's CPUWeight= again (its weight, cpu.idle 0)
        each time a service in it starts or stops: the value bwgovd found,
        back, is no choice against the lever, which is set again (27-protect
        in the VM lost both levers to it)."""
        lat, be = self.protection()
        own = lat.weight()
        p = self.start()

        def held():
            return be.idle() == "1" and lat.weight() != own
        self.assertTrue(wait_for(held, 40), "be in cpu.idle, lat's weight raised: " + self.log()[-2000:])
        wr(os.path.join(be.cg.bw, "cpu.idle"), 0)
        wr(lat.weight_file, own)
        self.assertTrue(wait_for(held, 5), "both set again: " + self.log()[-2000:])
        self.assertIn("(the unit's own settings applied again): set again", self.log())
        self.assertNotIn("someone else", self.log())
        self.assertEqual(self.stop(p), 0)
        self.assertEqual((lat.weight(), be.idle()), (own, "0"), "after the stop")
        self.no_sanitizer_report()

    def test_the_weight_from_before_idle_comes_back(self):
        shares = "500" if self.layout != "v2" else "50"
        lat, be = self.protection(be_shares=shares)
        p = self.start()
        self.assertTrue(wait_for(lambda: be.idle() == "1", 40), "be put in cpu.idle: " + self.log()[-2000:])
        self.assertEqual(self.ctl("pause", "be").returncode, 0)
        self.assertTrue(wait_for(lambda: be.idle() == "0", 5))
        self.assertEqual(be.weight(), shares, "its own weight, not the kernel's default, after cpu.idle")
        self.ctl("resume", "be")
        self.assertTrue(wait_for(lambda: be.idle() == "1", 40), "be in cpu.idle again")
        self.assertEqual(self.stop(p), 0)
        self.assertEqual((be.idle(), be.weight()), ("0", shares), "after the stop")
        self.no_sanitizer_report()


if __name__ == "__main__":
    unittest.main(verbosity=2)
