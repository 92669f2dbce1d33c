#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fault matrix (tests/FAULTS.md): the real bwgovd meets a fault while it
governs, and must keep ticking, say what happened once (not every tick),
never leave a value it wrote behind without a record, and put the exact
baseline back on SIGTERM once the fault is gone.

Faults come from the world where they can (a tmpfs that fills, a read-only
remount, a corrupt file, a cgroup removed and made again on the real
kernel, SIGSTOP) and from tests/fault/fault-inject.c where they cannot be
had on demand: errno on a write to cpu.max, the wall clock moved.

Root is needed for the tmpfs rows, bwgovctl reload and the real cgroups;
those say SKIP without it.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_fixture as df  # noqa: E402
import varlink_common as vc  # noqa: E402

BUILD_ROOT = os.environ.get("BWGOV_BUILD_ROOT", "build")
SHIM = os.environ.get("BWGOV_FAULT_INJECT") or os.path.join(BUILD_ROOT, "tests/fault/bwgov-fault-inject.so")
PERIOD = df.PERIOD
FAST = "[Governor]\nInterval=100ms\nMetricsInterval=100ms\n"


def is_root():
    return os.geteuid() == 0


class FaultTest(df.DaemonTest):
    """A fixture daemon with the fault shim preloaded; self.fault(rules)
    switches what it injects."""
    units = {"app.slice": dict(quota=50000, burst=0, conf="CreditMax=2s\n")}
    global_conf = FAST
    initial_fault = ""

    def prepare(self):
        if not os.path.exists(SHIM):
            self.skipTest(f"fault shim not built at {SHIM}")
        asan = os.environ.get("ASAN_OPTIONS", "")
        self.ctl_path = os.path.join(self.base, "fault.ctl")
        self.fault_log = os.path.join(self.base, "fault.log")
        self.daemon_env = {
            "LD_PRELOAD": SHIM,
            "BWGOV_FAULT_CTL": self.ctl_path,
            "BWGOV_FAULT_LOG": self.fault_log,
            # The shim comes before the sanitizer runtime in the preload
            # order: allowed, it only forwards.
            "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0",
        }
        self.fault_gen = 0
        self.fault(self.initial_fault)

    def fault(self, rules):
        """Replace the shim's rules; a distinct mtime makes it re-read them."""
        self.fault_gen += 1
        with open(self.ctl_path, "w") as f:
            f.write(rules)
        t = time.time_ns() + self.fault_gen * 1000
        os.utime(self.ctl_path, ns=(t, t))

    def injected(self):
        try:
            with open(self.fault_log) as f:
                return len(f.readlines())
        except FileNotFoundError:
            return 0

    def socket(self):
        return os.path.join(self.base, "run", vc.INTERFACE)

    def ctl(self, *args):
        return subprocess.run([vc.BWGOVCTL, *args, "--socket", self.socket()], capture_output=True, text=True,
                              timeout=30)

    def status(self):
        return vc.call(self.socket(), vc.INTERFACE + ".GetStatus")["parameters"]

    def show(self, unit):
        return vc.call(self.socket(), vc.INTERFACE + ".GetUnit", {"unit": unit})["parameters"]

    def ticks_in(self, seconds):
        t0 = self.d.metric("bwgov_unit_ticks_total", "app.slice", 0)
        time.sleep(seconds)
        return self.d.metric("bwgov_unit_ticks_total", "app.slice", 0) - t0

    def stop_and_check_restored(self, quota=50000, burst=0):
        self.d.signal(signal.SIGTERM)
        self.assertEqual(self.d.wait(10), 0, self.d.logtext()[-2000:])
        self.assertEqual(self.cg["app.slice"].read_max(), (quota, PERIOD, burst), "baseline restored exactly")

    def headroom(self, timeout=15):
        self.d.wait_for(lambda: self.quota("app.slice") == df.REST, timeout, f"the resting headroom ({df.REST})")


# ---- a write to cpu.max fails -------------------------------------------

