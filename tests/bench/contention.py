#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The contention benchmark (issue 15 part B, "controlled contention"): a
fixed-work mix of multi-threaded CPU- and cache-bound applications
(bwgov-mix, see WORKLOADS.md), each in a cgroup of its own, run

  solo           each alone, one after the other (their sum: the sequential time)
  cfs            all at once, no governor: the kernel's fair sharing
  gang-500ms/1s/2s   all at once under bwgovd Contention=gang, ContentionInterval= that long
  pin            all at once under bwgovd Contention=pin
  bwgov-default  all at once under bwgovd with the default configuration (Contention=share)

Every unit is Class=throughput. Reported: the makespan (start of all to the
end of the last) and each application's slowdown against its solo time,
as a markdown table, the slides' figures beside it. After each bwgovd run
the benchmark checks that nothing is left frozen and every cpuset is back.

  sudo tests/bench/contention.py [--quick] [--reps N] [--build DIR] [--out DIR]

Also run by tests/bench/run (--only contention). --quick: a third of the work,
one repetition (about 3 minutes on 2 CPUs). Needs root: exits 77 with "SKIP: ..."
otherwise."""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import cgroup as cgmod  # noqa: E402
from harness.governor import Bwgovd, NoTrace, parse_metrics, proc_stats  # noqa: E402

# name, kind, threads, rounds, Mops (full), working set KiB: PARSEC-like
# shapes. Solo on this 2-CPU host each takes about 7 to 10 s (full).
APPS = [
    ("blackscholes", "cpu", 2, 10, 2400, 0),        # embarrassingly parallel arithmetic
    ("swaptions", "cpu", 4, 200, 2400, 0),          # more threads than CPUs
    ("fluidanimate", "cpu", 3, 5000, 1800, 0),      # barrier after every few ms
    ("canneal", "cache", 2, 20, 80, 65536),         # memory-bound random walk, 64 MiB
    ("streamcluster", "cache", 2, 2000, 400, 4096), # 4 MiB set, frequent barriers
    ("dedup", "cache", 1, 100, 500, 1536),          # single-threaded, 1.5 MiB set (> L2)
]
QUICK_SCALE = 1 / 3
CONFIGS = ["cfs", "gang-500ms", "gang-1s", "gang-2s", "pin", "bwgov-default"]
SHARES = 10240          # each app against the rest of a shared host (equal among the apps)
PREFIX = cgmod.PREFIX + "cont-"

# The slides (8 PARSEC apps, 8 threads each, 8 CPUs): makespan in seconds.
SLIDES = {"solo": 293.4, "cfs": 242.3, "gang-500ms": 355.8, "gang-1s": 293.9, "gang-2s": 299.4}


def log(msg):
    print(f"[contention] {msg}", file=sys.stderr, flush=True)


def _read(p):
    with open(p) as f:
        return f.read().strip()


def _write(p, v):
    with open(p, "w") as f:
        f.write(str(v))


class AppCgroup(cgmod.Cgroup):
    """A bench cgroup that also has a cpuset: on a hybrid host a v1 cpuset
    directory of the same name (cpus and mems copied from the root, before
    any task joins); on v2 the cpuset controller enabled in the root's
    subtree (these cgroups are ours, directly under the root)."""

    def __init__(self, layout, name):
        super().__init__(layout, name)
        self.cpuset_dir = None
        if not self.is_v2 and os.path.isdir("/sys/fs/cgroup/cpuset"):
            self.cpuset_dir = os.path.join("/sys/fs/cgroup/cpuset", name)

    def create(self):
        if self.is_v2:
            sc = os.path.join(self.layout.v2, "cgroup.subtree_control")
            ctl = _read(os.path.join(self.layout.v2, "cgroup.controllers")).split()
            if "cpuset" in ctl and "cpuset" not in _read(sc).split():
                _write(sc, "+cpuset")
        super().create()
        if self.cpuset_dir:
            os.makedirs(self.cpuset_dir, exist_ok=True)
            for f in ("cpuset.cpus", "cpuset.mems"):
                _write(os.path.join(self.cpuset_dir, f), _read(os.path.join("/sys/fs/cgroup/cpuset", f)))
        return self

    def _enter(self):
        super()._enter()
        if self.cpuset_dir:
            _write(os.path.join(self.cpuset_dir, "cgroup.procs"), os.getpid())

    def lever_files(self):
        """{what: path} of the files Contention= may change."""
        out = {}
        if self.v2_dir:
            out["freeze"] = os.path.join(self.v2_dir, "cgroup.freeze")
        cs = self.cpuset_dir or (self.bw_dir if self.is_v2 else None)
        if cs and os.path.exists(os.path.join(cs, "cpuset.cpus")):
            out["cpus"] = os.path.join(cs, "cpuset.cpus")
        return out

    def lever_values(self):
        return {k: _read(v) for k, v in self.lever_files().items()}

    def destroy(self):
        w = super().destroy()
        if self.cpuset_dir and os.path.isdir(self.cpuset_dir):
            for _ in range(50):
                try:
                    os.rmdir(self.cpuset_dir)
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                w.append(f"could not remove {self.cpuset_dir}")
        return w


def app_argv(mix, app, scale):
    name, kind, threads, rounds, mops, ws = app
    a = [mix, f"--kind={kind}", f"--threads={threads}", f"--rounds={rounds}", f"--mops={mops * scale:.3f}"]
    if ws:
        a.append(f"--ws-kib={ws}")
    return a


def run_apps(cgs, apps, mix, scale):
    """Start every app at once in its cgroup; returns ({app: wall s from the
    common start to its exit}, makespan, {app: its JSON})."""
    t0 = time.monotonic()
    procs = {}
    for cg, app in zip(cgs, apps):
        procs[app[0]] = cg.spawn(app_argv(mix, app, scale), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True)
    ends, out = {}, {}
    pending = dict(procs)
    while pending:
        for n, p in list(pending.items()):
            if p.poll() is not None:
                ends[n] = time.monotonic() - t0
                del pending[n]
        time.sleep(0.01)
    for n, p in procs.items():
        try:
            out[n] = json.loads(p.stdout.read().strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RuntimeError(f"{n} printed no result (exit status {p.returncode})")
        if p.returncode != 0 or out[n].get("interrupted"):
            raise RuntimeError(f"{n} failed (exit status {p.returncode})")
    for cg in cgs:
        cg.procs = []
    return ends, max(ends.values()), out


def governor_for(config, bins, workdir, cgs):
    """bwgovd over the apps' cgroups for a configuration, or None (cfs)."""
    if config == "cfs":
        return None
    g = {}
    if config.startswith("gang-"):
        g = {"Contention": "gang", "ContentionInterval": config[5:]}
    elif config == "pin":
        g = {"Contention": "pin"}
    # Unlimited cgroups: bwgovd adopts "max" and leaves cpu.max alone; only
    # Contention= acts. bwgov-default is the shipped configuration.
    return Bwgovd(bins["bwgovd"], workdir, [cg.name for cg in cgs], "elastic", 5.0, 300.0,
                  extra_unit={"Class": "throughput"}, extra_global=g)


