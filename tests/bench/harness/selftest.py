#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Self-test of the benchmark harness, no root, no cgroups, a few seconds:
the strace write analysis (identical writes), the callgrind dump parser,
the contract window, the Koordinator-style comparator against a fake cgroup
directory, and the simulated kernel's files as bwgovd's parsers expect them.
Prints TAP-less "ok"/"FAIL" lines; exit status 0 when everything passed."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "overhead"))

from harness import governor, runner, stats  # noqa: E402
import overhead  # noqa: E402

failures = 0


def check(name, cond, detail=""):
    global failures
    if cond:
        print(f"ok - {name}")
    else:
        failures += 1
        print(f"FAIL - {name} {detail}")


def test_write_trace(tmp):
    cg = "/sys/fs/cgroup/cpu/bwgov-bench-1-1"
    lines = [
        f'100 1700000000.100000 write(5<{cg}/cpu.cfs_burst_us>, "50000\\n", 6) = 6',
        f'100 1700000000.200000 write(5<{cg}/cpu.cfs_quota_us>, "57000\\n", 6) = 6',
        f'100 1700000001.200000 write(5<{cg}/cpu.cfs_quota_us>, "57000\\n", 6) = 6',       # identical
        f'100 1700000002.200000 write(5<{cg}/cpu.cfs_quota_us>, "-1", 2) = -1 EINVAL (Invalid argument)',
        f'100 1700000003.200000 write(7</sys/fs/cgroup/unified/bwgov-bench-1-1/cpu.pressure>, "full 100000 2000000\\0", 20) = 20',
        '100 1700000003.300000 write(2</tmp/x.log>, "bwgovd: hello", 13) = 13',
        f'100 1700000004.000000 write(5<{cg}/cpu.cfs_quota_us>, "50000", 5) = 5',
        f'100 1700000004.100000 write(6</sys/fs/cgroup/bwgov-bench-1-1/cpu.max>, "60000 100000", 12) = 12',
        f'100 1700000004.200000 write(6</sys/fs/cgroup/bwgov-bench-1-1/cpu.max>, "60000", 5) = 5',   # identical (quota only)
    ]
    path = os.path.join(tmp, "w.strace")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    t = governor.WriteTrace(path)
    t.initial = {f"{cg}/cpu.cfs_burst_us": 0, f"{cg}/cpu.cfs_quota_us": 50000,
                 "/sys/fs/cgroup/bwgov-bench-1-1/cpu.max": (50000, 100000)}
    r = t.analyse([cg, "/sys/fs/cgroup/unified/bwgov-bench-1-1", "/sys/fs/cgroup/bwgov-bench-1-1"],
                  steady_since=1700000001.0)
    check("strace: bandwidth writes counted", r["writes"] == 6, r)
    check("strace: identical writes found", r["identical"] == 2, r)
    check("strace: failed write not counted as a write", r["failed"] == 1, r)
    check("strace: PSI trigger is another cgroup write", r["other_cgroup_writes"] == 1, r)
    check("strace: steady window", r["writes_steady"] == 4 and r["identical_steady"] == 2, r)


def test_callgrind_parser(tmp):
    dump = """version: 1
creator: callgrind-3.19.0
events: Ir
summary: 10000
fn=(1) sd_event_run
5 100
cfn=(2) on_unit_timer
calls=10 0
5 6000
cfn=(3) on_host_timer
calls=1 0
6 3000
fn=(2)
1 100
cfn=(4) unit_tick.isra.0
calls=10 0
2 5500
fn=(4)
cfn=(5) bw_policy_decide
calls=10 0
3 1000
fn=(3)
cfn=(6) metrics_write
calls=1 0
4 2500
totals: 10000
"""
    path = os.path.join(tmp, "cg.out")
    with open(path, "w") as f:
        f.write(dump)
    total, callees = overhead.parse_callgrind(path)
    check("callgrind: total", total == 10000, total)
    check("callgrind: calls and inclusive", callees.get("on_unit_timer") == {"calls": 10, "incl": 6000}
          and callees.get("unit_tick") == {"calls": 10, "incl": 5500}, callees)
    ipt, parts = overhead.per_cgroup_tick(total, callees, 10)
    # 600 per unit timer call + 3000 / 1 / 10 host + (10000 - 9000) / 10 loop
    check("callgrind: per cgroup per tick", ipt == 600 + 300 + 100, (ipt, parts))
    check("callgrind: parts", parts.get("policy") == 100 and parts.get("metrics") == 250, parts)


