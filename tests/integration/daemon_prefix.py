#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Prefix drop-ins (issue 18): "libpod-.scope.d/" governs every
libpod-<id>.scope, "cri-containerd-.scope.d/" every container of the
kubelet's systemd-driver layout, wherever they are below the root's
slices, on the simulated kernel. Checked:

- a container's cgroup there at start and one made while bwgovd runs are
  governed, the new one within one Interval= of its mkdir, each with its
  resting headroom (CPUQuotaMax= of the prefix drop-in);
- a container in a pod slice made after start (kubepods.slice/
  kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/
  cri-containerd-<id>.scope, the slices made in the same moment);
- a unit directory of the container's own name adds to the prefix's
  drop-ins (systemd's order: the same file name in the more specific
  directory wins);
- names the prefix does not take are left alone (libpodx-1.scope, a
  libpod-1.service);
- a removed container is forgotten (no longer listed), one made again with
  the same name is governed afresh; a reload keeps the governed ones;
- SIGTERM restores every container's quota;
- Subgroup=container governs crun's libpod-<id>.scope/container (made after
  the scope) and leaves the scope alone; a more specific prefix directory
  masks conmon's libpod-conmon-<id>.scope.

No root.
"""
import os
import shutil
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_fixture as df  # noqa: E402
import varlink_common as vc  # noqa: E402

GLOBAL = "[Governor]\nInterval=1s\nActiveInterval=250ms\nMetricsInterval=250ms\n"
POD = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e_3d4c.slice"


class TestPrefixDropins(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(vc.BWGOVD):
            self.skipTest(f"bwgovd not built at {vc.BWGOVD}")
        units = {
            "libpod-.scope": dict(quota=None, burst=0, conf="CreditMax=30s\nCPUQuotaMax=120%\n"),
            "cri-containerd-.scope": dict(quota=None, burst=0, conf="CreditMax=30s\n"),
        }
        self.sd = vc.StaticDaemon(units=units, global_conf=GLOBAL)
        self.sd.prepare()
        self.addCleanup(self.sd.cleanup)
        self.cg = os.path.join(self.sd.base, "cg")
        self.conf = os.path.join(self.sd.base, "conf")

    def make(self, path, quota=50000):
        return df.SimCgroup(self.cg, path, quota, 0)

    def remove(self, path):
        d = os.path.join(self.cg, path)
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)

    def present(self, name):
        return self.sd.d.metric("bwgov_unit_present", name, None)

    def test_containers_governed_forgotten_and_restored(self):
        first = self.make("machine.slice/libpod-aaa.scope")
        other = self.make("machine.slice/libpodx-1.scope")
        svc = self.make("system.slice/libpod-1.service")
        # The container's own directory adds to the prefix's drop-ins.
        own = os.path.join(self.conf, "libpod-bbb.scope.d")
        os.makedirs(own)
        with open(os.path.join(own, "10-test.conf"), "w") as f:
            f.write("[Bandwidth]\nCPUQuotaMax=180%\n")
        self.sd.start(wait=True)
        d = self.sd.d

        d.wait_for(lambda: first.read_max()[0] == 120000, 10, "the headroom of a container there at start")
        d.wait_for(lambda: self.present("libpod-aaa.scope") == 1, 5, "its metrics")

        t0 = time.monotonic()
        second = self.make("machine.slice/libpod-bbb.scope")
        d.wait_for(lambda: second.read_max()[0] == 180000, 10, "the headroom of a container made later")
        self.assertLess(time.monotonic() - t0, 1.0, "governed more than one Interval= after its mkdir")
        d.wait_for(lambda: self.present("libpod-bbb.scope") == 1, 5, "its metrics")

        t0 = time.monotonic()
        pod = self.make(POD + "/cri-containerd-0f1e2d.scope")
        d.wait_for(lambda: pod.read_max()[0] == df.REST, 10, "the container in a pod slice made later")
        self.assertLess(time.monotonic() - t0, 1.0)

        # Not taken: another prefix, another type.
        time.sleep(1.5)
        self.assertIsNone(self.present("libpodx-1.scope"))
        self.assertIsNone(self.present("libpod-1.service"))
        self.assertEqual(other.read_max(), (50000, df.PERIOD, 0))
        self.assertEqual(svc.read_max(), (50000, df.PERIOD, 0))

        # Removed: forgotten. Made again: governed afresh on its new quota.
        self.remove("machine.slice/libpod-aaa.scope")
        d.wait_for(lambda: self.present("libpod-aaa.scope") is None, 10, "the removed container forgotten")
        self.assertIn("libpod-aaa.scope: cgroup gone, no longer governed", d.logtext())
        again = self.make("machine.slice/libpod-aaa.scope", 70000)
        d.wait_for(lambda: again.read_max()[0] == 120000, 10, "the container made again")

        # A reload keeps them.
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: "Configuration reloaded" in d.logtext(), 10, "the reload")
        time.sleep(1.5)
        for n in ("libpod-aaa.scope", "libpod-bbb.scope", "cri-containerd-0f1e2d.scope"):
            self.assertEqual(self.present(n), 1, n)
        self.assertEqual(second.read_max()[0], 180000)

        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(20), 0)
        self.assertEqual(again.read_max(), (70000, df.PERIOD, 0))
        self.assertEqual(second.read_max(), (50000, df.PERIOD, 0))
        self.assertEqual(pod.read_max(), (50000, df.PERIOD, 0))

    def test_prefix_removed_on_reload(self):
        c = self.make("machine.slice/libpod-ccc.scope")
        self.sd.start(wait=True)
        d = self.sd.d
        d.wait_for(lambda: c.read_max()[0] == 120000, 10, "the headroom")
        shutil.rmtree(os.path.join(self.conf, "libpod-.scope.d"))
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: c.read_max() == (50000, df.PERIOD, 0), 10, "the baseline back")
        d.wait_for(lambda: self.present("libpod-ccc.scope") is None, 10, "no longer listed")
        self.assertTrue(self.sd.alive())

    def test_subgroup_crun_layout(self):
        """crun (podman's runtime) keeps the quota in libpod-<id>.scope/container,
        made after the scope, and leaves the scope at max: Subgroup=container
        governs the container cgroup; conmon's scope, masked by a more specific
        prefix directory, is left alone."""
        pdir = os.path.join(self.conf, "libpod-.scope.d")
        with open(os.path.join(pdir, "20-subgroup.conf"), "w") as f:
            f.write("[Bandwidth]\nSubgroup=container\n")
        mask = os.path.join(self.conf, "libpod-conmon-.scope.d")
        os.makedirs(mask)
        for name in os.listdir(pdir):
            os.symlink("/dev/null", os.path.join(mask, name))
        conmon = self.make("machine.slice/libpod-conmon-ddd.scope", "max")
        self.sd.start(wait=True)
        d = self.sd.d
        scope = self.make("machine.slice/libpod-ddd.scope", "max")
        time.sleep(0.3)                 # crun makes the scope, then its subgroup
        ctr = self.make("machine.slice/libpod-ddd.scope/container", 50000)
        d.wait_for(lambda: ctr.read_max()[0] == 120000, 10, "the container cgroup at its resting headroom (CPUQuotaMax=120%)")
        st = vc.call(self.sd.socket_path, vc.INTERFACE + ".GetUnit", {"unit": "libpod-ddd.scope"})["parameters"]
        self.assertEqual(st["unit"]["cgroup"], "machine.slice/libpod-ddd.scope/container")
        self.assertEqual(st["unit"]["baseline"]["quota_usec"], 50000)
        with open(os.path.join(scope.dir, "cpu.max")) as f:
            self.assertEqual(f.read().split()[0], "max", "the scope itself is left alone")
        self.assertIsNone(self.present("libpod-conmon-ddd.scope"), "conmon's scope is masked")
        with open(os.path.join(conmon.dir, "cpu.max")) as f:
            self.assertEqual(f.read().split()[0], "max")
        d.signal(signal.SIGTERM)
        self.assertEqual(d.wait(20), 0)
        self.assertEqual(ctr.read_max(), (50000, df.PERIOD, 0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
