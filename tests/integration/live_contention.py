#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Contention= on real cgroups (root; this host's kernel): two busy groups,
Class=throughput, each with two spinning processes and a high weight (so
that other work on a shared host does not hide their contention).

  gang     ContentionInterval=300ms: the groups' freezers alternate (both
           seen frozen, never both at once, several switches); a paused
           unit is thawed and stays thawed; a stop leaves both as they were.
  pin      disjoint, non-empty cpusets within the host's CPUs; a unit
           dropped from the configuration (reload without its drop-in) gets
           its cpuset.cpus back at once; a stop puts back the other's.
  SIGKILL  bwgovd killed while it holds a group frozen, started again
           (Contention=share) on the same state directory: nothing is left
           frozen, and after its stop every freezer and cpuset is as it
           was before the first start.

Freezer: cgroup.freeze of the cgroup2 directory (the twin on a hybrid host).
cpuset: the v1 cpuset hierarchy on a hybrid host (a same-named directory
created here, cpus and mems copied from the root before a task joins); on
cgroup v2 the cpuset controller enabled in the root's cgroup.subtree_control
for these test cgroups (ours, directly under the root). Skips (77) without
root, without a cgroup2 directory for the freezer, or without any cpuset.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_governor import BWGOVCTL, BWGOVD, Cgroup, check, failures, mounts, skip  # noqa: E402
from live_governor import read_file as rd, write_file as wr  # noqa: E402

NAMES = ["bwgov-test-cont-a", "bwgov-test-cont-b"]
V1_CPUSET = "/sys/fs/cgroup/cpuset"


def cpulist(s):
    out = set()
    for part in s.split(","):
        if part:
            a, _, b = part.partition("-")
            out |= set(range(int(a), int(b or a) + 1))
    return out


