#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A hybrid host's cgroup whose cgroup2 twin is made after bwgovd governs it
(root; hybrid hosts only).

The v1 cpu directory is made first and bwgovd adopts it; without the twin
there is no usage to read, and the law keeps the quota at the baseline.
Then the twin is made: within a few seconds bwgovd finds it (its log says
so), reads the group's usage from it, and the quota rests above the
baseline at CPUQuotaMax=, as for a cgroup found with its twin. Before the
twin was looked for again, such a cgroup stayed at its baseline for as long
as bwgovd ran (seen in the churn soak). About 10 s.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_common import check, failures, finish, remove_cgroups, wait_for  # noqa: E402
from live_governor import BWGOVD, Daemon, mounts  # noqa: E402

QUOTA, PERIOD = 50000, 100000
QUOTA_MAX_PCT = 150


def quota(bw):
    with open(os.path.join(bw, "cpu.cfs_quota_us")) as f:
        return int(f.read())


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root to create cgroups")
        return 77
    layout, bw_root, v2_root = mounts()
    if layout != "hybrid" or not v2_root:
        print(f"SKIP: not a hybrid host with a cgroup2 tree ({layout}): every cgroup has its v2 directory")
        return 77
    if not os.access(BWGOVD, os.X_OK):
        print(f"FAIL: {BWGOVD} not built")
        return 1

    name = f"bwgov-test-twin-{os.getpid()}"
    bw, v2 = os.path.join(bw_root, name), os.path.join(v2_root, name)
    base = tempfile.mkdtemp(prefix="bwgov-test-twin-")
    daemon = None
    try:
        os.mkdir(bw)
        with open(os.path.join(bw, "cpu.cfs_period_us"), "w") as f:
            f.write(str(PERIOD))
        with open(os.path.join(bw, "cpu.cfs_quota_us"), "w") as f:
            f.write(str(QUOTA))
        daemon = Daemon(base, {name: f"Mode=elastic\nCPUQuotaMax={QUOTA_MAX_PCT}%\n"}, trace=False)
        check(daemon.wait_adopted(), "bwgovd adopted the cgroup without its cgroup2 twin")
        time.sleep(2)
        q = quota(bw)
        check(q == QUOTA, f"without usage the quota stays at the baseline ({q} us)")

        os.mkdir(v2)
        t0 = time.monotonic()
        log = os.path.join(base, "bwgovd.log")
        found = wait_for(lambda: "has its cgroup2 twin now" in open(log).read(), 10)
        check(bool(found), f"bwgovd found the twin ({time.monotonic() - t0:.1f} s after it was made)")
        want = PERIOD * QUOTA_MAX_PCT // 100
        rested = wait_for(lambda: quota(bw) == want, 10)
        check(bool(rested), f"then the quota rests at CPUQuotaMax= ({quota(bw)} us, {want} wanted)")
    finally:
        if daemon:
            # Under ASan+UBSan a leak or an error shows as the exit status.
            rc = daemon.stop()
            check(rc == 0, f"bwgovd exits 0 on SIGTERM ({rc})")
        left = remove_cgroups([bw if os.path.isdir(bw) else None, v2 if os.path.isdir(v2) else None])
        if left:
            check(False, f"cgroups removed ({left} left)")
    return finish(base)


if __name__ == "__main__":
    sys.exit(main())
