#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the run-queue telemetry costs the governed group itself, per switch.

bwgovd's BPF programs run on the scheduler's tracepoints (sched_wakeup,
sched_switch, sched_stat_runtime), in the context of whichever task is on
the CPU: a governed group that switches often pays for them out of its own
quota. This puts a loop that does nothing but switch into one governed
cgroup, bwgov-bench-swcost-PID (v2, or the v1 cpu hierarchy and its
cgroup2 twin of a hybrid host, quota 2 CPUs so that nothing throttles):
`perf bench sched pipe`, two processes ping-ponging over pipes, pinned to
one CPU so that each round trip is two switches on that CPU and the
group's CPU is the loop's cost alone (unpinned, where the pair lands
spreads the same work by half). Each repetition measures the group's
usage for --loops round trips without bwgovd, then with bwgovd governing
the group (its defaults: Telemetry=yes, so the programs are loaded), and
prints the medians and the cost per switch. With --bpf-stats the kernel's
own BPF run statistics (kernel.bpf_stats_enabled, put back afterwards)
give each program's runs and time too; they add two clock reads per run,
so the A/B figures of such a run are a little higher. With --outside the
loop runs in a second cgroup that bwgovd does not govern (-outside, no
quota) while it governs the first, idle: what the programs cost every other
task on the host, which they follow too (the host brake's outside waits).

Needs root, perf, and bwgovd built with BPF; exits 77 (skip) with the
reason otherwise. The cgroup and bwgovd's directory are removed at the end.

  sudo switchcost.py --bwgovd build-dev/src/daemon/bwgovd [--loops 300000] [--reps 3] [--cpu 1] [--bpf-stats] [--outside] [--json]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integration"))
from live_common import remove_cgroups  # noqa: E402
from live_governor import mounts  # noqa: E402

SKIP = 77
STATS = "/proc/sys/kernel/bpf_stats_enabled"


class Group:
    def __init__(self, name, quota=True):
        _, bw_root, v2_root = mounts()
        self.bw = os.path.join(bw_root, name)
        self.v2 = os.path.join(v2_root, name) if v2_root else None
        self.dirs = [self.bw] + ([self.v2] if self.v2 and self.v2 != self.bw else [])
        for d in self.dirs:
            os.mkdir(d)
        if not quota:
            return
        if self.v2 == self.bw:
            with open(os.path.join(self.bw, "cpu.max"), "w") as f:
                f.write("200000 100000")
        else:
            with open(os.path.join(self.bw, "cpu.cfs_quota_us"), "w") as f:
                f.write("200000")

    def usage_usec(self):
        if self.v2:
            for line in open(os.path.join(self.v2, "cpu.stat")):
                k, v = line.split()
                if k == "usage_usec":
                    return int(v)
        return int(open(os.path.join(self.bw, "cpuacct.usage")).read()) // 1000

    def run(self, argv):
        procs = [os.path.join(d, "cgroup.procs") for d in self.dirs]

        def enter():
            for p in procs:
                with open(p, "w") as f:
                    f.write(str(os.getpid()))
        subprocess.run(argv, preexec_fn=enter, stdout=subprocess.DEVNULL, check=True)


def programs():
    """{name: (run_time_ns, run_cnt)} of bwgovd's loaded programs."""
    out = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True).stdout
    return {p["name"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0)) for p in json.loads(out or "[]")
            if p.get("name", "").startswith("bw_")}