class WriteErrors(FaultTest):
    """EINVAL, EBUSY, EACCES on every write to cpu.max from adoption on:
    nothing changes in the kernel, each tick tries again, one log line
    says why, the counters count; once the kernel takes writes again the
    headroom goes in, and SIGTERM puts the baseline back."""

    ERRNO_TESTS = {"test_einval": "EINVAL", "test_ebusy": "EBUSY", "test_eacces": "EACCES"}

    def prepare(self):
        # The fault is in place before the daemon starts: set after, the
        # adoption's first write could come first.
        err = self.ERRNO_TESTS.get(self._testMethodName)
        self.initial_fault = f"write cpu.max {err}\n" if err else ""
        super().prepare()

    def meet(self, err):
        d = self.d
        d.wait_for(lambda: self.injected() >= 5, 20, f"five {err} writes")
        d.wait_ticks("app.slice", 10)
        self.assertEqual(self.quota("app.slice"), 50000, "nothing half-written")
        self.assertGreaterEqual(d.metric("bwgov_write_errors_total", "app.slice", 0), 5)
        log = d.logtext()
        failed = log.count("app.slice: writing bandwidth failed")
        self.assertGreaterEqual(failed, 1, "the failure is logged")
        self.assertLessEqual(failed, 2, f"logged once, not every tick ({failed} times)")
        self.assertIn(os.strerror(getattr(__import__("errno"), err)), log)
        self.fault("")
        self.headroom()
        self.stop_and_check_restored()

    def test_einval(self):
        self.meet("EINVAL")

    def test_ebusy(self):
        self.meet("EBUSY")

    def test_eacces(self):
        self.meet("EACCES")

    def test_restore_fails_at_stop_then_the_next_start_restores(self):
        d = self.d
        self.headroom()
        self.fault("write cpu.max EBUSY\n")
        d.signal(signal.SIGTERM)
        rc = d.wait(15)
        self.assertNotEqual(rc, 0, "a stop that could not restore says so in its exit code")
        self.assertEqual(self.quota("app.slice"), df.REST)
        self.assertIn("app.slice", d.logtext()[d.logtext().rfind("Received"):])
        with open(os.path.join(self.base, "state", "state.json")) as f:
            entry = json.load(f)["units"]["app.slice"]
        self.assertEqual(entry["baseline"]["quota_usec"], 50000, "the baseline is kept in state.json")
        # The next daemon knows the resting headroom as bwgov's and puts 50000 back.
        self.fault("")
        self.d = df.Daemon(self.base, self.daemon_env)
        self.d.log_path = os.path.join(self.base, "second.log")
        self.d.start()
        self.d.wait_ticks("app.slice", 3)
        self.assertEqual(self.d.metric("bwgov_baseline_quota_usec", "app.slice"), 50000)
        self.assertEqual(self.d.metric("bwgov_external_changes_total", "app.slice", 0), 0)
        self.stop_and_check_restored()

    def test_files_vanish_between_read_and_write(self):
        # ENODEV is what a write gets when the file went away under it. The
        # cgroup directory is still the same one (a controller switched
        # off above it and on again): its record stays, and the value bwgov
        # wrote there is recognised as its own when the files are back.
        d = self.d
        self.headroom()
        self.demand("app.slice", 1.0)                    # credit runs dry: a write is coming
        self.fault("write cpu.max ENODEV\n")
        d.wait_for(lambda: self.injected() >= 1, 20, "a write meeting ENODEV")
        d.wait_for(lambda: "app.slice: cgroup app.slice lost its bandwidth files" in d.logtext(), 10,
                   "the unit saying its cgroup's files vanished")
        self.fault("")
        d.wait_for(lambda: d.logtext().count("app.slice: governing cgroup") >= 2, 10, "the cgroup governed again")
        d.wait_ticks("app.slice", 5)
        self.assertEqual(d.metric("bwgov_baseline_quota_usec", "app.slice"), 50000, "the baseline kept")
        self.assertEqual(d.metric("bwgov_external_changes_total", "app.slice", 0), 0)
        self.assertIn("kernel holds the value we last wrote", d.logtext())
        self.stop_and_check_restored()

    def test_cgroup_replaced_between_read_and_write(self):
        # The cgroup removed and made again with systemd's new quota while
        # bwgovd decides: the write meets ENODEV, the new cgroup is a new
        # one, its quota the baseline.
        d = self.d
        self.headroom()
        self.fault("write cpu.max ENODEV\n")
        # The old directory goes on being simulated where bwgovd's open
        # files still see it; a new one, static, takes its name.
        cg = self.cg["app.slice"]
        with cg.lock:
            os.rename(cg.dir, cg.dir + ".old")
            cg.dir += ".old"
            fresh = df.SimCgroup(os.path.join(self.base, "cg"), "app.slice", 40000, 0)
        self.demand("app.slice", 1.0)                    # credit runs dry: a write is coming
        d.wait_for(lambda: self.injected() >= 1, 20, "a write meeting ENODEV")
        self.fault("")
        d.wait_for(lambda: "app.slice: cgroup app.slice vanished, forgetting it" in d.logtext(), 10,
                   "the unit forgetting the old cgroup")
        d.wait_for(lambda: d.metric("bwgov_baseline_quota_usec", "app.slice") == 40000, 10,
                   "the new cgroup's quota as the baseline")
        d.wait_ticks("app.slice", 5)
        self.assertEqual(d.metric("bwgov_external_changes_total", "app.slice", 0), 0, "a new cgroup, adopted")
        self.d.signal(signal.SIGTERM)
        self.assertEqual(self.d.wait(10), 0, self.d.logtext()[-2000:])
        self.assertEqual(fresh.read_max(), (40000, PERIOD, 0), "the new cgroup's baseline restored exactly")


