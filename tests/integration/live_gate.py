#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The usage gates on real cgroups (root): five governed cgroups under one
unlimited parent, idle, then a CPU burner in one of them.

Idle, most samples must be gated (bwgov_gated_samples_total: nothing of the
cgroup's own read, the parent's usage had not moved). Once the burner runs,
bwgovd must see its usage within two Interval=s (the gate must never hide a
cgroup that ran): the burner's bwgov_usage_usec_total rises and ends within
one Interval= of CPU time of the kernel's own counter, while the idle
siblings' stay where they were. Only cgroups named bwgov-test-gate-PID* are
made, and removed at the end. Exits 77 (SKIP) without root or a cpu
controller.
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


def main():
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
    parent = f"bwgov-test-gate-{os.getpid()}"
    names = [f"{parent}-c{i}" for i in range(5)]
    paths = [f"{parent}/{n}" for n in names]
    base = tempfile.mkdtemp(prefix="bwgov-test-gate-")
    proc = burner = None
    try:
        tree.create_unlimited(parent)
        for p in paths:
            tree.create(p)
        conf = os.path.join(base, "conf")
        os.makedirs(conf)
        with open(os.path.join(conf, "bwgov.conf"), "w") as f:
            f.write("[Governor]\nInterval=1s\nMetricsInterval=1s\n")
        for n, p in zip(names, paths):
            os.makedirs(os.path.join(conf, n + ".d"))
            with open(os.path.join(conf, n + ".d", "10-test.conf"), "w") as f:
                f.write(f"[Bandwidth]\nCgroup={p}\nMode=elastic\n")
        log = open(os.path.join(base, "bwgovd.log"), "w")
        proc = subprocess.Popen([BWGOVD, "--config-dir", conf, "--state-dir", os.path.join(base, "state"),
                                 "--runtime-dir", os.path.join(base, "run"), "--log-level", "info"],
                                stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()

        # Idle: the samples go light, then gated.
        m0 = wait_for(lambda: (lambda m: m if m.get("bwgov_gated_samples_total", 0) > 0 else None)(metrics(base)), 30)
        check(m0 is not None, "idle cgroups under one parent: gated samples within 30 s")
        if m0 is None:
            return finish(base)
        check(m0.get("bwgov_usage_gates") == 1, f"one usage gate (the parent): {m0.get('bwgov_usage_gates')}")
        t0 = m0["bwgov_ticks_total"]
        g0 = m0["bwgov_gated_samples_total"]
        time.sleep(10)
        m1 = metrics(base)
        ticks, gated = m1["bwgov_ticks_total"] - t0, m1["bwgov_gated_samples_total"] - g0
        check(ticks >= 40 and gated >= 0.8 * ticks,
              f"idle: {gated:.0f} of {ticks:.0f} samples gated over 10 s (want 80 % or more)")
        before = {n: usage_of(m1, n) for n in names}

        # A burner in one of them: seen within two Interval=s.
        procs = [os.path.join(d, paths[2], "cgroup.procs") for d in tree.dirs]

        def enter():
            for p in procs:
                with open(p, "w") as f:
                    f.write(str(os.getpid()))
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=enter)
        start = time.monotonic()
        seen = wait_for(lambda: (usage_of(metrics(base), names[2]) or 0) > before[names[2]] + 100000, 5)
        took = time.monotonic() - start
        check(seen is not None and took <= 2.5,
              f"the burner's usage seen by bwgovd {took:.2f} s after it started (within two Interval=s + "
              f"a metrics write)")
        time.sleep(5)
        burner.send_signal(signal.SIGKILL)
        burner.wait()
        burner = None
        time.sleep(2.5)
        m2 = metrics(base)
        ku = kernel_usage(tree, paths[2])
        du = usage_of(m2, names[2])
        check(du is not None and ku is not None and abs(ku - du) <= 1100000,
              f"bwgovd's usage of the burner's cgroup {du} us against the kernel's {ku} us (within 1.1 s)")
        for n in names[:2] + names[3:]:
            check(usage_of(m2, n) == before[n] and before[n] is not None,
                  f"{n}: idle, its usage unchanged ({before[n]} -> {usage_of(m2, n)})")
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(30) == 0, "bwgovd exits 0 on SIGTERM")
        proc = None
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
        tree.remove(parent)
    return finish(base)


if __name__ == "__main__":
    sys.exit(main())
