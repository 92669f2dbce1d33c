#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgovd and the files around it (issue 17, findings 2 and 8), on a static
simulated cgroup tree: what is at the state file's name, the configuration
directory and the files named *.conf in it, the runtime directory going away,
and how often a failure that repeats every tick is logged. No root needed.
"""
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import varlink_common as vc  # noqa: E402

G = vc.INTERFACE
UNITS = {"app.slice": dict(quota=50000, burst=0, conf="CreditMax=30s\n")}


class Base(unittest.TestCase):
    global_conf = vc.GLOBAL_CONF

    def setUp(self):
        if not os.path.exists(vc.BWGOVD):
            self.skipTest(f"bwgovd not built at {vc.BWGOVD}")
        self.sd = vc.StaticDaemon(units=dict(UNITS), global_conf=self.global_conf).prepare()
        self.base = self.sd.base
        self.addCleanup(self.sd.cleanup)

    def path(self, *p):
        return os.path.join(self.base, *p)

    def run_daemon(self, extra=(), timeout=15):
        """bwgovd in the foreground, expected to exit by itself."""
        argv = [vc.BWGOVD, "--config-dir", self.path("conf"), "--state-dir", self.path("state"),
                "--runtime-dir", self.path("run"), "--cgroup-root", self.path("cg"),
                "--host-pressure", self.path("host-pressure"), "--host-stat", self.path("host-stat")]
        argv += list(extra)
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            # Blocked (in open() of a FIFO, say): end it ourselves.
            self.fail(f"bwgovd did not exit within {timeout} s: {e.stderr}")

    def cpu_max(self):
        with open(self.path("cg", "app.slice", "cpu.max")) as f:
            return f.read()


class StateFile(Base):
    """Finding 2: no file type at the state file's name can block bwgovd;
    it refuses to start, naming the file and what it is, and writes
    nothing."""

    def check_refused(self, what):
        before = self.cpu_max()
        t0 = time.monotonic()
        p = self.run_daemon()
        self.assertLess(time.monotonic() - t0, 10)
        self.assertNotEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"Saved state {self.path('state')}/state.json is {what}, not a regular file: "
                      "refusing to start", p.stderr)
        self.assertEqual(self.cpu_max(), before, "a cgroup was written before the refusal")

    def test_fifo(self):
        os.mkfifo(self.path("state", "state.json"))
        self.check_refused("a FIFO")
        # Left where it was: not bwgovd's to move.
        self.assertTrue(os.path.exists(self.path("state", "state.json")))

    def test_directory(self):
        os.mkdir(self.path("state", "state.json"))
        self.check_refused("a directory")

    def test_symlink(self):
        os.symlink("/dev/null", self.path("state", "state.json"))
        self.check_refused("a symlink")

    def test_fifo_for_the_state_directory(self):
        os.rmdir(self.path("state"))
        os.mkfifo(self.path("state"))
        p = self.run_daemon()
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(f"Failed to open state directory {self.path('state')}: Not a directory", p.stderr)

    def test_sigterm_while_starting_with_a_fifo_in_the_runtime_directory(self):
        # The metrics file's temporary name taken by a FIFO: the daemon
        # creates its own file and keeps going; SIGTERM ends it.
        d = vc.df.Daemon(self.base)
        d.start()
        self.addCleanup(lambda: d.proc.poll() is None and d.proc.kill())
        os.mkfifo(self.path("run", f".metrics.prom.{d.proc.pid}"))
        d.wait_for(lambda: d.metric("bwgov_unit_ticks_total", "app.slice", 0) >= 3, 20, "3 ticks")
        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(10), 0)


class Running(Base):
    """A daemon started on the prepared tree, stopped at the end."""

    def start(self):
        self.d = vc.df.Daemon(self.base)
        self.d.start()
        self.addCleanup(self.stop)
        self.d.wait_for(lambda: os.path.exists(self.path("run", G)), 10, "the socket")
        self.wait_ticks(3)
        # The daemon's count of passes adds up the units' (one here): each
        # unit's tick hands it its delta (unit_counters), decisions or not.
        ms = self.d.metrics()
        unit_ticks = ms.get(("bwgov_unit_ticks_total", "app.slice"), 0)
        self.assertGreaterEqual(unit_ticks, 3)
        self.assertGreaterEqual(ms.get(("bwgov_ticks_total", None), 0), unit_ticks)

    def stop(self):
        if self.d.proc.poll() is None:
            self.d.signal(signal.SIGTERM)
            self.assertEqual(self.d.wait(10), 0)

    def ticks(self):
        return vc.ticks(self.path("run", G))

    def wait_ticks(self, n):
        self.d.wait_for(lambda: self.d.metric("bwgov_unit_ticks_total", "app.slice", 0) >= n, 20, f"{n} ticks")

    def lines(self, text):
        return [line for line in self.d.logtext().splitlines() if text in line]


class Config(Running):
    """Finding 8: a configuration directory that is not there, and things
    named *.conf that are not files, are errors naming them, at start and on
    reload (which keeps the old configuration)."""

    def test_missing_config_dir(self):
        missing = self.path("no-such-conf")
        p = self.run_daemon(["--config-dir", missing])
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(f"Configuration not loaded: --config-dir={missing}: No such file or directory", p.stderr)

    def test_config_dir_is_a_file(self):
        p = self.run_daemon(["--config-dir", self.path("host-stat")])
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(f"--config-dir={self.path('host-stat')} is a regular file, not a directory", p.stderr)

    def test_not_a_file_at_start(self):
        for make, name, what in ((os.mkdir, "20-dir.conf", "a directory"), (os.mkfifo, "30-fifo.conf", "a FIFO")):
            f = self.path("conf", "app.slice.d", name)
            make(f)
            p = self.run_daemon()
            self.assertNotEqual(p.returncode, 0)
            self.assertIn(f"Configuration not loaded: {f}: {what}, not a configuration file", p.stderr)
            (os.rmdir if make is os.mkdir else os.unlink)(f)

    def test_fifo_on_reload(self):
        self.start()
        f = self.path("conf", "app.slice.d", "30-fifo.conf")
        os.mkfifo(f)
        self.d.signal(signal.SIGHUP)
        self.d.wait_for(lambda: self.d.metric("bwgov_reload_failures_total") == 1, 10, "the reload failure")
        self.assertIn(f"{f}: a FIFO, not a configuration file", self.d.logtext())
        # Not blocked on the FIFO: still answering and ticking.
        vc.wait_ticks_advance(self.path("run", G), self.ticks(), 3)

    def test_config_dir_gone_on_reload(self):
        self.start()
        os.rename(self.path("conf"), self.path("conf-moved"))
        self.d.signal(signal.SIGHUP)
        self.d.wait_for(lambda: self.d.metric("bwgov_reload_failures_total") == 1, 10, "the reload failure")
        self.assertIn(f"--config-dir={self.path('conf')}: No such file or directory", self.d.logtext())
        self.assertIn("Reload failed, keeping the previous configuration", self.d.logtext())
        st = vc.call(self.path("run", G), G + ".GetStatus")["parameters"]
        self.assertEqual(st["n_units"], 1)


class RuntimeDir(Running):
    """Finding 8: the runtime directory deleted under the daemon is noticed
    (a warning, once) and created again, with the socket, on reload."""

    def test_deleted_and_recreated_on_reload(self):
        self.start()
        shutil.rmtree(self.path("run"))
        warning = f"Cannot write the metrics to {self.path('run')}/.metrics.prom."
        self.d.wait_for(lambda: self.lines(warning), 10, "the warning")
        self.assertIn("(the runtime directory is gone; a reload creates it again)", self.lines(warning)[0])
        # Said at the next Interval= too, whatever MetricsInterval= is (issue 30, finding 9).
        gone = f"Runtime directory {self.path('run')} is gone, and the varlink socket and metrics.prom with it"
        self.d.wait_for(lambda: self.lines(gone), 10, "the runtime directory said gone")
        time.sleep(1.5)                         # 15 more MetricsInterval=100ms
        self.assertEqual(len(self.lines(warning)), 1, "the warning repeated")
        self.assertEqual(len(self.lines(gone)), 1, "the runtime directory said gone more than once")
        self.d.signal(signal.SIGHUP)
        self.d.wait_for(lambda: os.path.exists(self.path("run", G)), 10, "the socket back")
        # The socket is bound before the line saying so is written: waited for.
        for said in (f"Runtime directory {self.path('run')} was gone: created it again",
                     f"Varlink: socket {self.path('run', G)} was gone: listening on it again"):
            self.d.wait_for(lambda: said in self.d.logtext(), 10, said)
        self.assertIn("ticks", vc.call(self.path("run", G), G + ".GetStatus")["parameters"])
        self.d.wait_for(lambda: os.path.exists(self.path("run", "metrics.prom")), 10, "metrics.prom back")
        # A bwgovctl reload through the socket needs it too.
        p = subprocess.run([vc.BWGOVCTL, "reload", f"--socket={self.path('run', G)}"], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)


class Repeats(Running):
    """Finding 8: a failure that recurs on every tick is logged once (then a
    summary every 10 minutes, tests/unit/lib/test-repeat.c), not once a tick."""

    def test_unopenable_cgroup(self):
        os.makedirs(self.path("cg", "bad.slice"))           # no cpu.max: not governable
        os.makedirs(self.path("conf", "bad.slice.d"))
        with open(self.path("conf", "bad.slice.d", "10-test.conf"), "w") as f:
            f.write("[Bandwidth]\nCreditMax=5s\n")
        self.start()
        self.wait_ticks(30)
        lines = self.lines("bad.slice: cannot open cgroup bad.slice: Operation not supported")
        self.assertEqual(len(lines), 1, lines)

    def test_cgroup_not_there(self):
        # A Cgroup= that never appears is said once (issue 30, finding 9).
        os.makedirs(self.path("conf", "ghost.slice.d"))
        with open(self.path("conf", "ghost.slice.d", "10-test.conf"), "w") as f:
            f.write("[Bandwidth]\nCgroup=ghost.slice/never\nCreditMax=5s\n")
        self.start()
        self.wait_ticks(30)
        lines = self.lines("ghost.slice: cgroup ghost.slice/never is not there: governed once it is made")
        self.assertEqual(len(lines), 1, self.d.logtext()[-2000:])

    def test_state_dir_gone(self):
        self.start()
        shutil.rmtree(self.path("state"))
        # Every write needs its intent saved first: make the unit write on
        # every tick by changing its quota under it (an external change it
        # re-bases on, then headroom to put back).
        for i in range(20):
            with open(self.path("cg", "app.slice", "cpu.max"), "w") as f:
                f.write(f"{60000 + 1000 * i} 100000\n")
            self.wait_ticks(self.d.metric("bwgov_unit_ticks_total", "app.slice", 0) + 2)
        failed = self.lines("app.slice: not writing: cannot record intent in state: No such file or directory")
        saves = self.lines(f"Failed to save {self.path('state')}/state.json: No such file or directory")
        self.assertEqual(len(failed), 1, failed)
        self.assertEqual(len(saves), 1, saves)


if __name__ == "__main__":
    unittest.main(verbosity=2)