# ---- what "boosted" says (issue 30, finding 9) -------------------------------

class Boosted(FaultTest):
    """A unit resting at its headroom, idle, is not "boosted" (it gets
    nothing above its contract); spending its credit on the headroom, it
    is."""

    def test_resting_is_not_boosted_spending_is(self):
        self.headroom()
        self.d.wait_ticks("app.slice", 3)
        u = self.show("app.slice")["unit"]
        self.assertEqual((u["state"], u["boosted"]), ("resting", False))
        self.assertEqual(self.status()["n_boosted"], 0)
        self.demand("app.slice", 0.8)
        self.d.wait_for(lambda: self.show("app.slice")["unit"]["state"] == "spending", 15, "spending")
        self.assertTrue(self.show("app.slice")["unit"]["boosted"])
        self.assertEqual(self.status()["n_boosted"], 1)
        self.demand("app.slice", 0.0)
        self.stop_and_check_restored()


# ---- the clock ------------------------------------------------------------

class ClockJumps(FaultTest):
    """The wall clock jumps a day back and a year forward, and the daemon
    is stopped for 3 s (a frozen VM, a suspended host): ticks keep their
    rhythm, nothing is caught up in a burst, the credit is kept by the
    monotonic clock and the contract holds."""

    def rhythm(self):
        n = self.ticks_in(2.0)
        self.assertGreaterEqual(n, 12, f"{n} ticks in 2 s at Interval=100ms")
        self.assertLessEqual(n, 28, f"{n} ticks in 2 s at Interval=100ms")

    def test_wall_clock_jumps(self):
        d = self.d
        self.headroom()
        self.fault("realtime -86400\n")
        self.rhythm()
        self.demand("app.slice", 1.0)
        d.wait_for(lambda: self.quota("app.slice") == 50000, 20, "the credit spent: back at the baseline")
        self.fault("realtime 31536000\n")
        self.rhythm()
        self.demand("app.slice", 0.0)
        self.headroom(30)
        hist = vc.call(self.socket(), vc.INTERFACE + ".GetHistory", {"unit": "app.slice"})["parameters"]
        self.assertTrue(hist["entries"], "history kept")
        self.stop_and_check_restored()

    def test_stopped_for_three_seconds(self):
        d = self.d
        self.headroom()
        self.demand("app.slice", 1.0)
        d.signal(signal.SIGSTOP)
        time.sleep(3)
        d.signal(signal.SIGCONT)
        n = self.ticks_in(1.0)
        self.assertLessEqual(n, 15, f"{n} ticks in the first second after SIGCONT: 30 missed ones caught up")
        self.assertGreaterEqual(n, 5, f"{n} ticks in the first second after SIGCONT")
        # Three seconds at 1 CPU against 0.5 emptied the 2 s credit: the
        # next tick sees it and puts the baseline back.
        d.wait_for(lambda: self.quota("app.slice") == 50000, 5, "the baseline after the gap")
        self.stop_and_check_restored()


