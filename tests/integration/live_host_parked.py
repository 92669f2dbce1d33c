#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The host brake for a group parked at its headroom (root; v2 or hybrid).

Four governed groups (0.25 CPU, CPUQuotaMax=75%, a long credit, under a
parent of their own), idle until they park at their resting headroom
(ParkAtBaseline=no: 0.75 CPU). A group
parked there can run up to its headroom at any moment. Interval=6s,
ActiveInterval=100ms: the check of the parked groups comes with the slow
host pass, every 6 s, and bwgovd writes its metrics in the same pass, so
the test starts just after a metrics write, a whole Interval= before the
next check. Then, at once, two busy loops per CPU in the first group and one per
CPU outside it. The first group's headroom must be withdrawn (the brake's notice in the
log) within BRAKE_S = Interval/2. Twice:

  - with the run-queue telemetry (SKIP for this part where it does not
    load): the group's activity flag, armed as it parked, wakes bwgovd at
    its first run (the debug line says so), and the host passes, once per
    Interval= while every parked group can wake it so, come fast again;
    the first whose pressure nears the limit checks the parked groups;
  - with Telemetry=no: nothing wakes it, so the host passes stay at
    ActiveInterval=, and the first whose pressure nears the limit checks
    the parked groups at once.

A daemon that left the group parked until the next check braked 7.3 s
after the start here in both (9a379d3); with the flag, 1.1-1.2 s after;
without it, 1.1-1.3 s; 0.2-1.2 s beside a parallel build. Every
process started here is killed by PID, every cgroup removed."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_common import check, end_processes, failures, remove_cgroups, wait_for  # noqa: E402
from live_governor import BWGOVD, Cgroup, mounts, skip  # noqa: E402
from live_governor import read_metrics as host_metrics  # noqa: E402

PREFIX = f"bwgov-test-lhp{os.getpid()}"
UNIT = f"{PREFIX}-g"        # units {UNIT}0..3, cgroups {PREFIX}/g0..3; the load in g0
SIBLINGS = 4
INTERVAL_S = 6
BRAKE_S = INTERVAL_S / 2
NCPUS = len(os.sched_getaffinity(0))
NOTICE = "withdrawing headroom"
WOKE = "its first run since it parked at its headroom"


def metrics_mtime(base):
    try:
        return os.stat(os.path.join(base, "run", "metrics.prom")).st_mtime_ns
    except OSError:
        return None


def braked(base):
    with open(os.path.join(base, "bwgovd.log")) as f:
        return any(NOTICE in line for line in f)