class Group:
    def __init__(self, name, layout):
        self.cg = Cgroup(name)
        self.name = name
        self.cpuset = None
        if layout == "v2":
            self.cpuset = self.cg.bw
        elif os.path.isdir(V1_CPUSET):
            self.cpuset = os.path.join(V1_CPUSET, name)
            os.mkdir(self.cpuset)
            for f in ("cpuset.cpus", "cpuset.mems"):
                wr(os.path.join(self.cpuset, f), rd(os.path.join(V1_CPUSET, f)))
        if layout == "v2":
            wr(os.path.join(self.cg.bw, "cpu.weight"), 1000)
        else:
            wr(os.path.join(self.cg.bw, "cpu.shares"), 10240)
        self.freeze_file = os.path.join(self.cg.v2, "cgroup.freeze")
        self.cpus_file = os.path.join(self.cpuset, "cpuset.cpus") if self.cpuset else None
        self.procs = []

    def spin(self, n=2):
        extra = [os.path.join(self.cpuset, "cgroup.procs")] if self.cpuset and self.cpuset != self.cg.bw else []
        targets = [os.path.join(self.cg.bw, "cgroup.procs")] + \
            ([os.path.join(self.cg.v2, "cgroup.procs")] if self.cg.v2 != self.cg.bw else []) + extra

        def enter():
            for t in targets:
                wr(t, os.getpid())
        for _ in range(n):
            self.procs.append(subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=enter,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def frozen(self):
        return rd(self.freeze_file) == "1"

    def levers(self):
        return {"freeze": rd(self.freeze_file), "cpus": rd(self.cpus_file) if self.cpus_file else None}

    def cleanup(self):
        # Thaw first (our own cgroup), so that the spinners can die.
        try:
            if self.frozen():
                wr(self.freeze_file, 0)
        except OSError:
            pass
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        if self.cpuset and self.cpuset != self.cg.bw and os.path.isdir(self.cpuset):
            for _ in range(50):
                try:
                    os.rmdir(self.cpuset)
                    break
                except OSError:
                    time.sleep(0.05)
        self.cg.remove()


class Daemon:
    def __init__(self, base):
        self.base = base
        self.proc = None
        for d in ("conf", "state", "run"):
            os.makedirs(os.path.join(base, d), exist_ok=True)

    def configure(self, contention, units, interval="300ms"):
        with open(os.path.join(self.base, "conf", "bwgov.conf"), "w") as f:
            f.write("[Governor]\nHostPressureLimit=0%\n")
            if contention:
                f.write(f"Contention={contention}\nContentionInterval={interval}\n")
        for n in NAMES:
            d = os.path.join(self.base, "conf", n + ".d")
            if n in units:
                os.makedirs(d, exist_ok=True)
                wr(os.path.join(d, "10-live.conf"), f"[Bandwidth]\nCgroup={n}\nClass=throughput\n")
            elif os.path.isdir(d):
                os.unlink(os.path.join(d, "10-live.conf"))
                os.rmdir(d)

    def start(self):
        self.log = open(os.path.join(self.base, "bwgovd.log"), "a")
        self.proc = subprocess.Popen([BWGOVD, "--config-dir", os.path.join(self.base, "conf"),
                                      "--state-dir", os.path.join(self.base, "state"),
                                      "--runtime-dir", os.path.join(self.base, "run"), "--log-level", "debug"],
                                     stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)

    def ctl(self, *args):
        return subprocess.run([BWGOVCTL, *args, "--socket", os.path.join(self.base, "run", "io.bwgov.Governor")],
                              capture_output=True, text=True, timeout=30)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None

    def kill(self):
        self.proc.kill()
        self.proc.wait()


def wait_for(pred, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def phase_gang(d, groups, orig):
    a, b = groups
    d.configure("gang", NAMES)
    d.start()
    wait_for(lambda: a.frozen() or b.frozen(), 10)
    seen = {"a": 0, "b": 0, "both": 0}
    switches, last = 0, None
    t_end = time.monotonic() + 5
    while time.monotonic() < t_end:
        fa, fb = a.frozen(), b.frozen()
        seen["a"] += fa
        seen["b"] += fb
        seen["both"] += fa and fb
        cur = (fa, fb)
        if last is not None and cur != last:
            switches += 1
        last = cur
        time.sleep(0.03)
    check(seen["a"] > 0 and seen["b"] > 0, f"gang: both groups are frozen in turn (samples frozen: a {seen['a']}, "
          f"b {seen['b']})")
    check(seen["both"] == 0, f"gang: never both frozen at once ({seen['both']} samples)")
    check(switches >= 6, f"gang: the freezers alternate ({switches} changes in 5 s of 300 ms slots)")

    p = d.ctl("pause", NAMES[0])
    check(p.returncode == 0, f"bwgovctl pause {NAMES[0]} ({p.returncode} {p.stderr.strip()})")
    thawed = wait_for(lambda: not a.frozen(), 1.0)
    stays = thawed and not any(a.frozen() or time.sleep(0.05) for _ in range(30))
    check(thawed and stays, "pause: the paused unit is thawed at once and stays thawed")
    d.ctl("resume", NAMES[0])
    rc = d.stop()
    check(rc == 0, f"gang: bwgovd stops cleanly ({rc})")
    check(all(g.levers() == orig[g.name] for g in groups),
          f"gang: after the stop every freezer and cpuset is as before ({[g.levers() for g in groups]} vs {orig})")


def phase_pin(d, groups, orig, host):
    a, b = groups
    if not a.cpus_file:
        print("SKIP (pin): no cpuset for these cgroups")
        return
    d.configure("pin", NAMES)
    d.start()
    pinned = wait_for(lambda: all(g.levers()["cpus"] != orig[g.name]["cpus"] for g in groups), 10)
    sets = [cpulist(g.levers()["cpus"]) for g in groups]
    check(pinned, f"pin: both groups get their own cpuset ({[g.levers()['cpus'] for g in groups]})")
    check(all(sets) and not (sets[0] & sets[1]) and (sets[0] | sets[1]) <= host,
          f"pin: the cpusets are disjoint, non-empty, within the host's CPUs {sorted(host)} ({sets})")
    check(not a.frozen() and not b.frozen(), "pin: nothing frozen")

    d.configure("pin", NAMES[1:])
    d.signal(signal.SIGHUP)
    check(wait_for(lambda: a.levers() == orig[a.name], 3),
          f"unconfigure: the dropped unit's cpuset is back ({a.levers()} vs {orig[a.name]})")
    rc = d.stop()
    check(rc == 0, f"pin: bwgovd stops cleanly ({rc})")
    check(all(g.levers() == orig[g.name] for g in groups),
          f"pin: after the stop every cpuset is as before ({[g.levers() for g in groups]})")


def phase_sigkill(d, groups, orig):
    d.configure("gang", NAMES)
    d.start()
    held = wait_for(lambda: any(g.frozen() for g in groups), 10)
    d.kill()
    check(held, "SIGKILL: bwgovd held a group frozen when it was killed")
    check(any(g.frozen() for g in groups) or not held, "SIGKILL: the frozen group stays frozen behind the dead daemon")
    d.configure(None, NAMES)        # the default: Contention=share
    d.start()
    check(wait_for(lambda: not any(g.frozen() for g in groups), 5),
          "restart: the new bwgovd thaws what the killed one left frozen")
    rc = d.stop()
    check(rc == 0, f"restart: bwgovd stops cleanly ({rc})")
    check(all(g.levers() == orig[g.name] for g in groups),
          f"SIGKILL + restart + stop: every freezer and cpuset as before ({[g.levers() for g in groups]})")


def main():
    import tempfile
    if os.geteuid() != 0:
        skip("needs root (creates cgroups)")
    layout, bw_root, v2_root = mounts()
    if layout is None:
        skip("no cgroup CPU controller")
    if not v2_root:
        skip("no cgroup2 mount: no cgroup.freeze for the freezer lever")
    if layout == "v2":
        ctl = rd(os.path.join(v2_root, "cgroup.controllers")).split()
        if "cpuset" not in ctl:
            skip("cgroup v2 without the cpuset controller")
        sc = os.path.join(v2_root, "cgroup.subtree_control")
        if "cpuset" not in rd(sc).split():
            wr(sc, "+cpuset")
    for n in NAMES:
        for root in {bw_root, v2_root, V1_CPUSET if layout != "v2" else None} - {None}:
            if os.path.exists(os.path.join(root, n)):
                skip(f"{os.path.join(root, n)} exists (a killed earlier run?): remove it first")
    host = cpulist(rd("/sys/devices/system/cpu/online"))

    groups = []
    base = tempfile.mkdtemp(prefix="bwgov-live-contention-")
    d = Daemon(base)
    try:
        for n in NAMES:
            groups.append(Group(n, layout))
        for g in groups:
            g.spin(2)
        orig = {g.name: g.levers() for g in groups}
        time.sleep(1)
        phase_gang(d, groups, orig)
        phase_pin(d, groups, orig, host)
        phase_sigkill(d, groups, orig)
    finally:
        if d.proc and d.proc.poll() is None:
            d.kill()
        for g in groups:
            g.cleanup()
    if failures:
        print(f"{len(failures)} check(s) failed; bwgovd's log: {base}/bwgovd.log")
        return 1
    subprocess.run(["rm", "-rf", base])
    return 0


if __name__ == "__main__":
    sys.exit(main())
