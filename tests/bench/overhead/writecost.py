#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What one bandwidth write costs with N cgroups on the host (issue 34).

The kernel checks every write of cpu.max / cpu.cfs_quota_us (and of the
burst) against the whole task-group tree (__cfs_schedulable() walks it from
the root), so a write costs more the more cgroups the host has, wherever
the written one is. That bounds what bwgovd can do at scale: adopting or
restoring ten thousand resting units is 20 000 such writes.

Creates --count cgroups bwgov-bench-wcost/c<i> (v2, or the v1 cpu
hierarchy of a hybrid host), times --writes writes of the quota and of the
burst, each to another cgroup, and a read of the quota for comparison,
then removes them all (also on failure). Needs root and a cpu controller;
exits 77 (skip) with the reason otherwise.

  writecost.py [--count 300,10000] [--writes 200] [--json]
"""

import argparse
import json
import os
import sys
import time

SKIP = 77
BASE = "bwgov-bench-wcost"


def tree():
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers") and \
            "cpu" in open("/sys/fs/cgroup/cgroup.controllers").read().split():
        return "/sys/fs/cgroup", "cpu.max", "cpu.max.burst", ("{} 100000", "{}")
    if os.path.exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
        return "/sys/fs/cgroup/cpu", "cpu.cfs_quota_us", "cpu.cfs_burst_us", ("{}", "{}")
    return None, None, None, None


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def measure(root, quota_file, burst_file, fmt, count, writes):
    base = os.path.join(root, BASE)
    made = []
    try:
        os.mkdir(base)
        made.append(base)
        if root.endswith("/sys/fs/cgroup"):
            write(os.path.join(base, "cgroup.subtree_control"), "+cpu")
        for i in range(count):
            d = os.path.join(base, f"c{i}")
            os.mkdir(d)
            made.append(d)
        n = min(writes, count)
        res = {"cgroups": count, "writes": n}
        t = time.monotonic()
        for i in range(n):
            write(os.path.join(base, f"c{i}", quota_file), fmt[0].format(50000 + 1000 * (i % 2)))
        res["quota_write_us"] = round((time.monotonic() - t) / n * 1e6, 1)
        if os.path.exists(os.path.join(base, "c0", burst_file)):
            t = time.monotonic()
            for i in range(n):
                write(os.path.join(base, f"c{i}", burst_file), fmt[1].format(1000))
            res["burst_write_us"] = round((time.monotonic() - t) / n * 1e6, 1)
        t = time.monotonic()
        for i in range(n):
            with open(os.path.join(base, f"c{i}", quota_file)) as f:
                f.read()
        res["quota_read_us"] = round((time.monotonic() - t) / n * 1e6, 1)
        return res
    finally:
        for d in reversed(made):
            try:
                os.rmdir(d)
            except OSError as e:
                print(f"[writecost] cannot remove {d}: {e}", file=sys.stderr)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", default="300,10000", help="cgroups on the host, comma-separated runs")
    ap.add_argument("--writes", type=int, default=200, help="writes timed per run")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("SKIP: needs root (it creates cgroups)", file=sys.stderr)
        return SKIP
    root, quota_file, burst_file, fmt = tree()
    if not root:
        print("SKIP: no cpu controller found (cgroup v2 cpu, or v1 cpu.cfs_quota_us)", file=sys.stderr)
        return SKIP
    if os.path.exists(os.path.join(root, BASE)):
        print(f"{os.path.join(root, BASE)} exists: a run still going, or left over", file=sys.stderr)
        return 1
    results = [measure(root, quota_file, burst_file, fmt, int(c), a.writes) for c in a.count.split(",")]
    if a.json:
        print(json.dumps(results, indent=1))
    else:
        print("| cgroups | quota write (µs) | burst write (µs) | quota read (µs) |")
        print("|---|---|---|---|")
        for r in results:
            print(f"| {r['cgroups']} | {r['quota_write_us']} | {r.get('burst_write_us', '-')} | {r['quota_read_us']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
