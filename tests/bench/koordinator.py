#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A Koordinator-style CPU Burst comparator (CFS quota burst), for the bench.

Implements the documented law of Koordinator's CPU Burst policy
("cfsQuotaBurst"): once per --interval (1 s), if the cgroup was throttled at
all since the previous look (nr_throttled grew), raise the quota by
--step (20 %) of its current value, capped at --cap (300 %) of the baseline;
otherwise lower it by --step, never below the baseline. Written from that
description for this benchmark, not derived from Koordinator's code; its
node-level safety (resetting every boost when node utilisation crosses
sharePoolThresholdPercent) is left out, as it only acts on a busy node.

A good citizen: it reads the current value before every write and writes only
a value that differs; a value it did not write (someone else changed the
quota) becomes the new baseline. On SIGTERM/SIGINT it restores the baseline
(read first, write only if needed) and prints one JSON line:
  program, interval_s, step, cap_percent, baseline_quota_usec, period_usec,
  loops, raises, lowers, writes, identical_writes (always 0, by
  construction), external_changes, max_quota_usec, cpu_s (its own CPU time).

  koordinator.py --dir /sys/fs/cgroup/cpu/bwgov-bench-x            (v1)
  koordinator.py --dir /sys/fs/cgroup/bwgov-bench-x --v2           (v2)
"""

import argparse
import json
import os
import signal
import sys
import time


class Files:
    def __init__(self, d, v2):
        self.d = d
        self.v2 = v2

    def _read(self, name):
        with open(os.path.join(self.d, name)) as f:
            return f.read()

    def _write(self, name, text):
        fd = os.open(os.path.join(self.d, name), os.O_WRONLY | os.O_TRUNC)   # as a shell redirection does
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def read_quota(self):
        """(quota_usec or None when unlimited, period_usec)."""
        if self.v2:
            q, p = self._read("cpu.max").split()
            return (None if q == "max" else int(q)), int(p)
        q = int(self._read("cpu.cfs_quota_us"))
        return (None if q < 0 else q), int(self._read("cpu.cfs_period_us"))

    def write_quota(self, quota, period):
        if self.v2:
            self._write("cpu.max", f"{quota} {period}")
        else:
            self._write("cpu.cfs_quota_us", str(quota))

    def nr_throttled(self):
        for line in self._read("cpu.stat").splitlines():
            k, _, v = line.partition(" ")
            if k == "nr_throttled":
                return int(v)
        return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="the cgroup's directory in the bandwidth hierarchy")
    ap.add_argument("--v2", action="store_true", help="cgroup v2 files (cpu.max) instead of v1 (cpu.cfs_*)")
    ap.add_argument("--interval", type=float, default=1.0, help="loop period, seconds (1)")
    ap.add_argument("--step", type=float, default=0.2, help="relative quota step (0.2)")
    ap.add_argument("--cap", type=float, default=300.0, help="ceiling, percent of the baseline quota (300)")
    a = ap.parse_args(argv)

    fs = Files(a.dir, a.v2)
    base, period = fs.read_quota()
    if base is None:
        print("koordinator.py: the cgroup has no quota to govern", file=sys.stderr)
        return 1

    st = dict(program="koordinator.py", interval_s=a.interval, step=a.step, cap_percent=a.cap,
              baseline_quota_usec=base, period_usec=period, loops=0, raises=0, lowers=0,
              writes=0, identical_writes=0, external_changes=0, max_quota_usec=base)
    ours = base
    stop = False

    def on_signal(signo, frame):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def put(target):
        """Read before write; returns the value in force afterwards."""
        nonlocal ours
        cur, per = fs.read_quota()
        if cur == target and per == period:
            return cur
        fs.write_quota(target, period)
        st["writes"] += 1
        ours = target
        st["max_quota_usec"] = max(st["max_quota_usec"], target)
        return target

    last_thr = fs.nr_throttled()
    next_t = time.monotonic() + a.interval
    while not stop:
        now = time.monotonic()
        if now < next_t:
            time.sleep(min(next_t - now, 0.1))
            continue
        # A ticker, as Go's time.Ticker is: ticks missed while it was held up are
        # dropped, not run back to back (they would see no new throttling and lower).
        next_t += a.interval
        if next_t <= now:
            next_t = now + a.interval
        st["loops"] += 1
        try:
            cur, per = fs.read_quota()
            thr = fs.nr_throttled()
        except OSError:
            break           # the cgroup went away
        if cur != ours or per != period:
            # Someone else wrote the quota: theirs is the new baseline.
            st["external_changes"] += 1
            base = ours = cur if cur is not None else base
            period = per
            last_thr = thr
            continue
        cap = int(base * a.cap / 100)
        if thr > last_thr:
            target = min(int(cur * (1 + a.step)), cap)
            if target > cur:
                st["raises"] += 1
        else:
            target = max(int(cur * (1 - a.step)), base)
            if target < cur:
                st["lowers"] += 1
        last_thr = thr
        if target != cur:
            try:
                put(target)
            except OSError as e:
                print(f"koordinator.py: write failed: {e}", file=sys.stderr)

    try:
        cur, per = fs.read_quota()
        if cur == ours and per == period and cur != base:
            put(base)
    except OSError:
        pass
    t = os.times()
    st["cpu_s"] = round(t.user + t.system, 4)
    print(json.dumps(st), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
