#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The kill matrix (issue 30, tests/FAULTS.md): bwgovd SIGKILLed at random
moments while it holds every kind of lever on this host's real cgroups,
then one of four things, in turn:

  same     started again with the same configuration, stopped (SIGTERM);
  changed  started again with a changed one (two units dropped, no
           contention, no latency target), checked while it runs, stopped;
  broken   started with a configuration that does not load (it refuses to
           start);
  none     not started again: `bwgovd --restore`, as ExecStopPost= runs it.

After each: no group frozen, in cpu.idle, pinned, re-weighted, with a
thread at bwgovd's slice, or above its baseline; the daemon's exit statuses
as they should be; no sanitizer report. The configurations alternate
between Contention=gang and Contention=pin, each with latency protection
(a Class=latency unit with a waking thread, a best-effort hog) and a unit
resting at a raised quota, so that a random moment of a few seconds finds
gang turns, pinned cpusets, every rung of the ladder (hold, weight,
weight-high, slice, idle) and raised quotas.

  kill_matrix.py [--iterations 50] [--max-wait 7] [--seed 1]

Root, real cgroups (bwgov-test-km*, removed at the end); skips (77)
without them. The meson test runs a short matrix (--iterations 8); the
one of at least 50 is the command in tests/FAULTS.md.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_governor import BWGOVD, Cgroup, mounts  # noqa: E402
from live_governor import read_file as rd, write_file as wr  # noqa: E402
from live_common import remove_cgroups  # noqa: E402

