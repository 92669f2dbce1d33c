#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A unit's cgroup made while bwgovd runs is governed moments after, not up
to an Interval= later: bwgovd watches the parent directory of an absent
unit's cgroup with inotify (cgwatch.h). Interval=5s here, so the look once
per interval cannot be what finds it. The cgroup is made whole elsewhere
and renamed into place (a real cgroupfs makes its files with the mkdir).
No root: a fixture tree of regular files.
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_fixture as df  # noqa: E402
import varlink_common as vc  # noqa: E402

CONF = "[Governor]\nInterval=5s\nMetricsInterval=100ms\n"


class CgroupWatch(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(vc.BWGOVD):
            self.skipTest(f"{vc.BWGOVD} not built")
        units = {"new.slice": dict(quota=None, burst=0, conf=""),
                 "outer-inner.slice": dict(quota=None, burst=0, conf="")}
        self.daemon = vc.StaticDaemon(units=units, global_conf=CONF).start()
        self.base = self.daemon.base
        self.staging = os.path.join(self.base, "staging")
        os.makedirs(self.staging)
        # Past the first look at the absent units.
        self.daemon.d.wait_for(lambda: os.path.exists(self.daemon.socket_path), 10, "the socket")
        time.sleep(0.5)

    def tearDown(self):
        self.daemon.cleanup()

    def make(self, path):
        """The cgroup made elsewhere, then renamed into place; the time."""
        name = os.path.basename(path)
        df.SimCgroup(self.staging, name, 50000, 0)
        t = time.monotonic()
        os.rename(os.path.join(self.staging, name), os.path.join(self.base, "cg", path))
        return t

    def governed_within(self, unit, t0, limit):
        self.daemon.d.wait_for(lambda: f"{unit}: governing cgroup" in self.daemon.logtext(), limit + 1,
                               f"{unit} governed")
        took = time.monotonic() - t0
        self.assertLess(took, limit, f"{unit} governed after {took:.2f}s (Interval=5s)")

    def test_made_cgroup_is_governed_at_once(self):
        t0 = self.make("new.slice")
        self.governed_within("new.slice", t0, 1.5)

    def test_parent_made_later(self):
        # The parent does not exist yet: nothing to watch, the look once per
        # interval finds the parent's child; once the parent is there, its
        # child made later is watched for.
        os.makedirs(os.path.join(self.base, "cg", "outer.slice"))
        time.sleep(5.5)                 # one interval: the unit now watches outer.slice
        t0 = self.make("outer.slice/outer-inner.slice")
        self.governed_within("outer-inner.slice", t0, 1.5)


class OneUnitPerCgroup(unittest.TestCase):
    """Issue 17, finding 1: a service found by name whose cgroup another
    unit's Cgroup= names is governed once (the configuration cannot tell:
    the service is searched for at run time)."""

    def test_service_and_cgroup_setting(self):
        if not os.path.exists(vc.BWGOVD):
            self.skipTest(f"{vc.BWGOVD} not built")
        units = {"foo.service": dict(quota=50000, burst=0, conf=""),
                 "x": dict(quota=None, burst=0, conf="Cgroup=foo.service\n")}
        with vc.StaticDaemon(units=units, global_conf="[Governor]\nInterval=100ms\nMetricsInterval=100ms\n") as d:
            d.d.wait_for(lambda: "governed by unit" in d.logtext(), 10, "the second unit refused")
            time.sleep(1)
            log = d.logtext()
            self.assertEqual(log.count("governed by unit"), 1, "said once, not every tick")
            self.assertEqual(log.count("governing cgroup foo.service"), 1)
            # Each named with where its cgroup is named (issue 30).
            self.assertRegex(log, r"(x: cgroup foo\.service \(\S+/x\.d/10-test\.conf:\d+\) is governed by unit "
                             r"foo\.service \(\S+/foo\.service\.d/10-test\.conf\)|foo\.service: cgroup foo\.service "
                             r"\(\S+\) is governed by unit x \(\S+:\d+\)): not governing it twice")


if __name__ == "__main__":
    unittest.main(verbosity=2)
