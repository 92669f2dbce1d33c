#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A simulated kernel for bwgovd's overhead benchmark.

Builds a fixture tree that bwgovd --cgroup-root accepts as a cgroup v2 tree
(cgroup.controllers with "cpu" at the top, one directory per cgroup with
cpu.max, cpu.max.burst, cpu.stat and cpu.pressure as regular files) and then
plays the kernel: once per --tick it advances every cgroup's counters from a
demand model, clipped by the quota bwgovd last wrote.

Counters are written in place with zero-padded fixed-width numbers, so a file
never changes length and bwgovd's pread() on its long-lived fds always sees a
whole file (the parsers accept leading zeros).

Demand model (deterministic from --seed): a share --busy of the cgroups
alternates --high CPUs for half of --cycle seconds and --low for the other
half (phase spread over the cycle), so they are throttled, get raised and
decay again; the rest run a constant --steady CPUs, under their baseline,
which is the steady state bwgovd should leave alone.

Usage:
  simkernel.py create --root DIR --count N [--quota-usec Q --period-usec P]
  simkernel.py run    --root DIR --count N [--tick S] [--busy F] ...
The run loop ends on SIGTERM/SIGINT and prints one JSON line of totals.
"""

import argparse
import json
import os
import random
import signal
import sys
import time

WIDTH = 15
PREFIX = "bwgov-ovh-"

STAT_FMT = ("usage_usec {0:015d}\nuser_usec {1:015d}\nsystem_usec {2:015d}\n"
            "nr_periods {3:015d}\nnr_throttled {4:015d}\nthrottled_usec {5:015d}\n"
            "nr_bursts {6:015d}\nburst_usec {7:015d}\n")
PSI_FMT = ("some avg10=0.00 avg60=0.00 avg300=0.00 total={0:015d}\n"
           "full avg10=0.00 avg60=0.00 avg300=0.00 total={1:015d}\n")


def cgroup_name(i):
    return f"{PREFIX}{i}"


def write_new(path, text):
    with open(path, "w") as f:
        f.write(text)


def create(root, count, quota_usec, period_usec):
    os.makedirs(root, exist_ok=True)
    write_new(os.path.join(root, "cgroup.controllers"), "cpu\n")
    write_new(os.path.join(root, "cgroup.subtree_control"), "cpu\n")
    stat0 = STAT_FMT.format(0, 0, 0, 0, 0, 0, 0, 0)
    psi0 = PSI_FMT.format(0, 0)
    for i in range(count):
        d = os.path.join(root, cgroup_name(i))
        os.makedirs(d, exist_ok=True)
        write_new(os.path.join(d, "cpu.max"), f"{quota_usec} {period_usec}\n")
        write_new(os.path.join(d, "cpu.max.burst"), "0\n")
        write_new(os.path.join(d, "cpu.stat"), stat0)
        write_new(os.path.join(d, "cpu.pressure"), psi0)
        write_new(os.path.join(d, "cgroup.procs"), "")


def write_in_place(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def read_quota(path, default):
    try:
        with open(path) as f:
            q, p = f.read().split()
        return (None if q == "max" else int(q)), int(p)
    except (OSError, ValueError):
        return default


class Group:
    __slots__ = ("dir", "busy", "phase", "usage", "periods", "nr_thr", "thr_us",
                 "some", "full", "quota", "period")

    def __init__(self, d, busy, phase, quota, period):
        self.dir = d
        self.busy = busy
        self.phase = phase
        self.usage = self.periods = self.nr_thr = self.thr_us = 0
        self.some = self.full = 0.0
        self.quota = quota
        self.period = period


def demand_plan(count, busy_share, cycle, seed):
    """[(busy, phase_s)] per cgroup, the same for the same arguments."""
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        busy = rnd.random() < busy_share
        out.append((busy, rnd.random() * cycle))
    return out


def run(a):
    groups = [Group(os.path.join(a.root, cgroup_name(i)), busy, phase, a.quota_usec, a.period_usec)
              for i, (busy, phase) in enumerate(demand_plan(a.count, a.busy, a.cycle, a.seed))]

    stop = False

    def on_signal(signo, frame):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    t0 = time.monotonic()
    last = t0
    passes = 0
    throttled_groups_max = 0
    next_tick = t0 + a.tick
    while not stop:
        now = time.monotonic()
        if now < next_tick:
            time.sleep(min(next_tick - now, 0.2))
            continue
        next_tick += a.tick
        if next_tick < now:
            next_tick = now + a.tick
        dt = now - last
        last = now
        el = now - t0
        throttled_groups = 0
        for g in groups:
            if g.busy:
                # Only busy groups can be raised: read back what bwgovd wrote.
                q, p = read_quota(os.path.join(g.dir, "cpu.max"), (g.quota, g.period))
                g.quota, g.period = q, p
                high = ((el + g.phase) % a.cycle) < a.cycle / 2
                demand = a.high if high else a.low
            else:
                demand = a.steady
            cap = float("inf") if g.quota is None else g.quota / g.period
            used = min(demand, cap)
            thr_share = 0.0 if demand <= cap else 1.0 - cap / demand
            periods = int(dt * 1e6 / g.period)
            g.usage += int(used * dt * 1e6)
            g.periods += periods
            if thr_share > 0:
                throttled_groups += 1
                g.nr_thr += periods
                g.thr_us += int(thr_share * dt * 1e6)
                g.full += thr_share * dt * 1e6
            g.some += thr_share * dt * 1e6
            write_in_place(os.path.join(g.dir, "cpu.stat"),
                           STAT_FMT.format(g.usage, g.usage * 9 // 10, g.usage // 10,
                                           g.periods, g.nr_thr, g.thr_us, 0, 0))
            write_in_place(os.path.join(g.dir, "cpu.pressure"), PSI_FMT.format(int(g.some), int(g.full)))
        passes += 1
        throttled_groups_max = max(throttled_groups_max, throttled_groups)

    print(json.dumps({"program": "simkernel", "count": a.count, "passes": passes,
                      "busy": sum(g.busy for g in groups),
                      "throttled_groups_max": throttled_groups_max,
                      "wall_s": round(time.monotonic() - t0, 3)}), flush=True)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("create", "run"):
        s = sub.add_parser(name, help="make the fixture tree" if name == "create" else
                           "play the kernel on it until SIGTERM or SIGINT")
        s.add_argument("--root", required=True, help="the fixture tree (bwgovd --cgroup-root=)")
        s.add_argument("--count", type=int, required=True, help="cgroups in the tree")
        s.add_argument("--quota-usec", type=int, default=50000, help="each cgroup's quota, µs (default 50000)")
        s.add_argument("--period-usec", type=int, default=100000, help="each cgroup's period, µs (default 100000)")
        if name == "run":
            s.add_argument("--tick", type=float, default=1.0, help="seconds between counter updates")
            s.add_argument("--busy", type=float, default=0.05, help="share of cgroups with a square-wave load")
            s.add_argument("--cycle", type=float, default=40.0, help="square-wave period, seconds")
            s.add_argument("--high", type=float, default=0.8, help="CPUs during the high half")
            s.add_argument("--low", type=float, default=0.1, help="CPUs during the low half")
            s.add_argument("--steady", type=float, default=0.3, help="CPUs of the other cgroups")
            s.add_argument("--seed", type=int, default=1, help="seed of the demand plan (default 1)")
    a = ap.parse_args(argv)
    if a.count < 1:
        ap.error("--count must be at least 1")
    if a.cmd == "create":
        create(a.root, a.count, a.quota_usec, a.period_usec)
        return 0
    return run(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
