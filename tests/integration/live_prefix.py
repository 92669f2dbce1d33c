#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Prefix drop-ins on this host's real cgroups (root; issue 18): a
prefix directory bwgov-test-ctr-.scope.d/ and, in a slice of the test's
own (bwgov-test-pfx-PID.slice, unlimited), cgroups named like containers
(bwgov-test-ctr-N.scope, 50 ms of quota per 100 ms). Checked, with
bwgovd watching the host's whole tree as it does in production:

- the container there at start is governed: its quota rests at four times
  the baseline (CPUQuotaMax='s default; at most the host's CPUs);
- one made while bwgovd runs is governed within one Interval= (1 s);
- one removed is forgotten (no longer in the metrics) within two seconds,
  and bwgovd logs it;
- SIGTERM puts the baseline back on the one left.

Only cgroups named bwgov-test-* are made, and removed at the end. Exits
77 (SKIP) without root or a cpu controller.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench", "overhead"))
from realcg import Tree  # noqa: E402
sys.path.insert(0, HERE)
from live_common import check, finish, metrics, wait_for  # noqa: E402

BUILD = os.environ.get("BWGOV_BUILD_ROOT", "build")
BWGOVD = os.environ.get("BWGOVD") or os.path.join(BUILD, "src/daemon/bwgovd")


def main():
    if os.geteuid() != 0:
        print("SKIP: makes real cgroups: needs root")
        return 77
    if not os.path.exists(BWGOVD):
        print(f"SKIP: {BWGOVD} not built")
        return 77
    tree = Tree()
    if not tree.kind:
        print("SKIP: no cpu controller here")
        return 77
    slice_ = f"bwgov-test-pfx-{os.getpid()}.slice"
    ctr = [f"{slice_}/bwgov-test-ctr-{i}.scope" for i in range(3)]
    quota = "cpu.max" if tree.kind == "v2" else "cpu.cfs_quota_us"
    base = tempfile.mkdtemp(prefix="bwgov-test-pfx-")
    proc = None

    def q(path):
        try:
            with open(os.path.join(tree.dirs[0], path, quota)) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError):
            return None

    def present(name):
        return metrics(base).get(f'bwgov_unit_present{{unit="{name}"}}')

    try:
        tree.create_unlimited(slice_)
        tree.create(ctr[0])
        tree.create(ctr[2])
        conf = os.path.join(base, "conf")
        os.makedirs(os.path.join(conf, "bwgov-test-ctr-.scope.d"))
        with open(os.path.join(conf, "bwgov.conf"), "w") as f:
            f.write("[Governor]\nInterval=1s\nMetricsInterval=250ms\nHostPressureLimit=0%\n")
        with open(os.path.join(conf, "bwgov-test-ctr-.scope.d", "10-test.conf"), "w") as f:
            f.write("[Bandwidth]\nCreditMax=10s\n")
        log_path = os.path.join(base, "bwgovd.log")
        log = open(log_path, "w")
        proc = subprocess.Popen([BWGOVD, "--config-dir", conf, "--state-dir", os.path.join(base, "state"),
                                 "--runtime-dir", os.path.join(base, "run"), "--log-level", "info"],
                                stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()

        rest = min(4 * 50000, (os.cpu_count() or 1) * 100000)
        check(wait_for(lambda: q(ctr[0]) == rest, 15) is not None,
              f"the container there at start rests at four times its baseline ({q(ctr[0])})")
        start = time.monotonic()
        tree.create(ctr[1])
        got = wait_for(lambda: q(ctr[1]) == rest, 5, step=0.02)
        took = time.monotonic() - start
        check(got is not None and took < 1.0, f"a container made later governed {took:.2f} s after its mkdir")

        check(wait_for(lambda: present(ctr[0].split("/")[1]) == 1, 5) is not None, "listed in the metrics")
        start = time.monotonic()
        tree.remove(ctr[0])
        gone = wait_for(lambda: present(ctr[0].split("/")[1]) is None, 5, step=0.02)
        took = time.monotonic() - start
        check(gone is not None and took < 2.5, f"a removed container forgotten {took:.2f} s after its rmdir")
        with open(log_path) as f:
            text = f.read()
        check("bwgov-test-ctr-0.scope: cgroup gone, no longer governed" in text, "bwgovd logs it")
        check(q(ctr[2]) == rest, "the other container still governed")

        proc.send_signal(signal.SIGTERM)
        check(proc.wait(30) == 0, "bwgovd exits 0 on SIGTERM")
        proc = None
        check(q(ctr[1]) == 50000 and q(ctr[2]) == 50000, f"baselines back ({q(ctr[1])}, {q(ctr[2])})")
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in ctr:
            tree.remove(p)
        tree.remove(slice_)
    return finish(base)


if __name__ == "__main__":
    sys.exit(main())
