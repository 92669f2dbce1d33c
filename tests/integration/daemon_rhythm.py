#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The rhythm of bwgovd's timers, seen from outside (issue 17, finding 6:
Interval=1s ticked about every 1.25 s). On a static simulated tree, inotify
(IN_ACCESS) timestamps every read of a unit's cpu.stat, which each of its
samples reads, of the host pressure file, which the host timer reads
every ActiveInterval=, and of the host's /proc/stat stand-in, which it reads
once per Interval= while the host pressure is below half its limit (here it
is none). Over 20 periods each must be within 1 % of what the
configuration says. No root.
"""
import ctypes
import os
import select
import struct
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import varlink_common as vc  # noqa: E402

IN_ACCESS = 0x1
PERIODS = 20
SKIP = 2                        # adoption's ticks come at their own times


class Inotify:
    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.paths = {}

    def watch(self, path):
        wd = self.libc.inotify_add_watch(self.fd, path.encode(), IN_ACCESS)
        if wd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
        self.paths[wd] = path
        return wd

    def read(self, timeout):
        """[(wd, monotonic time)] of the reads seen within timeout."""
        out = []
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return out
        t = time.monotonic()
        buf = os.read(self.fd, 65536)
        i = 0
        while i < len(buf):
            wd, mask, _, n = struct.unpack_from("iIII", buf, i)
            out.append((wd, t))
            i += 16 + n
        return out

    def close(self):
        os.close(self.fd)


def events(times, merge=0.02):
    """One event per burst of reads (a sample may read a file twice)."""
    out = []
    for t in times:
        if not out or t - out[-1] > merge:
            out.append(t)
    return out


class Rhythm(unittest.TestCase):
    def test_interval_and_active_interval(self):
        if not os.path.exists(vc.BWGOVD):
            self.skipTest(f"bwgovd not built at {vc.BWGOVD}")
        sd = vc.StaticDaemon(units={"app.slice": dict(quota=50000, burst=0, conf="CreditMax=30s\n")},
                             global_conf="[Governor]\nInterval=1s\nActiveInterval=250ms\nMetricsInterval=10s\n")
        sd.prepare()
        self.addCleanup(sd.cleanup)
        ino = Inotify()
        self.addCleanup(ino.close)
        unit = ino.watch(os.path.join(sd.base, "cg", "app.slice", "cpu.stat"))
        host = ino.watch(os.path.join(sd.base, "host-pressure"))
        stat = ino.watch(os.path.join(sd.base, "host-stat"))
        sd.d = vc.df.Daemon(sd.base)
        sd.d.start()
        seen = {unit: [], host: [], stat: []}
        deadline = time.monotonic() + (SKIP + PERIODS + 3) * 1.0 + 10
        while (len(events(seen[unit])) < SKIP + PERIODS + 1 or len(events(seen[stat])) < SKIP + PERIODS + 1) \
                and time.monotonic() < deadline:
            self.assertIsNone(sd.d.proc.poll(), "bwgovd exited")
            for wd, t in ino.read(0.5):
                if wd in seen:
                    seen[wd].append(t)
        for wd, interval, name in ((unit, 1.0, "Interval=1s (the unit's samples)"),
                                   (host, 0.25, "ActiveInterval=250ms (the host timer)"),
                                   (stat, 1.0, "Interval=1s (the host's CPU time while the pressure is low)")):
            ev = events(seen[wd])[SKIP:]
            self.assertGreaterEqual(len(ev), PERIODS + 1, f"{name}: {len(ev)} reads")
            period = (ev[PERIODS] - ev[0]) / PERIODS
            gaps = ", ".join(f"{b - a:.3f}" for a, b in zip(ev, ev[1:PERIODS + 1]))
            self.assertAlmostEqual(period, interval, delta=interval / 100,
                                   msg=f"{name}: period {period:.4f} s over {PERIODS}; gaps {gaps}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