def run(telemetry):
    """One daemon, one group, Telemetry= as given; False when this mode
    cannot run here (said why)."""
    base = tempfile.mkdtemp(prefix="bwgov-test-live-host-parked-")
    # Under a parent of its own, with siblings: without the telemetry, a
    # still group is told by its parent's usage, read for four governed
    # children or more (usagegate.h; none directly under the root parks).
    parent, cgs = Cgroup(PREFIX), []
    procs = []
    log = open(os.path.join(base, "bwgovd.log"), "w")
    daemon = None
    what = "with the run-queue telemetry" if telemetry else "without the telemetry"
    try:
        for i in range(SIBLINGS):
            cgs.append(Cgroup(f"{PREFIX}/g{i}"))
            cgs[-1].set(25000, 100000, 0)
        cg = cgs[0]
        for d in ("conf", "state", "run"):
            os.makedirs(os.path.join(base, d), exist_ok=True)
        with open(os.path.join(base, "conf", "bwgov.conf"), "w") as f:
            f.write(f"[Governor]\nInterval={INTERVAL_S}s\nActiveInterval=100ms\nMetricsInterval=100ms\n"
                    f"HostPressureLimit=40%\nParkAtBaseline=no\nTelemetry={'yes' if telemetry else 'no'}\n")
        for i in range(SIBLINGS):
            os.makedirs(os.path.join(base, "conf", f"{UNIT}{i}.d"))
            with open(os.path.join(base, "conf", f"{UNIT}{i}.d", "10-live.conf"), "w") as f:
                f.write(f"[Bandwidth]\nCgroup={PREFIX}/g{i}\nCreditMax=600s\nCPUQuotaMax=75%\n")
        daemon = subprocess.Popen([BWGOVD, "--config-dir", os.path.join(base, "conf"),
                                   "--state-dir", os.path.join(base, "state"),
                                   "--runtime-dir", os.path.join(base, "run"), "--log-level", "debug"],
                                  stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        if not wait_for(lambda: all(("bwgov_baseline_quota_usec", f"{UNIT}{i}") in host_metrics(base)
                                    for i in range(SIBLINGS)), 20):
            check(False, f"{what}: bwgovd adopted the group")
            return True
        if telemetry and host_metrics(base).get(("bwgov_runqueue_telemetry", None)) != 1:
            print(f"SKIP {what}: not loaded here", flush=True)
            return False
        # Three quiet samples, one per Interval=, then it parks.
        parked = wait_for(lambda: host_metrics(base).get(("bwgov_parked_units", None)) == SIBLINGS and
                          host_metrics(base), 12 * INTERVAL_S)
        check(bool(parked), f"{what}: the {SIBLINGS} idle groups park "
                            f"({host_metrics(base).get(('bwgov_parked_units', None))} parked)")
        if not parked:
            return True
        rest = parked.get(("bwgov_quota_usec", f"{UNIT}0"), 0)
        check(rest > 25000, f"{what}: parked at its resting headroom ({rest} µs quota, baseline 25000)")
        if rest <= 25000:
            return True
        check(not braked(base), f"{what}: no brake while it is idle")

        # Just after a slow pass (its metrics write), so that the next one
        # is a whole Interval= away.
        m0 = metrics_mtime(base)
        if not wait_for(lambda: metrics_mtime(base) != m0, 2 * INTERVAL_S, step=0.01):
            check(False, f"{what}: bwgovd writes its metrics once per Interval=")
            return True
        for _ in range(2 * NCPUS):
            procs.append(cg.spawn(["sh", "-c", "while :; do :; done"], subprocess.DEVNULL))
        for _ in range(NCPUS):
            procs.append(subprocess.Popen(["sh", "-c", "while :; do :; done"]))
        t0 = time.monotonic()
        ok = wait_for(lambda: braked(base), INTERVAL_S + 5, step=0.05)
        took = time.monotonic() - t0
        check(bool(ok) and took < BRAKE_S,
              f"{what}: the parked group's headroom is withdrawn within {BRAKE_S:g} s of the load, although "
              f"the next check of the parked groups was {INTERVAL_S} s away "
              f"({'%.2f s' % took if ok else 'no brake'})")
        with open(os.path.join(base, "bwgovd.log")) as f:
            woke = any(WOKE in line for line in f)
        check(woke == telemetry, f"{what}: " + ("its first run woke bwgovd (the armed flag)" if telemetry else
                                                "no flag woke it (the host passes found it)"))
        return True
    finally:
        end_processes(procs, daemon)
        log.close()
        left = remove_cgroups([d for c in cgs for d in (c.bw, c.v2 if c.v2 != c.bw else None)] +
                              [parent.bw, parent.v2 if parent.v2 != parent.bw else None])
        check(not left, f"{what}: the test's cgroups are removed ({left})")
        if failures:
            print(f"kept {base} (the daemon's log is bwgovd.log)", flush=True)
        else:
            shutil.rmtree(base, ignore_errors=True)


def main():
    if os.geteuid() != 0:
        skip("needs root for real cgroups")
    if mounts()[0] is None:
        skip("no cpu bandwidth controller (v2 cpu or v1 cpu) mounted")
    if not os.path.exists("/proc/pressure/cpu"):
        skip("no /proc/pressure/cpu: the brake reads host pressure")
    ran = [run(True), run(False)]
    sys.exit(1 if failures else 0 if any(ran) else 77)


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)      # main() returned early, after a failed check