# ---- the state directory --------------------------------------------------

class StateDirectory(FaultTest):
    """state.json cannot be saved: the state directory fills up or goes
    read-only while bwgovd runs (a small tmpfs here). Putting the baseline
    back needs no save; raising does, so nothing is raised until a save
    works again; GetStatus says why, the log says it once."""

    def prepare(self):
        if not is_root():
            self.skipTest("mounting a tmpfs for the state directory needs root")
        self.state = os.path.join(self.base, "state")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "bwgov-test-state", self.state],
                       check=True)
        self.mounted = True
        super().prepare()

    def tearDown(self):
        if getattr(self, "mounted", False):
            if self.d.proc and self.d.proc.poll() is None:
                self.d.proc.kill()
                self.d.wait()
            subprocess.run(["umount", "-l", self.state], check=False)
        super().tearDown()

    def fill(self):
        self.filler = os.path.join(self.state, "filler")
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)

    def meet(self, make, clear, words):
        d = self.d
        self.headroom()
        self.demand("app.slice", 1.0)
        d.wait_for(lambda: self.quota("app.slice") == 50000, 20, "the credit spent: back at the baseline")
        make()
        self.demand("app.slice", 0.0)           # the credit refills: the headroom would go back
        d.wait_for(lambda: "not writing: cannot record intent" in d.logtext(), 30, "the raise held back")
        d.wait_ticks("app.slice", 20)
        self.assertEqual(self.quota("app.slice"), 50000, "nothing raised without a record")
        err = self.status()["state_error"]
        self.assertIsNotNone(err)
        self.assertIn(words, err)
        self.assertLessEqual(d.logtext().count("not writing: cannot record intent"), 2, "logged once")
        self.assertTrue(d.proc.poll() is None)
        clear()
        self.headroom()
        d.wait_for(lambda: self.status()["state_error"] is None, 10, "state_error cleared")
        self.stop_and_check_restored()

    def test_full(self):
        # A save of a few entries appends to state.journal, whose last page
        # on a tmpfs still has room when the rest is full: a line recorded
        # there is a record (the raise may go ahead). Filled when there is
        # no journal (every full save removes it, the periodic one every
        # 10 s), nothing can be saved.
        journal = os.path.join(self.state, "state.journal")

        def fill():
            self.d.wait_for(lambda: not os.path.exists(journal), 30, "a full save (no journal left)")
            self.fill()
        self.meet(fill, lambda: os.unlink(self.filler), "No space left on device")

    def test_read_only(self):
        remount = lambda mode: subprocess.run(["mount", "-o", f"remount,{mode}", self.state], check=True)
        self.meet(lambda: remount("ro"), lambda: remount("rw"), "Read-only file system")


class CorruptState(FaultTest):
    """A state.json that does not parse: kept aside as state.json.broken for
    whoever wants to look, the warning names both, the kernel's values are
    adopted, a valid state.json is written, SIGTERM restores."""
    broken = b'{"version": 1, "units": {"app.slice": {"baseline": {"quota_usec": 5'

    def prepare(self):
        with open(os.path.join(self.base, "state", "state.json"), "wb") as f:
            f.write(self.broken)
        super().prepare()

    def test_corrupt(self):
        d = self.d
        self.headroom()
        self.assertRegex(d.logtext(), r"state\.json unreadable \(kept as state\.json\.broken\)")
        with open(os.path.join(self.base, "state", "state.json.broken"), "rb") as f:
            self.assertEqual(f.read(), self.broken)
        with open(os.path.join(self.base, "state", "state.json")) as f:
            self.assertEqual(json.load(f)["units"]["app.slice"]["baseline"]["quota_usec"], 50000)
        self.stop_and_check_restored()


class CorruptStateBinary(CorruptState):
    broken = bytes(range(256)) * 16


class CorruptStateTypes(CorruptState):
    broken = b'{"version": "one", "units": [1, 2, 3]}\n'