PERIOD = 100000
V1_CPUSET = "/sys/fs/cgroup/cpuset"
SANITIZER = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: \w+Sanitizer")
TAG = f"bwgov-test-km{os.getpid()}"
MODES = ("same", "changed", "broken", "none")


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def wait_for(pred, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return bool(pred())


def slurp(path):
    """A file's whole text (closed at once; undecodable bytes replaced)."""
    with open(path, errors="replace") as f:
        return f.read()


class Group:
    """A cgroup of the test with the originals of every lever file."""

    def __init__(self, name, layout, quota=None, weight=None, cpuset=True):
        self.name = name
        self.cg = Cgroup(name)
        self.layout = layout
        self.cpuset = None
        if cpuset and layout == "v2":
            self.cpuset = self.cg.bw
        elif cpuset and os.path.isdir(V1_CPUSET):
            self.cpuset = os.path.join(V1_CPUSET, name)
            os.mkdir(self.cpuset)
            for f in ("cpuset.cpus", "cpuset.mems"):
                wr(os.path.join(self.cpuset, f), rd(os.path.join(V1_CPUSET, f)))
        self.weight_file = os.path.join(self.cg.bw, "cpu.weight" if layout == "v2" else "cpu.shares")
        if weight:
            wr(self.weight_file, weight)
        if quota:
            self.cg.set(quota, PERIOD, 0)
        self.procs = []
        self.orig = self.values()

    def values(self):
        v = {"freeze": rd(os.path.join(self.cg.v2, "cgroup.freeze")), "weight": rd(self.weight_file),
             "max": self.cg.get()}
        idle = os.path.join(self.cg.bw, "cpu.idle")
        if os.path.exists(idle):
            v["idle"] = rd(idle)
        if self.cpuset:
            v["cpus"] = rd(os.path.join(self.cpuset, "cpuset.cpus"))
        return v

    def spawn(self, script, n=1):
        targets = [os.path.join(self.cg.bw, "cgroup.procs")]
        if self.cg.v2 != self.cg.bw:
            targets.append(os.path.join(self.cg.v2, "cgroup.procs"))
        if self.cpuset and self.cpuset != self.cg.bw:
            targets.append(os.path.join(self.cpuset, "cgroup.procs"))

        def enter():
            for t in targets:
                wr(t, os.getpid())
        for _ in range(n):
            self.procs.append(subprocess.Popen(["sh", "-c", script], preexec_fn=enter, stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))

    def reset(self):
        """Back to the originals, whatever a failed check left."""
        for f, v in ((os.path.join(self.cg.v2, "cgroup.freeze"), "0"), (os.path.join(self.cg.bw, "cpu.idle"), "0"),
                     (self.weight_file, self.orig["weight"])):
            try:
                wr(f, v)
            except OSError:
                pass
        if self.cpuset and "cpus" in self.orig:
            try:
                wr(os.path.join(self.cpuset, "cpuset.cpus"), self.orig["cpus"])
            except OSError:
                pass
        q = self.orig["max"]
        if q[0] != "max":
            try:
                self.cg.set(int(q[0]), q[1], q[2])
            except OSError:
                pass

    def remove(self):
        self.reset()
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        remove_cgroups((self.cg.bw, self.cg.v2, self.cpuset))


def short_slices(g):
    """Threads of g (and below) at the short slice latency protection gives
    (100us for LatencyTarget=300us), from /proc."""
    out = []
    for d, _, _ in os.walk(g.cg.v2):
        try:
            pids = slurp(os.path.join(d, "cgroup.threads")).split()
        except OSError:
            continue
        for tid in pids:
            try:
                for line in open(f"/proc/{tid}/sched"):
                    if line.startswith("se.slice") and int(line.split(":")[1]) == 100000:
                        out.append(tid)
            except OSError:
                pass
    return out


class Matrix:
    def __init__(self, a):
        self.a = a
        self.rnd = random.Random(a.seed)
        self.base = tempfile.mkdtemp(prefix="bwgov-kill-matrix-")
        for d in ("conf", "state", "run"):
            os.makedirs(os.path.join(self.base, d))
        self.layout = mounts()[0]
        self.groups = {}
        self.failures = []
        self.counts = {m: 0 for m in MODES}
        self.levers_seen = set()
        self.logs = []

    def setup(self):
        L = self.layout
        odd = lambda v2, v1: v2 if L == "v2" else v1
        g = self.groups
        g["ga"] = Group(f"{TAG}-ga", L, 90000, odd("150", "1536"))
        g["gb"] = Group(f"{TAG}-gb", L, 90000, odd("150", "1536"))
        g["tp"] = Group(f"{TAG}-tp", L, 50000, odd("77", "789"))
        g["be"] = Group(f"{TAG}-be", L, None, odd("43", "443"))
        g["lat"] = Group(f"{TAG}-lat", L, None, odd("137", "1403"), cpuset=False)
        self.work = Cgroup(f"{TAG}-lat/work")
        for n in ("ga", "gb"):
            g[n].spawn("while :; do :; done", 2)
        g["be"].spawn("while :; do :; done", 2 * (os.cpu_count() or 1))
        work = [os.path.join(self.work.bw, "cgroup.procs")] + \
            ([os.path.join(self.work.v2, "cgroup.procs")] if self.work.v2 != self.work.bw else [])

        def enter():
            for t in work:
                wr(t, os.getpid())
        g["lat"].procs.append(subprocess.Popen(["sh", "-c", "while :; do sleep 0.001; done"], preexec_fn=enter,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.orig = {n: x.orig for n, x in g.items()}

    def cleanup(self):
        for x in self.groups.values():
            x.reset()
            for p in x.procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
        if hasattr(self, "work"):
            for d in (self.work.bw, self.work.v2):
                for _ in range(100):
                    try:
                        os.rmdir(d)
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        time.sleep(0.05)
        for n in ("lat", "be", "tp", "gb", "ga"):
            if n in self.groups:
                self.groups[n].remove()

    # ---- configuration and the daemon --------------------------------------

    def configure(self, contention, changed=False, broken=False):
        conf = os.path.join(self.base, "conf")
        shutil.rmtree(conf)
        os.makedirs(conf)
        glob = "[Governor]\nHostPressureLimit=0%\nContentionInterval=300ms\n"
        if not changed:
            glob += f"Contention={contention}\n"
        wr(os.path.join(conf, "bwgov.conf"), glob)
        g = self.groups
        units = {"ga": "Class=throughput\n", "tp": "CreditMax=10s\n"}
        if not changed:
            units.update(gb="Class=throughput\n", be="Class=best-effort\n", lat="LatencyTarget=300us\n")
        else:
            units["lat"] = ""
        for n, body in units.items():
            d = os.path.join(conf, n + ".d")
            os.makedirs(d)
            wr(os.path.join(d, "10-km.conf"), f"[Bandwidth]\nCgroup={g[n].name}\n{body}")
        if broken:
            wr(os.path.join(conf, "tp.d", "20-broken.conf"), "[Bandwidth]\nCPUQuotaMax=lots\n")

    def start(self, *extra):
        log = os.path.join(self.base, f"bwgovd-{len(self.logs)}.log")
        self.logs.append(log)
        with open(log, "w") as out:
            return subprocess.Popen([BWGOVD, "--config-dir", os.path.join(self.base, "conf"), "--state-dir",
                                     os.path.join(self.base, "state"), "--runtime-dir",
                                     os.path.join(self.base, "run"), "--log-level", "info", *extra],
                                    stdout=out, stderr=out, stdin=subprocess.DEVNULL)

    def started(self, p):
        """Wait until the daemon started last says it runs (its signals are
        handled from then on: a SIGTERM before would kill it outright)."""
        ok = wait_for(lambda: p.poll() is not None or " started: " in slurp(self.logs[-1]),
                      30)
        return ok and p.poll() is None

    # ---- checks ---------------------------------------------------------------

    def held_now(self):
        """What bwgovd holds at this moment, for the report."""
        held = set()
        for n, x in self.groups.items():
            v, o = x.values(), self.orig[n]
            for k in ("freeze", "idle", "weight", "cpus"):
                if k in v and v[k] != o.get(k):
                    held.add(k)
            if v["max"] != o["max"]:
                held.add("quota")
        if short_slices(self.groups["lat"]):
            held.add("slice")
        return held

    def leftovers(self, only=None):
        bad = []
        for n, x in self.groups.items():
            if only and n not in only:
                continue
            v, o = x.values(), self.orig[n]
            for k in ("freeze", "idle", "weight", "cpus", "max"):
                if k in v and v[k] != o.get(k):
                    bad.append(f"{n}.{k}={v[k]} (was {o.get(k)})")
        if (not only or "lat" in only) and short_slices(self.groups["lat"]):
            bad.append("lat: a thread at bwgovd's slice")
        return bad

    def check(self, i, what, ok, detail=""):
        if not ok:
            self.failures.append(f"#{i} {what}: {detail}")
            print(f"FAIL #{i}: {what}: {detail}", flush=True)

    # ---- one iteration ----------------------------------------------------------

    def iteration(self, i):
        contention = "gang" if i % 2 == 0 else "pin"
        mode = MODES[i % len(MODES)]
        self.counts[mode] += 1
        self.configure(contention)
        p = self.start()
        wait = self.rnd.uniform(0.3, self.a.max_wait)
        time.sleep(wait)
        held = self.held_now()
        self.levers_seen |= held
        p.send_signal(signal.SIGKILL)
        p.wait()
        print(f"#{i} {contention}, killed after {wait:.1f}s holding {sorted(held) or 'nothing'}: {mode}", flush=True)
        if mode == "same":
            p = self.start()
            self.check(i, "the restart runs", self.started(p), slurp(self.logs[-1])[-1500:])
            time.sleep(1)
            p.send_signal(signal.SIGTERM)
            rc = p.wait(60)
            self.check(i, "SIGTERM after a restart exits 0", rc == 0, f"exit {rc}")
        elif mode == "changed":
            self.configure(contention, changed=True)
            p = self.start()
            self.check(i, "the restart runs", self.started(p), slurp(self.logs[-1])[-1500:])
            dropped = ("gb", "be")
            ok = wait_for(lambda: not self.leftovers(dropped), 3)
            self.check(i, "units no longer configured are put back at start", ok, str(self.leftovers(dropped)))
            ok = wait_for(lambda: self.groups["lat"].values()["weight"] == self.orig["lat"]["weight"], 3)
            self.check(i, "the latency unit's weight back (no LatencyTarget= any more)", ok,
                       self.groups["lat"].values()["weight"])
            p.send_signal(signal.SIGTERM)
            rc = p.wait(60)
            self.check(i, "SIGTERM after a restart exits 0", rc == 0, f"exit {rc}")
        elif mode == "broken":
            self.configure(contention, broken=True)
            p = self.start()
            try:
                rc = p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = "still running"
            self.check(i, "a broken configuration: bwgovd refuses to start", rc not in (0, "still running"), rc)
        else:
            rc = self.start("--restore").wait(30)
            self.check(i, "bwgovd --restore exits 0", rc == 0, f"exit {rc}")
        bad = self.leftovers()
        self.check(i, f"nothing left behind ({mode})", not bad, ", ".join(bad))
        if bad:
            for x in self.groups.values():
                x.reset()
        text = slurp(self.logs[-1]) + slurp(self.logs[-2])
        self.check(i, "no sanitizer report", not SANITIZER.search(text), text[-1500:])

    def run(self):
        t0 = time.monotonic()
        for i in range(self.a.iterations):
            self.iteration(i)
        took = time.monotonic() - t0
        print(f"{self.a.iterations} iterations in {took:.0f}s: {self.counts}; levers seen held at the kill: "
              f"{sorted(self.levers_seen)}", flush=True)
        if self.a.iterations >= 8:
            for k in ("freeze", "cpus", "quota", "weight"):
                self.check("-", f"a kill found {k} held at least once", k in self.levers_seen,
                           str(sorted(self.levers_seen)))
        return 1 if self.failures else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--max-wait", type=float, default=7.0, help="the latest moment of the kill, s (default 7)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        skip("needs root (real cgroups)")
    if not os.path.exists(BWGOVD):
        skip(f"bwgovd not built at {BWGOVD}")
    layout, bw_root, v2_root = mounts()
    if not layout or not v2_root:
        skip("no cgroup CPU controller, or no cgroup2 tree for the freezer")
    if layout == "v2":
        sc = os.path.join(v2_root, "cgroup.subtree_control")
        if "cpuset" not in rd(os.path.join(v2_root, "cgroup.controllers")).split():
            skip("cgroup v2 without the cpuset controller")
        if "cpuset" not in rd(sc).split():
            wr(sc, "+cpuset")
    m = Matrix(a)
    try:
        m.setup()
        rc = m.run()
    finally:
        m.cleanup()
    if rc == 0:
        shutil.rmtree(m.base, ignore_errors=True)
        print("PASS: kill matrix: nothing left behind")
    else:
        print(f"{len(m.failures)} failure(s); logs in {m.base}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