def check_restored(cgs, before, config):
    """After bwgovd stopped: nothing frozen, every cpuset as it was."""
    problems = []
    for cg in cgs:
        now = cg.lever_values()
        for k, v in before[cg.name].items():
            if now.get(k) != v:
                problems.append(f"{config}: {cg.name} {k} is {now.get(k)!r}, was {v!r}")
    return problems


def one_parallel(config, cgs, bins, scale, workdir):
    before = {cg.name: cg.lever_values() for cg in cgs}
    gov = governor_for(config, bins, workdir, cgs)
    if gov:
        trace_path = os.path.join(workdir, "trace")
        ok = gov.start(NoTrace(trace_path), [], timeout=20.0, ready_metric="bwgov_baseline_burst_usec")
        if not ok:
            raise RuntimeError(f"bwgovd did not start: {' | '.join(gov.log_tail(5))}")
    gov_cpu = None
    try:
        ends, makespan, out = run_apps(cgs, APPS, bins["bwgov-mix"], scale)
        if gov and gov.pid:
            gov_cpu = proc_stats(gov.pid)["cpu_s"]
    finally:
        if gov:
            gov.stop()
    problems = check_restored(cgs, before, config)
    return {"config": config, "ends": ends, "makespan": makespan, "bwgovd_cpu_s": gov_cpu,
            "cpu_s": {n: o["cpu_s"] for n, o in out.items()}, "restore_problems": problems}


