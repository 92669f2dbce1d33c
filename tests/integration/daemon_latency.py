#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Latency protection's floor on a fixture tree (no root, issue 35): a
Class=latency unit and a Class=best-effort unit whose simulated demand
starts at two CPUs (the host's CPUs are this machine's). The best-effort
unit's cpu.idle is written within a second of its start, from the
neighbours' demand alone (the fixture has no run-queue telemetry and the
latency unit misses nothing), stays while the demand does, and is put
back within 10 s once the demand is gone; SIGTERM puts everything back.
A weight someone else writes while bwgovd holds it is theirs: kept, and the
value put back. About 30 s."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_fixture as df  # noqa: E402

NCPUS = os.cpu_count() or 1


def read(path):
    with open(path) as f:
        return f.read().strip()


class TestFloorFromNeighbours(df.DaemonTest):
    global_conf = "[Governor]\nInterval=100ms\nMetricsInterval=100ms\nTelemetry=no\n"
    units = {
        "lat.slice": dict(quota=100000, burst=0, conf="Class=latency\nLatencyTarget=1ms\n"),
        "be.slice": dict(quota=100000 * (NCPUS + 1), burst=0, conf="Class=best-effort\n"),
    }

    def prepare(self):
        for name in self.units:
            for f, v in (("cpu.weight", "100"), ("cpu.idle", "0")):
                with open(os.path.join(self.base, "cg", name, f), "w") as fh:
                    fh.write(v + "\n")

    def idle(self):
        return read(os.path.join(self.base, "cg", "be.slice", "cpu.idle"))

    def test_floor_at_once_and_released_when_gone(self):
        d = self.d
        d.wait_ticks("lat.slice", 3)
        d.wait_ticks("be.slice", 3)
        self.demand("lat.slice", 0.2)
        d.wait_ticks("lat.slice", 2)
        self.assertEqual(self.idle(), "0", "no neighbour: be.slice not in cpu.idle")
        self.assertEqual(d.metric("bwgov_latency_level", "lat.slice"), 0)
        self.demand("be.slice", float(NCPUS))
        t0 = df.time.monotonic()
        d.wait_for(lambda: self.idle() == "1", 5, "be.slice in cpu.idle")
        first = df.time.monotonic() - t0
        # One fast sample (50 ms) after the usage shows, and the
        # simulator's 10 ms steps; a second leaves room for a loaded host.
        self.assertLess(first, 1.0, f"cpu.idle after {first:.2f}s")
        self.assertIn("fills the host: protection up to \"idle\" at once", d.logtext())
        # The same step writes be.slice's cpu.idle, then lat.slice's weight.
        d.wait_for(lambda: read(os.path.join(self.base, "cg", "lat.slice", "cpu.weight")) == "1600", 1,
                   "lat.slice's weight at weight-high (16 x 100)")
        d.wait_for(lambda: d.metric("bwgov_latency_level", "lat.slice") == 5, 5, "level 5 in the metrics")
        changes = d.metric("bwgov_latency_changes_total", "lat.slice")
        df.time.sleep(4)        # more than the 3 s a release needs
        self.assertEqual(self.idle(), "1", "the demand still there: still in cpu.idle")
        self.assertEqual(d.metric("bwgov_latency_changes_total", "lat.slice"), changes, "no change meanwhile")
        self.demand("be.slice", 0.0)
        t1 = df.time.monotonic()
        d.wait_for(lambda: self.idle() == "0", 12, "be.slice out of cpu.idle")
        released = df.time.monotonic() - t1
        self.assertLess(released, 10.0, f"released after {released:.1f}s")
        self.assertGreaterEqual(released, 2.5, f"released after {released:.1f}s, before the 3 s calm")
        # The weight from the log: a regular file is not truncated as a
        # cgroup file is ("100" over "1600" reads "1000").
        d.wait_for(lambda: "lat.slice: cpu.weight 1600 -> 100 (latency-met)" in d.logtext(), 2,
                   "lat.slice's weight back")
        self.assertIn('protection down to "none"', d.logtext())
        with open(os.path.join(self.base, "cg", "lat.slice", "cpu.weight"), "w") as f:
            f.write("100\n")       # what the kernel's file would read
        self.demand("be.slice", float(NCPUS))
        d.wait_for(lambda: self.idle() == "1", 5, "be.slice in cpu.idle again")
        d.signal(15)
        self.assertEqual(d.wait(), 0)
        self.assertEqual(self.idle(), "0", "SIGTERM: cpu.idle back")
        self.assertIn("lat.slice: cpu.weight 1600 -> 100 (stop)", d.logtext(), "SIGTERM: the weight back")

    def weight(self):
        return read(os.path.join(self.base, "cg", "lat.slice", "cpu.weight"))

    def test_someone_elses_weight_is_kept(self):
        """An operator changes the weight bwgovd holds (systemctl set-property
        CPUWeight=, say): theirs stays while the protection lasts, is not
        written over when the protection ends, and is the value put back
        when bwgovd protects the unit again and then stops."""
        d = self.d
        d.wait_ticks("lat.slice", 3)
        d.wait_ticks("be.slice", 3)
        self.demand("lat.slice", 0.2)
        self.demand("be.slice", float(NCPUS))
        d.wait_for(lambda: self.weight() == "1600", 5, "lat.slice's weight at weight-high (16 x 100)")
        with open(os.path.join(self.base, "cg", "lat.slice", "cpu.weight"), "w") as f:
            f.write("500\n")
        d.wait_for(lambda: "lat.slice: cpu.weight changed by someone else to 500 while bwgovd held it at 1600"
                   in d.logtext(), 5, "the change noticed")
        df.time.sleep(1.5)      # 15 intervals, the demand still there
        self.assertEqual(self.weight(), "500", "theirs kept while the protection lasts")
        self.assertNotIn("cpu.weight 500 ->", d.logtext(), "not set again while yielded")
        self.assertEqual(self.idle(), "1", "the other levers stay")
        self.demand("be.slice", 0.0)
        d.wait_for(lambda: self.idle() == "0", 12, "be.slice out of cpu.idle")
        df.time.sleep(1.0)
        self.assertEqual(self.weight(), "500", "theirs kept when the protection ends")
        self.assertNotIn("cpu.weight 1600 -> 100", d.logtext(), "bwgovd's original not written over theirs")
        # Needed again: set anew from their value, and put back to it.
        self.demand("be.slice", float(NCPUS))
        d.wait_for(lambda: "lat.slice: cpu.weight 500 -> " in d.logtext(), 5, "the weight set again from 500")
        self.assertNotEqual(self.weight(), "500")
        d.signal(15)
        self.assertEqual(d.wait(), 0)
        self.assertEqual(self.weight(), "500", "SIGTERM: their weight back")


if __name__ == "__main__":
    unittest.main(verbosity=2)