def test_window():
    rows = [[0.0, 0, 0, 0, 0], [1.0, 0, 0, 0, 200000], [2.0, 0, 0, 0, 1700000], [3.0, 0, 0, 0, 1900000]]
    # baseline 0.5 CPU: X = usage - 0.5 t = 0, -0.3, 0.7, 0.4 -> largest rise 1.0
    check("window excess", abs(runner.window_excess(rows, 0.5) - 1.0) < 1e-9, runner.window_excess(rows, 0.5))
    s = stats.summary([3, 1, 2, None])
    check("summary", s == {"median": 2, "min": 1, "max": 3, "n": 3}, s)
    check("format", stats.fmt_summary(s, 1) == "2.0 [1.0–3.0]", stats.fmt_summary(s, 1))


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def test_koordinator(tmp):
    d = os.path.join(tmp, "kcg")
    os.mkdir(d)
    _write(os.path.join(d, "cpu.max"), "50000 100000\n")
    _write(os.path.join(d, "cpu.stat"), "usage_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")
    p = subprocess.Popen([sys.executable, os.path.join(BENCH, "koordinator.py"), "--dir", d, "--v2",
                          "--interval", "0.1"], stdout=subprocess.PIPE, text=True)

    def quota():
        for _ in range(100):                # a regular file is empty for a moment while it rewrites it
            with open(os.path.join(d, "cpu.max")) as f:
                parts = f.read().split()
            if parts:
                return int(parts[0])
            time.sleep(0.001)
        return None

    try:
        thr = 0
        seen = []
        for _ in range(24):                 # throttled every loop: +20 % each, capped at 150000
            thr += 1
            _write(os.path.join(d, "cpu.stat"), f"usage_usec 0\nnr_periods {thr}\nnr_throttled {thr}\n")
            time.sleep(0.05)                # faster than its loop: every look sees new throttling
            seen.append(quota())
        check("koordinator: raises by 20 % steps", 60000 in seen and 72000 in seen, seen)
        check("koordinator: capped at 300 %", max(seen) == 150000 and seen[-1] == 150000, seen)
        time.sleep(1.6)                     # no throttling: -20 % per loop down to the baseline
        check("koordinator: lowers back to the baseline", quota() == 50000, quota())
    finally:
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=5)
    st = json.loads(out.strip().splitlines()[-1])
    check("koordinator: summary", st["raises"] >= 6 and st["lowers"] >= 5 and st["identical_writes"] == 0
          and st["writes"] == st["raises"] + st["lowers"], st)


def test_simkernel(tmp):
    root = os.path.join(tmp, "sim")
    sim = os.path.join(BENCH, "overhead", "simkernel.py")
    subprocess.run([sys.executable, sim, "create", "--root", root, "--count", "3"], check=True)
    cgd = os.path.join(root, "bwgov-ovh-0")
    check("simkernel: tree", os.path.isfile(os.path.join(root, "cgroup.controllers"))
          and all(os.path.isfile(os.path.join(cgd, f)) for f in ("cpu.max", "cpu.max.burst", "cpu.stat", "cpu.pressure")))
    size0 = os.path.getsize(os.path.join(cgd, "cpu.stat"))
    p = subprocess.Popen([sys.executable, sim, "run", "--root", root, "--count", "3", "--tick", "0.2", "--busy", "1",
                          "--high", "0.9", "--cycle", "100"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=5)
    st = json.loads(out.strip().splitlines()[-1])
    with open(os.path.join(cgd, "cpu.stat")) as f:
        kv = dict(line.split() for line in f)
    check("simkernel: passes", st["passes"] >= 3, st)
    check("simkernel: fixed width", os.path.getsize(os.path.join(cgd, "cpu.stat")) == size0)
    check("simkernel: counters advance", int(kv["usage_usec"]) > 0 and int(kv["nr_periods"]) > 0, kv)


def main():
    tmp = tempfile.mkdtemp(prefix="bwgov-bench-selftest-")
    try:
        test_write_trace(tmp)
        test_callgrind_parser(tmp)
        test_window()
        test_koordinator(tmp)
        test_simkernel(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'FAILED' if failures else 'passed'}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
