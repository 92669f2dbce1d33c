#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A Subgroup= unit whose own cgroup (the scope) carries the same quota, as
podman 5 with crun 1.21 lays a container out (libpod-<id>.scope and its
"container" subgroup, both at --cpus), on the simulated kernel: the scope is
raised with the subgroup while the credit lasts, lowered with it when the
credit is spent and on SIGTERM; a scope at "max" (podman 4) is left alone;
one holding a limit of someone else's is never written and keeps the
headroom under it; one with another child cgroup is not tied either. No
root.
"""
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_fixture as df  # noqa: E402

SCOPE = "machine.slice/app.scope"
UNIT = "app.scope"


def read_quota(path):
    with open(os.path.join(path, "cpu.max")) as f:
        q, p = f.read().split()
    return None if q == "max" else int(q), int(p)


def write_quota(path, quota, period=100000):
    df.write_in_place(os.path.join(path, "cpu.max"), f"{quota} {period}\n")


class ScopeTest(df.DaemonTest):
    """The units map is the simulator's: the subgroup, which bwgovd governs
    as unit app.scope with Subgroup=container."""
    units = {}
    conf = "[Bandwidth]\nSubgroup=container\nCreditMax=2s\n"
    scope_quota = "50000"

    def setUp(self):
        # daemon_fixture's setUp, with the scope and the unit's drop-in
        # under the unit's name rather than the cgroup's.
        self.units = {SCOPE + "/container": dict(quota=50000, burst=0, conf="")}
        real_prepare = self.prepare

        def prepare():
            # The scope's files, as the kernel has them; its counters stay still.
            self.scope = df.SimCgroup(os.path.join(self.base, "cg"), SCOPE, self.scope_quota, 0).dir
            d = os.path.join(self.base, "conf", UNIT + ".d")
            os.makedirs(d)
            with open(os.path.join(d, "10-test.conf"), "w") as f:
                f.write(self.conf)
            # The drop-in directory made for the subgroup's path names no unit.
            shutil.rmtree(os.path.join(self.base, "conf", SCOPE.split("/")[0]))
            real_prepare()
        self.prepare = prepare
        super().setUp()
        self.sub = self.cg[SCOPE + "/container"]

    def scope_q(self):
        return read_quota(self.scope)[0]

    def sub_q(self):
        return self.sub.read_max()[0]


class TestTied(ScopeTest):
    def test_raised_and_lowered_with_the_subgroup(self):
        d = self.d
        # Full credit: both at CPUQuotaMax= (4 x 50000 by default), the scope first.
        d.wait_for(lambda: self.sub_q() == df.REST and self.scope_q() == df.REST, 10,
                   f"the subgroup and its scope raised to {df.REST}")
        log = d.logtext()
        self.assertIn("its scope machine.slice/app.scope holds its quota as well", log)
        self.assertIn("scope-follows", log)
        # Busy: the credit (2 CPU-s at 0.4 CPU over the contract) runs out;
        # both back at exactly 50000.
        self.demand(SCOPE + "/container", 0.9)
        d.wait_for(lambda: self.sub_q() == 50000 and self.scope_q() == 50000, 20,
                   "both back at the contract once the credit is spent")
        # Idle again: the credit comes back, and the headroom with it.
        self.demand(SCOPE + "/container", 0.0)
        d.wait_for(lambda: self.sub_q() > 50000 and self.scope_q() == self.sub_q(), 20,
                   "raised together again")
        # SIGTERM: the contract on both.
        d.signal(15)
        self.assertEqual(d.wait(10), 0)
        self.assertEqual((self.sub_q(), self.scope_q()), (50000, 50000))

    def test_runtime_update(self):
        # "podman update --cpus 0.8": the scope (systemd), then at once the
        # subgroup (crun). The subgroup's new value is an external change,
        # the new contract, and the scope's the same: tied again, both
        # raised to 4 x 80000 (at most the host's CPUs).
        d = self.d
        d.wait_for(lambda: self.scope_q() == df.REST, 10, "the scope raised")
        write_quota(self.scope, 80000)
        write_quota(self.sub.dir, 80000)
        d.wait_for(lambda: self.sub_q() == df.resting(80000) and self.scope_q() == df.resting(80000), 10,
                   "both raised from the new contract")
        d.signal(15)
        self.assertEqual(d.wait(10), 0)
        self.assertEqual((self.sub_q(), self.scope_q()), (80000, 80000))

    def test_someone_elses_limit_on_the_scope(self):
        d = self.d
        d.wait_for(lambda: self.scope_q() == df.REST, 10, "the scope raised")
        # An operator (or systemd) puts another limit on the scope: it is
        # theirs, never written again, and the headroom stays under it.
        write_quota(self.scope, 70000)
        d.wait_for(lambda: self.sub_q() == 70000, 10, "the subgroup's headroom under the scope's 70000")
        d.wait_ticks(UNIT, 20)
        self.assertEqual(self.scope_q(), 70000)
        self.assertIn("a limit of someone else's", d.logtext())
        d.signal(15)
        self.assertEqual(d.wait(10), 0)
        self.assertEqual((self.sub_q(), self.scope_q()), (50000, 70000))


class TestCrash(ScopeTest):
    def test_sigkill_while_raised(self):
        d = self.d
        d.wait_for(lambda: self.sub_q() == df.REST and self.scope_q() == df.REST, 10, "both raised")
        d.signal(9)
        d.wait(10)
        # The next bwgovd finds both raised: the subgroup's value is the one
        # it recorded, and the scope's is the subgroup's. Both stay ours
        # (the headroom is not taken for a contract), and SIGTERM puts the
        # contract back on both.
        seen = len(d.logtext())
        self.d = d = df.Daemon(self.base)
        d.start()
        d.wait_for(lambda: "holds its quota as well" in d.logtext()[seen:], 10, "the scope tied again")
        self.assertIn("kernel holds the value we last wrote", d.logtext()[seen:])
        self.assertNotIn("external-change", d.logtext()[seen:])
        self.assertEqual((self.sub_q(), self.scope_q()), (df.REST, df.REST))
        d.signal(15)
        self.assertEqual(d.wait(10), 0)
        self.assertEqual((self.sub_q(), self.scope_q()), (50000, 50000))


class TestScopeAtMax(ScopeTest):
    """podman 4 with crun 1.8: the scope at "max", nothing to tie."""
    scope_quota = "max"

    def test_left_alone(self):
        d = self.d
        d.wait_for(lambda: self.sub_q() == df.REST, 10, "the subgroup raised")
        d.wait_ticks(UNIT, 10)
        self.assertIsNone(self.scope_q())
        self.assertNotIn("scope-follows", d.logtext())


class TestScopeWithAnotherChild(ScopeTest):
    """Another cgroup beside the subgroup: the scope's runtime is not all
    the subgroup's, so its limit stays a limit."""

    def prepare(self):
        os.makedirs(os.path.join(self.base, "cg", SCOPE, "other"))

    def test_not_tied(self):
        d = self.d
        d.wait_ticks(UNIT, 20)
        self.assertEqual((self.sub_q(), self.scope_q()), (50000, 50000))
        self.assertNotIn("scope-follows", d.logtext())


if __name__ == "__main__":
    unittest.main(verbosity=2)