def solo(cgs, bins, scale):
    res = {}
    for cg, app in zip(cgs, APPS):
        ends, makespan, out = run_apps([cg], [app], bins["bwgov-mix"], scale)
        res[app[0]] = {"wall": makespan, "cpu_s": out[app[0]]["cpu_s"]}
        log(f"solo {app[0]}: {makespan:.2f} s")
    return res


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def default_vs_cfs(results):
    """bwgov's default against CFS, paired by repetition (the same solo
    runs, adjacent in time): each pair's difference, their mean with a 95 %
    interval (t distribution), and bwgovd's own CPU time, the one thing it
    adds with Contention=share to groups it has no limit to govern."""
    pairs = [(r["parallel"]["bwgov-default"]["makespan"], r["parallel"]["cfs"]["makespan"],
              r["parallel"]["bwgov-default"].get("bwgovd_cpu_s")) for r in results
             if "bwgov-default" in r["parallel"] and "cfs" in r["parallel"]]
    if not pairs:
        return []
    d = [a - b for a, b, _ in pairs]
    mean = statistics.mean(d)
    # t quantiles (0.975) for n-1 degrees of freedom, n up to 12.
    t = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 11: 2.20}
    half = t.get(len(d) - 1, 2.0) * statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
    cpu = [c for _, _, c in pairs if c is not None]
    ratio = statistics.median(a / b for a, b, _ in pairs)
    worse = len(d) > 1 and mean - half > 0
    return ["", f"bwgov default against CFS, {len(d)} paired repetition(s): makespan differences "
            + ", ".join(f"{x:+.2f}" for x in d) + f" s; mean {mean:+.2f} s"
            + (f" ± {half:.2f} (95 %)" if len(d) > 1 else "")
            + f", median ratio {ratio:.3f}; bwgovd's own CPU time "
            + (", ".join(f"{c:.3f}" for c in cpu) + " s per run" if cpu else "not measured")
            + (". Worse than CFS beyond the noise." if worse else
               ". Not worse than CFS beyond the noise." if len(d) > 1 else ".")]


def markdown(results, meta):
    names = [a[0] for a in APPS]
    solo_wall = {n: median([r["solo"][n]["wall"] for r in results]) for n in names}
    seq = sum(solo_wall.values())
    lines = [f"Contention benchmark: {len(APPS)} applications (bwgov-mix), {meta['cpus']} CPUs, "
             f"layout {meta['layout']}, kernel {meta['kernel']}, {meta['reps']} repetition(s), "
             f"{'quick (a third of the work)' if meta['quick'] else 'full work'}; medians, [min–max] of the makespan.",
             "",
             "| configuration | makespan s | vs CFS | " + " | ".join(names) + " | slides (8 PARSEC apps) |",
             "|---|---|---|" + "---|" * len(names) + "---|",
             f"| solo, in sequence | {seq:.1f} | | " + " | ".join(f"{solo_wall[n]:.1f} s" for n in names) +
             f" | {SLIDES['solo']} s |"]
    cfs = median([r["parallel"]["cfs"]["makespan"] for r in results if "cfs" in r["parallel"]])
    for c in CONFIGS:
        runs = [r["parallel"][c] for r in results if c in r["parallel"]]
        if not runs:
            continue
        ms = [x["makespan"] for x in runs]
        slow = {n: median([x["ends"][n] / solo_wall[n] for x in runs]) for n in names}
        label = {"cfs": "all at once, CFS", "pin": "bwgovd Contention=pin",
                 "bwgov-default": "bwgovd default (Contention=share)"}.get(c, f"bwgovd Contention=gang, {c[5:]}")
        lines.append(f"| {label} | {median(ms):.1f} [{min(ms):.1f}–{max(ms):.1f}] | {median(ms) / cfs:.2f} | " +
                     " | ".join(f"×{slow[n]:.2f}" for n in names) +
                     (f" | {SLIDES[c]} s |" if c in SLIDES else " | |"))
    lines += ["", "Per application: its slowdown, its time from the common start to its exit over its solo time. "
              "vs CFS: makespan over the CFS makespan (1.00 = the same)."]
    lines += default_vs_cfs(results)
    probs = [p for r in results for x in r["parallel"].values() for p in x["restore_problems"]]
    lines.append("Levers after each bwgovd stop: " + ("all restored (nothing frozen, cpusets as before)." if not probs
                                                      else "NOT restored: " + "; ".join(probs)))
    return "\n".join(lines) + "\n", probs


