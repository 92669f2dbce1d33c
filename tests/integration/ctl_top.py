#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgovctl top against the real bwgovd on a simulated cgroup tree whose
counters move (daemon_fixture's simulator): a busy unit spending its credit
next to an idle one.

  * batch mode (-b -n N): N plain tables, sorted by usage (the busy unit
    first) or by --order=; --no-legend leaves the rows alone; usage errors
    exit 2, no daemon 3;
  * live, in a real terminal (tmux: keys sent, the pane captured): the rows
    appear, sorted by usage; "n" sorts by name and "r" reverses it (the
    order on the screen changes each time); a daemon that goes away is said
    on the screen and its return picked up; "q" exits 0 and leaves the
    alternate screen.

No root. Skips (77) without tmux.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_fixture as df  # noqa: E402
import varlink_common as vc  # noqa: E402

UNITS = {"omega.slice": 0.9, "alpha.slice": 0.0}  # by name and by usage, opposite orders


class TopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for p in (df.BWGOVD, vc.BWGOVCTL):
            if not os.path.exists(p):
                vc.skip(f"{p} not built")
        cls.base = tempfile.mkdtemp(prefix="bwgov-test-top-")
        for d in ("cg", "conf", "state", "run"):
            os.makedirs(os.path.join(cls.base, d))
        with open(os.path.join(cls.base, "cg", "cgroup.controllers"), "w") as f:
            f.write("cpuset cpu io memory pids\n")
        with open(os.path.join(cls.base, "conf", "bwgov.conf"), "w") as f:
            f.write("[Governor]\nInterval=100ms\nMetricsInterval=100ms\n")
        cls.cg = {}
        for name, demand in UNITS.items():
            cls.cg[name] = df.SimCgroup(os.path.join(cls.base, "cg"), name, 50000, 0)
            cls.cg[name].demand = demand
            os.makedirs(os.path.join(cls.base, "conf", name + ".d"))
            with open(os.path.join(cls.base, "conf", name + ".d", "10-test.conf"), "w") as f:
                f.write("[Bandwidth]\nCreditMax=60s\n")
        cls.sim = df.Sim(list(cls.cg.values()), os.path.join(cls.base, "host-pressure"),
                         os.path.join(cls.base, "host-stat"))
        cls.sim.start()
        cls.d = df.Daemon(cls.base)
        cls.d.start()
        cls.socket = os.path.join(cls.base, "run", vc.INTERFACE)
        cls.d.wait_for(lambda: cls.state("omega.slice") == "spending", 20, "omega.slice spending its credit")

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop.set()
        cls.sim.join()
        if cls.d.proc.poll() is None:
            cls.d.signal(15)
            cls.d.wait(10)
        shutil.rmtree(cls.base, ignore_errors=True)

    @classmethod
    def state(cls, unit):
        p = subprocess.run([vc.BWGOVCTL, "status", "--json", f"--socket={cls.socket}"],
                           capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            return None
        return {u["name"]: u["state"] for u in json.loads(p.stdout)["units"]}.get(unit)

    def top(self, *args, socket=True):
        argv = [vc.BWGOVCTL, "top", *args] + ([f"--socket={self.socket}"] if socket else [])
        env = dict(os.environ, NO_COLOR="1")
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)

    @staticmethod
    def order(lines):
        """The units in the order their rows come."""
        return [l.split()[0] for l in lines if l.split() and l.split()[0] in UNITS]

    # ---- batch ----------------------------------------------------------

    def test_batch(self):
        p = self.top("-b", "-n", "2", "--interval=0.2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        frames = p.stdout.split("\n\nbwgovd ")
        self.assertEqual(len(frames), 2, p.stdout)
        for fr in frames:
            lines = fr.splitlines()
            self.assertIn("Host: CPU pressure", fr)
            header = [l for l in lines if l.startswith("UNIT ")]
            self.assertEqual(len(header), 1, fr)
            self.assertEqual(header[0].split()[:4], ["UNIT", "STATE", "CPU", "BASELINE"])
            self.assertEqual(self.order(lines), ["omega.slice", "alpha.slice"])
            busy = next(l for l in lines if l.startswith("omega.slice")).split()
            self.assertEqual(busy[1], "spending")
            self.assertGreater(float(busy[2]), 0.5)    # CPU used, above its 0.50 baseline
            self.assertEqual(busy[3], "0.50")

    def test_batch_order_and_no_legend(self):
        p = self.top("-b", "-n", "1", "--order=unit", "--no-legend")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(self.order(lines), ["alpha.slice", "omega.slice"])
        self.assertEqual(len(lines), 2, p.stdout)
        p = self.top("-b", "-n", "1", "-o", "unit", "-r", "--no-legend")
        self.assertEqual(self.order(p.stdout.splitlines()), ["omega.slice", "alpha.slice"])

    def test_batch_is_implied_without_a_terminal(self):
        p = self.top("-n", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("\033[", p.stdout)
        self.assertEqual(self.order(p.stdout.splitlines()), ["omega.slice", "alpha.slice"])

    def test_errors(self):
        for args, what in ((["--order=cpu"], 'unknown column "cpu"'), (["--interval=0"], "invalid interval"),
                           (["-n", "0"], "invalid number of iterations"), (["extra"], "takes no arguments")):
            p = self.top("-b", *args)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
            self.assertIn(what, p.stderr)
        p = self.top("-b", "-n", "1", "--socket=/nonexistent/io.bwgov.Governor", socket=False)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("bwgovd is not running", p.stderr)
        self.assertEqual(p.stdout, "")

    # ---- live, in tmux ----------------------------------------------------

    def test_live_in_tmux(self):
        tmux = ["tmux", "-S", os.path.join(self.base, "tmux.socket"), "-f", "/dev/null"]
        rc_file = os.path.join(self.base, "top.rc")
        cmd = f"{vc.BWGOVCTL} top --interval=0.3 --socket={self.socket}; echo $? > {rc_file}; sleep 600"
        subprocess.run(tmux + ["new-session", "-d", "-x", "160", "-y", "30", "-s", "top", cmd], check=True)
        try:
            self.live(tmux, rc_file)
        finally:
            subprocess.run(tmux + ["kill-server"], capture_output=True)

    @staticmethod
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except FileNotFoundError:
            return ""

    def pane(self, tmux):
        return subprocess.run(tmux + ["capture-pane", "-p", "-t", "top"], capture_output=True, text=True).stdout

    def wait_pane(self, tmux, pred, what, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.pane(tmux)
            if pred(text):
                return text
            time.sleep(0.1)
        self.fail(f"timed out waiting for {what}; the pane:\n{self.pane(tmux)}")

    def live(self, tmux, rc_file):
        order = lambda t: self.order(t.splitlines())  # noqa: E731
        both = lambda t: len(order(t)) == 2  # noqa: E731
        text = self.wait_pane(tmux, both, "both units' rows")
        self.assertIn("by usage, every 300ms", text)
        self.assertEqual(order(text), ["omega.slice", "alpha.slice"], text)
        self.assertRegex(text, r"omega\.slice +spending +\d\.\d\d +0\.50 +\[#* *\] ")

        subprocess.run(tmux + ["send-keys", "-t", "top", "n"], check=True)
        text = self.wait_pane(tmux, lambda t: both(t) and order(t) == ["alpha.slice", "omega.slice"], "sorted by name")
        self.assertIn("by unit, every", text)
        subprocess.run(tmux + ["send-keys", "-t", "top", "r"], check=True)
        text = self.wait_pane(tmux, lambda t: both(t) and order(t) == ["omega.slice", "alpha.slice"], "reversed")
        self.assertIn("by unit (reversed)", text)

        # The daemon goes away: said on the screen; back: the rows again.
        self.d.signal(15)
        self.d.wait(10)
        self.wait_pane(tmux, lambda t: "bwgovd is not running" in t and not both(t), "the daemon's absence")
        self.d = type(self).d = df.Daemon(self.base)
        self.d.start()
        self.wait_pane(tmux, both, "the rows after the daemon's restart", timeout=20)

        subprocess.run(tmux + ["send-keys", "-t", "top", "q"], check=True)
        deadline = time.monotonic() + 10
        while not self.read(rc_file):
            self.assertLess(time.monotonic(), deadline, "top did not exit on q:\n" + self.pane(tmux))
            time.sleep(0.1)
        self.assertEqual(self.read(rc_file), "0")
        # The alternate screen is left: the table is gone from the pane.
        self.assertNotIn("omega.slice", self.pane(tmux))


if __name__ == "__main__":
    if not shutil.which("tmux"):
        vc.skip("tmux is not installed (Debian: apt-get install tmux; scripts/deps.sh lists it)")
    unittest.main(verbosity=2)
