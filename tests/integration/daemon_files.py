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


if __name__ == "__main__":
    unittest.main(verbosity=2)
