#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The gates and parking on real cgroups (root, issue 34): a burner started
in one of N (default 1 000) idle governed cgroups, with BPF and without.

--layout parent (Telemetry=no): the cgroups under one unlimited parent. Idle,
their samples go gated (bwgov_gated_samples_total: nothing of the cgroup's
own read, the parent's usage had not moved), then every unit parks
(bwgov_parked_units: checked once per Interval= by the parent's usage).

--layout root (Telemetry=yes): the cgroups directly under the root, where
no parent's usage can tell anything. The run-queue programs flag a cgroup
whose task ran: samples go gated by that flag
(bwgov_activity_gated_samples_total), and the units park. SKIP when the
BPF programs cannot load here.

Either way: over 10 s idle the units take at most two samples each (their
slow full sample and the gated one before they park again). Once the burner
runs, bwgovd must see its usage within one Interval= (plus the metrics
write): parking must never hide a cgroup that ran. After the burner is
killed and the cgroup sampled again, bwgovd's usage of it equals the
kernel's counter to the microsecond, and the idle ones' stay where they
were. A parked cgroup removed is forgotten within one Interval= too.

--park-at-baseline (with --layout root): ParkAtBaseline=yes. Parked, every
cgroup holds its baseline again (50000 100000, burst 0); the burner's
first run wakes bwgovd, which raises its cgroup to the headroom within
0.5 s (milliseconds measured; the rest is margin for a busy host); and the
stop has nothing to put back: SIGTERM to exit within 2 s, every cgroup at
its baseline.

Only cgroups named bwgov-test-gate-PID* are made, and removed at the end.
Exits 77 (SKIP) without root or a cpu controller.
"""
import argparse
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


def usage_of(m, unit):
    return m.get(f'bwgov_usage_usec_total{{unit="{unit}"}}')


def kernel_usage(tree, path):
    """usage_usec of the cgroup's v2 cpu.stat (v2, or the hybrid twin)."""
    d = tree.dirs[-1] if tree.kind == "hybrid" else tree.dirs[0]
    with open(os.path.join(d, path, "cpu.stat")) as f:
        for line in f:
            k, v = line.split()
            if k == "usage_usec":
                return int(v)
    return None


def bandwidth(tree, path):
    """(quota, burst) as the kernel holds them, strings."""
    d = os.path.join(tree.dirs[0], path)
    if tree.kind == "v2":
        with open(os.path.join(d, "cpu.max")) as f:
            q = f.read().split()[0]
        name = "cpu.max.burst"
    else:
        with open(os.path.join(d, "cpu.cfs_quota_us")) as f:
            q = f.read().strip()
        name = "cpu.cfs_burst_us"
    try:
        with open(os.path.join(d, name)) as f:
            b = f.read().strip()
    except OSError:
        b = "0"
    return q, b


BASELINE = ("50000", "0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layout", choices=("parent", "root"), default="parent")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--park-at-baseline", action="store_true")
    a = ap.parse_args()
    if a.park_at_baseline and a.layout != "root":
        ap.error("--park-at-baseline needs --layout root (the activity flags)")
    if os.geteuid() != 0:
        print("SKIP: makes real cgroups: needs root")
        return 77
    if not os.path.exists(BWGOVD):
        print(f"SKIP: {BWGOVD} not built")
        return 77
    tree = Tree()
    if not tree.kind or (tree.kind == "hybrid" and len(tree.dirs) < 2):
        print("SKIP: no cgroup v2 usage file with the cpu controller here")
        return 77
    bpf = a.layout == "root"
    parent = f"bwgov-test-gate-{os.getpid()}"
    names = [f"{parent}-c{i}" for i in range(a.count)]
    paths = names if bpf else [f"{parent}/{n}" for n in names]
    base = tempfile.mkdtemp(prefix="bwgov-test-gate-")
    proc = burner = None
    try:
        if not bpf:
            tree.create_unlimited(parent)
        for p in paths:
            tree.create(p)
        conf = os.path.join(base, "conf")
        os.makedirs(conf)
        with open(os.path.join(conf, "bwgov.conf"), "w") as f:
            f.write(f"[Governor]\nInterval=1s\nMetricsInterval=1s\nTelemetry={'yes' if bpf else 'no'}\n"
                    f"ParkAtBaseline={'yes' if a.park_at_baseline else 'no'}\n")
        for n, p in zip(names, paths):
            os.makedirs(os.path.join(conf, n + ".d"))
            with open(os.path.join(conf, n + ".d", "10-test.conf"), "w") as f:
                f.write(f"[Bandwidth]\nCgroup={p}\nMode=elastic\n")
        log = open(os.path.join(base, "bwgovd.log"), "w")
        proc = subprocess.Popen([BWGOVD, "--config-dir", conf, "--state-dir", os.path.join(base, "state"),
                                 "--runtime-dir", os.path.join(base, "run"), "--log-level", "info"],
                                stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()

        # Idle: the samples go light, then gated, then the units park.
        gated = "bwgov_activity_gated_samples_total" if bpf else "bwgov_gated_samples_total"
        m0 = wait_for(lambda: (lambda m: m if m.get(gated, 0) > 0 or m.get("bwgov_runqueue_telemetry") == 0
                               else None)(metrics(base)), 60)
        if bpf and m0 is not None and m0.get("bwgov_runqueue_telemetry") == 0:
            print("SKIP: the run-queue BPF programs are not loaded here (bwgovctl status says why)")
            return 77
        check(m0 is not None, f"idle cgroups ({a.layout}): {gated} within 60 s")
        if m0 is None:
            return finish(base)
        if bpf:
            check(m0.get("bwgov_usage_gates") == 0 and m0.get("bwgov_gated_samples_total") == 0,
                  f"no usage gate under the root: {m0.get('bwgov_usage_gates')} gates, "
                  f"{m0.get('bwgov_gated_samples_total')} samples gated by one")
        else:
            check(m0.get("bwgov_usage_gates") == 1, f"one usage gate (the parent): {m0.get('bwgov_usage_gates')}")
            check(m0.get("bwgov_activity_gated_samples_total") == 0, "no activity flag with Telemetry=no")
        m0 = wait_for(lambda: (lambda m: m if m.get("bwgov_parked_units") == len(names) else None)(metrics(base)), 30)
        check(m0 is not None, f"all {len(names)} idle units parked within 30 s "
                              f"({metrics(base).get('bwgov_parked_units')})")
        if m0 is None:
            return finish(base)
        t0 = m0["bwgov_ticks_total"]
        time.sleep(10)
        m1 = metrics(base)
        ticks = m1["bwgov_ticks_total"] - t0
        # Parked, a unit's only sample is its slow full one (every
        # UNIT_PARKED_FULL_EVERY Interval=s), then one gated before it parks again.
        check(ticks <= 2 * len(names) and m1.get("bwgov_parked_units") == len(names),
              f"idle and parked: {ticks:.0f} samples of {len(names)} units over 10 s (want at most "
              f"{2 * len(names)}; {10 * len(names)} unparked); {m1.get('bwgov_parked_units'):.0f} parked")
        before = {n: usage_of(m1, n) for n in names}
        wakes0 = m1.get("bwgov_parked_wakes_total", 0)
        if a.park_at_baseline:
            # Parking puts the baselines back; the last may still be
            # writing when the gauge counts them all parked.
            off = wait_for(lambda: all(bandwidth(tree, p) == BASELINE for p in paths), 10)
            left = [p for p in paths if bandwidth(tree, p) != BASELINE]
            check(off is not None and not left, f"parked at their baselines: {len(paths) - len(left)} of "
                                                f"{len(paths)} hold {BASELINE} ({left[:3]})")

        # A burner in one of them: seen within one Interval= and a metrics write.
        procs = [os.path.join(d, paths[2], "cgroup.procs") for d in tree.dirs]

        def enter():
            for p in procs:
                with open(p, "w") as f:
                    f.write(str(os.getpid()))
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=enter)
        start = time.monotonic()
        if a.park_at_baseline:
            raised = wait_for(lambda: bandwidth(tree, paths[2])[0] != BASELINE[0] or None, 5, step=0.002)
            took = time.monotonic() - start
            check(raised is not None and took <= 0.5,
                  f"its first run woke bwgovd: the burner's cgroup raised to {bandwidth(tree, paths[2])} "
                  f"{took * 1000:.0f} ms after it started (want within 500 ms)")
        seen = wait_for(lambda: (usage_of(metrics(base), names[2]) or 0) > before[names[2]] + 50000, 5, step=0.02)
        took = time.monotonic() - start
        check(seen is not None and took <= 2.5,
              f"the burner's usage seen by bwgovd {took:.2f} s after it started (within one Interval= + "
              f"a metrics write of MetricsInterval=1s, and 0.5 s)")
        check(metrics(base).get("bwgov_parked_wakes_total", 0) > wakes0, "the parked units were woken")
        time.sleep(2)
        burner.send_signal(signal.SIGKILL)
        burner.wait()
        burner = None
        ku = kernel_usage(tree, paths[2])
        # Its next samples read the counter the kernel holds from now on.
        exact = wait_for(lambda: usage_of(metrics(base), names[2]) == ku, 5)
        du = usage_of(metrics(base), names[2])
        check(exact is not None and ku is not None,
              f"bwgovd's usage of the burner's cgroup {du} us, the kernel's {ku} us (equal, within 5 s)")
        m2 = metrics(base)
        moved = [n for n in names[:2] + names[3:] if usage_of(m2, n) != before[n] or before[n] is None]
        check(not moved, f"the {len(names) - 1} idle ones: usage unchanged "
                         f"({len(moved)} moved: {', '.join(moved[:3])})")

        # A parked cgroup removed: forgotten within one Interval= (and a
        # metrics write), not at its slow full sample a minute later (its
        # files tell nothing: cgroupfs sends their watches no event).
        m3 = wait_for(lambda: (lambda m: m if m.get("bwgov_parked_units", 0) >= len(names) - 1 else None)(
            metrics(base)), 30)
        check(m3 is not None, f"parked again within 30 s ({metrics(base).get('bwgov_parked_units')})")
        gone = names[5]
        tree.remove(paths[5])
        start = time.monotonic()
        seen = wait_for(lambda: metrics(base).get(f'bwgov_unit_present{{unit="{gone}"}}') == 0, 10, step=0.02)
        took = time.monotonic() - start
        check(seen is not None and took <= 2.5,
              f"a parked cgroup removed: bwgovd forgot it {took:.2f} s later (within one Interval= + "
              f"a metrics write of MetricsInterval=1s, and 0.5 s)")
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(30)
        took = time.monotonic() - start
        check(rc == 0, "bwgovd exits 0 on SIGTERM")
        proc = None
        left = [p for p in paths if p != paths[5] and bandwidth(tree, p) != BASELINE]
        check(not left, f"after the stop every cgroup holds its baseline ({len(left)} do not: {left[:3]})")
        if a.park_at_baseline:
            check(took <= 2.0, f"parked at their baselines, the stop took {took:.2f} s (want within 2 s)")
    finally:
        if burner:
            burner.kill()
            burner.wait()
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in paths:
            for _ in range(50):
                try:
                    tree.remove(p)
                    break
                except OSError:
                    time.sleep(0.1)
        if not bpf:
            tree.remove(parent)
    return finish(base)


if __name__ == "__main__":
    sys.exit(main())