def daemon_start(bwgovd, base, cgroup):
    for d in ("conf/bench.d", "state", "run"):
        os.makedirs(os.path.join(base, d))
    with open(os.path.join(base, "conf", "bwgov.conf"), "w") as f:
        f.write("[Governor]\nHostPressureLimit=0%\nMetricsInterval=1s\n")
    with open(os.path.join(base, "conf", "bench.d", "10-bench.conf"), "w") as f:
        f.write(f"[Bandwidth]\nCgroup={cgroup}\nMode=elastic\n")
    log = open(os.path.join(base, "bwgovd.log"), "w")
    proc = subprocess.Popen([bwgovd, "--config-dir", os.path.join(base, "conf"), "--state-dir",
                             os.path.join(base, "state"), "--runtime-dir", os.path.join(base, "run")],
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if programs() and "bwgov_baseline_quota_usec" in open_or_empty(os.path.join(base, "run", "metrics.prom")):
            return proc
        time.sleep(0.1)
    proc.terminate()
    proc.wait(20)
    raise RuntimeError(f"bwgovd did not load its programs and adopt the cgroup (log in {base})")


def open_or_empty(path):
    try:
        return open(path).read()
    except OSError:
        return ""


def measure(group, argv, with_programs):
    u0, p0 = group.usage_usec(), programs()
    group.run(argv)
    u1, p1 = group.usage_usec(), programs()
    res = {"usage_s": (u1 - u0) / 1e6}
    if with_programs:
        res["programs"] = {k: {"runs": p1[k][1] - p0.get(k, (0, 0))[1], "ns": p1[k][0] - p0.get(k, (0, 0))[0]}
                           for k in p1}
    return res


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bwgovd", required=True, help="the bwgovd binary (built with BPF)")
    ap.add_argument("--loops", type=int, default=300000, help="round trips per measurement (two switches each)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions, each without and then with bwgovd")
    ap.add_argument("--cpu", type=int, default=1, help="the CPU the loop is pinned to")
    ap.add_argument("--bpf-stats", action="store_true",
                    help="turn on the kernel's BPF run statistics for the run: each program's runs and time")
    ap.add_argument("--outside", action="store_true",
                    help="run the loop in a cgroup bwgovd does not govern, beside the one it does")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    a = ap.parse_args(argv)

    if os.geteuid() != 0:
        print("SKIP: needs root to create cgroups and load BPF programs")
        return SKIP
    if not shutil.which("perf") or not shutil.which("bpftool"):
        print("SKIP: needs perf (perf bench sched pipe) and bpftool")
        return SKIP
    if mounts()[0] is None:
        print("SKIP: no cgroup CPU bandwidth controller")
        return SKIP
    if programs():
        print("SKIP: BPF programs named bw_* are loaded already (another bwgovd): they would count in both arms")
        return SKIP

    loop = ["taskset", "-c", str(a.cpu), "perf", "bench", "sched", "pipe", "-l", str(a.loops)]
    name = f"bwgov-bench-swcost-{os.getpid()}"
    group = Group(name)
    try:
        loop_group = Group(name + "-outside", quota=False) if a.outside else group
    except OSError:
        remove_cgroups(group.dirs)
        raise
    stats_before = open(STATS).read().strip() if a.bpf_stats else None
    runs = {"without": [], "with": []}
    proc = base = None
    try:
        if a.bpf_stats:
            with open(STATS, "w") as f:
                f.write("1")
        for rep in range(a.reps):
            runs["without"].append(measure(loop_group, loop, False))
            base = tempfile.mkdtemp(prefix="bwgov-bench-swcost-")
            os.rmdir(base)
            proc = daemon_start(a.bwgovd, base, name)
            runs["with"].append(measure(loop_group, loop, a.bpf_stats))
            proc.terminate()
            proc.wait(30)
            proc = None
            shutil.rmtree(base, ignore_errors=True)
            print(f"rep {rep + 1}/{a.reps}: {runs['without'][-1]['usage_s']:.3f} s without bwgovd, "
                  f"{runs['with'][-1]['usage_s']:.3f} s with it", file=sys.stderr, flush=True)
    except RuntimeError as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        if proc:
            proc.terminate()
            proc.wait(30)
        if stats_before is not None:
            with open(STATS, "w") as f:
                f.write(stats_before)
        remove_cgroups(group.dirs + (loop_group.dirs if loop_group is not group else []))

    med = {k: statistics.median(r["usage_s"] for r in v) for k, v in runs.items()}
    switches = 2 * a.loops
    res = {"loops": a.loops, "switches": switches, "reps": a.reps, "cpu": a.cpu, "bpf_stats": a.bpf_stats,
           "outside": a.outside,
           "usage_s": {k: [r["usage_s"] for r in v] for k, v in runs.items()}, "median_s": med,
           "cost_ns_per_switch": (med["with"] - med["without"]) * 1e9 / switches,
           "ratio": med["with"] / med["without"] if med["without"] else None}
    if a.bpf_stats:
        progs = {}
        for r in runs["with"]:
            for k, v in r["programs"].items():
                progs.setdefault(k, {"runs": 0, "ns": 0})
                progs[k]["runs"] += v["runs"]
                progs[k]["ns"] += v["ns"]
        res["programs"] = progs
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    fmt = lambda v: "[" + ", ".join(f"{x:.3f}" for x in v) + "]"   # noqa: E731
    where = "outside the governed group" if a.outside else "in the governed group"
    print(f"{switches} switches pinned to CPU {a.cpu} {where}, {a.reps} repetitions: the loop's CPU "
          f"{med['without']:.3f} s without bwgovd {fmt(res['usage_s']['without'])}, "
          f"{med['with']:.3f} s with it {fmt(res['usage_s']['with'])}: {res['ratio']:.2f}x, "
          f"{res['cost_ns_per_switch']:.0f} ns per switch")
    for k, v in sorted(res.get("programs", {}).items()):
        if v["runs"]:
            print(f"  {k:24s} {v['runs'] / a.reps / switches:5.2f} runs per switch, {v['ns'] / v['runs']:5.0f} ns per run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