def run(bins, layout, out, quick, reps, workdir, configs=None):
    """The benchmark: returns (markdown, problems)."""
    configs = configs or CONFIGS
    scale = QUICK_SCALE if quick else 1.0
    cgs = []
    results = []
    try:
        for app in APPS:
            cg = AppCgroup(layout, PREFIX + app[0]).create()
            cg.set_weight(SHARES)
            cgs.append(cg)
        for rep in range(reps):
            r = {"solo": solo(cgs, bins, scale), "parallel": {}}
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            for c in order:
                wd = os.path.join(workdir, f"{c}-{rep}")
                os.makedirs(wd, exist_ok=True)
                x = one_parallel(c, cgs, bins, scale, wd)
                r["parallel"][c] = x
                log(f"rep {rep + 1} {c}: makespan {x['makespan']:.2f} s"
                    + (f"; NOT RESTORED: {x['restore_problems']}" if x["restore_problems"] else ""))
            results.append(r)
    finally:
        for cg in cgs:
            for w in cg.destroy():
                log(f"warning: {w}")
    meta = {"cpus": os.cpu_count(), "layout": layout.kind, "kernel": os.uname().release, "reps": reps,
            "quick": quick, "date": time.strftime("%Y-%m-%d %H:%M %Z"), "loadavg": os.getloadavg(),
            "apps": [dict(zip(("name", "kind", "threads", "rounds", "mops", "ws_kib"), a)) for a in APPS]}
    md, probs = markdown(results, meta)
    with open(os.path.join(out, "contention.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    with open(os.path.join(out, "contention.md"), "w") as f:
        f.write(md)
    return md, probs


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="a third of the work, one repetition (about 3 minutes on 2 CPUs)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 1 with --quick, else 2)")
    ap.add_argument("--build", default=os.path.join(REPO, "build-bench"),
                    help="meson build directory, configured and built if needed (default: build-bench)")
    ap.add_argument("--out", default=None, help="output directory (default: ./bench-out-contention-DATE)")
    ap.add_argument("--configs", default=None,
                    help="comma-separated subset of " + ",".join(CONFIGS) + " (default: all)")
    a = ap.parse_args(argv)
    configs = a.configs.split(",") if a.configs else None
    if configs and any(c not in CONFIGS for c in configs):
        ap.error(f"--configs: expected names from {','.join(CONFIGS)}")
    if os.geteuid() != 0:
        print("SKIP: the contention benchmark creates cgroups and must run as root")
        return 77
    layout = cgmod.detect()
    if layout is None:
        print("SKIP: no cgroup CPU controller")
        return 77
    build = os.path.abspath(a.build)
    if not os.path.isfile(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, REPO], check=True, stdout=sys.stderr)
    subprocess.run(["ninja", "-C", build], check=True, stdout=subprocess.DEVNULL)
    bins = {"bwgovd": os.path.join(build, "src", "daemon", "bwgovd"),
            "bwgov-mix": os.path.join(build, "tests", "bench", "bwgov-mix")}
    def on_signal(signo, frame):
        raise KeyboardInterrupt
    # SIGTERM (and SIGINT, ignored in a background job) clean up: apps killed, cgroups removed.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    out = os.path.abspath(a.out or f"bench-out-contention-{time.strftime('%Y%m%d-%H%M%S')}")
    os.makedirs(out, exist_ok=True)
    md, probs = run(bins, layout, out, a.quick, a.reps or (1 if a.quick else 2), os.path.join(out, "raw"), configs)
    print(md)
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