# ---- reload with a broken drop-in -----------------------------------------

class ReloadBroken(FaultTest):
    """Each kind of broken drop-in: bwgovctl reload exits 1 with the file,
    line and key; the configuration in force is the old one, whole; the
    daemon is the same process; removing the file, the next reload works."""
    units = {"app.slice": dict(quota=50000, burst=0, conf="CreditMax=60s\nCPUQuotaMax=150%\nPriority=3\n"),
             "db.slice": dict(quota=100000, burst=0, conf="Mode=observe\n")}

    CASES = [
        # (what, drop-in directory, file name, content, line, key)
        ("an invalid value", "app.slice.d", "20-bad.conf", "[Bandwidth]\nCreditMax=5s\nCPUQuotaMax=lots\n", 3,
         "CPUQuotaMax"),
        ("an unknown key", "app.slice.d", "20-bad.conf", "[Bandwidth]\nCreditMax=5s\nNoSuchKey=1\n", 3,
         "NoSuchKey"),
        ("a line without =", "app.slice.d", "20-bad.conf", "[Bandwidth]\nCreditMax=5s\nMode elastic\n", 3, None),
        ("a value out of range", "app.slice.d", "20-bad.conf", "[Bandwidth]\nTargetThrottle=150%\n", 2,
         "TargetThrottle"),
        ("a negative time", "app.slice.d", "20-bad.conf", "[Bandwidth]\nCreditMax=-5s\n", 2, "CreditMax"),
        ("an unknown section", "app.slice.d", "20-bad.conf", "[Bandwith]\nCreditMax=5s\n", 1, None),
        ("binary garbage", "app.slice.d", "20-bad.conf", "\x01\x02[\xff\n=\n", 1, None),
        ("a second claim on a cgroup", "other.d", "10-claim.conf", "[Bandwidth]\nCgroup=app.slice\n", 2,
         "Cgroup"),
        ("a bad global setting", "bwgov.conf.d", "20-bad.conf", "[Governor]\nInterval=soon\n", 2, "Interval"),
    ]

    def prepare(self):
        if not is_root():
            self.skipTest("bwgovctl reload is for root")
        super().prepare()

    def config(self):
        return {u: self.show(u)["config"] for u in self.units}

    def test_each_kind(self):
        d = self.d
        d.wait_ticks("app.slice", 3)
        before = self.config()
        pid = d.proc.pid
        for what, dirname, fname, content, line, key in self.CASES:
            with self.subTest(what):
                dpath = os.path.join(self.base, "conf", dirname)
                os.makedirs(dpath, exist_ok=True)
                path = os.path.join(dpath, fname)
                with open(path, "w", encoding="latin-1") as f:
                    f.write(content)
                p = self.ctl("reload", "--json")
                try:
                    self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                    err = json.loads(p.stdout)
                    self.assertEqual(err["error"], vc.INTERFACE + ".ReloadFailed")
                    self.assertEqual(err["file"], path, err)
                    if line is not None:
                        self.assertEqual(err["line"], line, err)
                    if key is not None:
                        self.assertEqual(err["key"], key, err)
                    self.assertEqual(self.config(), before, "the old configuration, whole")
                    self.assertEqual(d.proc.pid, pid)
                    self.assertIsNone(d.proc.poll(), "bwgovd still running")
                    human = self.ctl("reload")
                    self.assertIn(f"{path}:{line}" if line else path, human.stderr + human.stdout)
                finally:
                    os.unlink(path)
        p = self.ctl("reload", "--json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(self.config(), before)
        self.assertEqual(self.status()["reload_failures"], 2 * len(self.CASES))


# ---- a real cgroup removed and made again ----------------------------------

class Vanish(unittest.TestCase):
    """On this kernel: the governed cgroup is removed at a random moment
    of the tick and made again under the same name with another quota, ten
    times. Each time bwgovd forgets the old one (its baseline too), governs
    the new one within an interval or so from its own quota, holds no fd
    of the removed one, and SIGTERM puts the last baseline back."""
    NAME = "bwgov-test-fault-vanish"

    def setUp(self):
        if not is_root():
            self.skipTest("real cgroups need root")
        if not os.path.exists(df.BWGOVD):
            self.skipTest(f"bwgovd not built at {df.BWGOVD}")
        import live_governor as lg
        self.lg = lg
        layout, bw_root, _ = lg.mounts()
        if not bw_root:
            self.skipTest("no cgroup with the cpu controller")
        self.base = tempfile.mkdtemp(prefix="bwgov-test-fault-")
        for d in ("conf", "state", "run"):
            os.makedirs(os.path.join(self.base, d))
        with open(os.path.join(self.base, "conf", "bwgov.conf"), "w") as f:
            f.write("[Governor]\nInterval=100ms\nMetricsInterval=100ms\nHostPressureLimit=0%\n")
        os.makedirs(os.path.join(self.base, "conf", self.NAME + ".d"))
        with open(os.path.join(self.base, "conf", self.NAME + ".d", "10.conf"), "w") as f:
            f.write(f"[Bandwidth]\nCgroup={self.NAME}\nCreditMax=5s\n")
        self.cg = None
        self.proc = None

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.cg:
            self.cg.remove()
        import shutil
        shutil.rmtree(self.base, ignore_errors=True)

    def make(self, quota):
        self.cg = self.lg.Cgroup(self.NAME)
        self.cg.set(quota, PERIOD, 0)

    def metric(self, name):
        try:
            for line in open(os.path.join(self.base, "run", "metrics.prom")):
                m = re.match(r'^(\w+)\{unit="([^"]*)"\} (\d+)$', line.strip())
                if m and m.group(1) == name and m.group(2) == self.NAME:
                    return int(m.group(3))
        except FileNotFoundError:
            pass
        return None

    def wait(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.assertIsNone(self.proc.poll(), "bwgovd exited:\n" + self.logtext()[-2000:])
            if pred():
                return time.monotonic()
            time.sleep(0.01)
        try:
            now = self.cg.get()
        except OSError:
            now = "removed"
        self.fail(f"timed out: {what} ({now})\n" + self.logtext()[-2000:])

    def logtext(self):
        with open(os.path.join(self.base, "bwgovd.log")) as f:
            return f.read()

    def fds(self):
        n = 0
        for fd in os.listdir(f"/proc/{self.proc.pid}/fd"):
            try:
                if self.NAME in os.readlink(f"/proc/{self.proc.pid}/fd/{fd}"):
                    n += 1
            except OSError:
                pass
        return n

    def test_removed_and_made_again(self):
        self.make(50000)
        log = open(os.path.join(self.base, "bwgovd.log"), "w")
        self.proc = subprocess.Popen(
            [df.BWGOVD, "--config-dir", os.path.join(self.base, "conf"),
             "--state-dir", os.path.join(self.base, "state"), "--runtime-dir", os.path.join(self.base, "run"),
             "--log-level", "info"], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        self.wait(lambda: self.cg.get()[0] == str(df.REST), 10, "the resting headroom")
        held = self.fds()
        rng = random.Random(17)
        took = []
        for i in range(10):
            time.sleep(rng.uniform(0, 0.1))
            self.cg.remove()
            self.wait(lambda: self.fds() == 0, 5, "the removed cgroup's fds closed")
            time.sleep(rng.uniform(0, 0.3))
            quota = 30000 + 1000 * i
            self.make(quota)
            t0 = time.monotonic()
            t1 = self.wait(lambda: self.cg.get()[0] == str(df.resting(quota)) and
                           self.metric("bwgov_baseline_quota_usec") == quota, 5,
                           f"the new cgroup governed from its own {quota}")
            took.append(t1 - t0)
        print(f"governed again after {min(took):.3f}..{max(took):.3f} s", file=sys.stderr)
        self.assertLess(max(took), 1.5, "governed within moments of being made")
        self.assertEqual(self.fds(), held, "as many fds as before")
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(10), 0, self.logtext()[-2000:])
        self.assertEqual(self.cg.get(), ("39000", PERIOD, 0), "the last baseline restored exactly")
        self.assertNotIn("AddressSanitizer", self.logtext())


if __name__ == "__main__":
    unittest.main(verbosity=2)
