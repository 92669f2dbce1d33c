#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Latency protection (issue 15 part A, issue 35): a latency-sensitive
request server beside a hackbench antagonist, side by side in one run,
measured from the antagonist's start.

Two bench cgroups per run, siblings under a parent bwgov-bench-lat-PID-N: the
latency group .../lat runs bwgov-wakeup (4 workers, 200 us requests, 1-5 ms gaps:
about 0.25 CPU; each worker records its own wake-up latency), the antagonist
group .../ant runs hackbench over and over, at three strengths: "normal"
`hackbench -g 4 -l 500` (160 tasks), "heavy" `hackbench -g 8 -s 1000 -l
200` (320 tasks, ten times the message size) and "threads" `hackbench -p -T
-g 8 -l 2000` (320 threads of one process over pipes). The server runs alone for the
warm-up (2 s; bwgovd already governs it), then the antagonist starts and the
measured window opens with it: bwgovd's reaction is measured, and the
first 2 s are reported apart (bwgov-wakeup --early=2). The parent has the
bench weight against the rest of the host (--shares, 10240 as in
tests/bench/run), the two groups the default weight (1024) against each
other, so that what a row does to their weights changes only how they share
the parent, not how much other load on the host takes. On a hybrid host each
is a v1 cpu cgroup with its v2 twin (usage, PSI, cgroup.kill). Rows, each
antagonist row once per strength (":heavy" after the name for the heavy one):

  alone                  the server alone (its baseline)
  cfs                    beside the antagonist, equal weights (plain CFS)
  static                 the latency group's weight ×10 by hand
  static-idle            ×10 and the antagonist in cpu.idle by hand (best effort by hand)
  bwgovd-throughput      bwgovd: latency group Class=latency, LatencyTarget=;
                         antagonist Class=throughput; weights equal to start with
  bwgovd-best-effort     the same with the antagonist Class=best-effort
  ant-alone              the antagonist alone (its throughput baseline)

Figures: the server's wake-up latency p50/p99/p99.9/max (its own) over the
whole window and p99 over its first 2 s, ÷ alone; the antagonist's throughput
in messages/s from hackbench's own "Time:" over the runs that fall wholly
inside the server's measured window, ÷ plain CFS of the same strength; the
run-queue wait p99 of the latency group from bwgovd's telemetry (the
governing bwgovd, or one in Mode=observe in the other rows), and what bwgovd
did (the groups' weight and cpu.idle sampled every 100 ms, the workers'
EEVDF slices). Targets (issue 35), both strengths, both antagonist classes:
p99 ≤ 3× alone and ≤ 0.1× plain CFS over the whole window, ≤ 5× alone over
the first 2 s; the antagonist ≥ 80 % of its plain CFS throughput beside a
throughput-class unit.

  sudo tests/bench/latency.py [--quick] [--out DIR] [--build DIR] [--reps N]
                              [--strengths normal,heavy,threads] [--configs ROWS]
                              [--outside-load N]

--outside-load N runs N busy loops outside the run's parent group for the
whole benchmark, each pinned to one of the last N CPUs: what a lever does
to the groups' share against the rest of the host shows in the
antagonist's throughput (a group in cpu.idle, or one whose sibling's
weight is extreme, leaves its parent little weight on the CPUs where it
runs alone; measured with one loop: a throughput antagonist in cpu.idle
kept 43 % of its plain CFS throughput, at weight-high 93-97 %).

Writes DIR/latency.json and DIR/latency.md. tests/bench/run runs it too
(--only latency for it alone, --no-latency to leave it out). Exits 77
("SKIP: ...") without root, a CPU controller or hackbench.
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import cgroup as cgmod  # noqa: E402
from harness.cgroup import kill_cgroup  # noqa: E402
from harness import telemetry as tm  # noqa: E402
from harness.governor import Bwgovd, WriteTrace, stop_pid  # noqa: E402

# name: (server, antagonist, latency weight × base, antagonist in cpu.idle, bwgovd class of the antagonist)
CONFIGS = {
    "alone": (True, False, 1, False, None),
    "cfs": (True, True, 1, False, None),
    "static": (True, True, 10, False, None),
    "static-idle": (True, True, 10, True, None),
    "bwgovd-throughput": (True, True, 1, False, "throughput"),
    "bwgovd-best-effort": (True, True, 1, False, "best-effort"),
    "ant-alone": (False, True, 1, False, None),
}
# Antagonist strengths: hackbench's arguments and the messages one run sends
# (groups × 20 senders × 20 receivers × loops). "normal" is the issue 15
# antagonist; "heavy" has twice the groups and ten times the message size;
# "threads" twice the groups as threads over pipes (320 threads of one
# process, starting at once: plain CFS leaves the server 0.15-0.5 s p99).
STRENGTHS = {
    "normal": (["-g", "4", "-l", "500"], 4 * 20 * 20 * 500),
    "heavy": (["-g", "8", "-s", "1000", "-l", "200"], 8 * 20 * 20 * 200),
    "threads": (["-p", "-T", "-g", "8", "-l", "2000"], 8 * 20 * 20 * 2000),
}
STRENGTH_TITLES = {"normal": "", "heavy": ", heavy antagonist", "threads": ", threads antagonist"}
PER_STRENGTH = ["cfs", "static", "static-idle", "bwgovd-throughput", "bwgovd-best-effort", "ant-alone"]


def row_base(cfg):
    """The configuration of a row ("cfs:heavy" -> "cfs")."""
    return cfg.split(":")[0]


def row_strength(cfg):
    """The antagonist strength of a row ("cfs:heavy" -> "heavy", "cfs" -> "normal")."""
    return cfg.split(":")[1] if ":" in cfg else "normal"


def with_strength(cfg, st):
    return cfg if st == "normal" else f"{cfg}:{st}"


def row_order(strengths):
    """Every row: the server alone, then each strength's rows."""
    return ["alone"] + [with_strength(c, st) for st in strengths for c in PER_STRENGTH]


ORDER = row_order(list(STRENGTHS))
TITLES = {
    "alone": "server alone",
    "cfs": "plain CFS (equal weights)",
    "static": "static: latency weight ×10",
    "static-idle": "static: ×10, antagonist cpu.idle",
    "bwgovd-throughput": "bwgovd, antagonist Class=throughput",
    "bwgovd-best-effort": "bwgovd, antagonist Class=best-effort",
    "ant-alone": "antagonist alone",
}
STATIC_MULT = 10
HACKBENCH, MESSAGES_PER_RUN = STRENGTHS["normal"]


def row_title(cfg):
    return TITLES[row_base(cfg)] + STRENGTH_TITLES[row_strength(cfg)]


SERVER = ["--workers=4", "--cost-us=200", "--gap-min-ms=1", "--gap-max-ms=5"]
LATENCY_TARGET = "500us"
# The server runs alone for warmup_s (bwgovd governing it already), then the
# antagonist starts and the measured window with it: bwgovd's reaction is
# measured, not skipped. EARLY_S: the first seconds apart.
SIZES = {True: {"reps": 2, "warmup_s": 2.0, "duration_s": 10.0},       # --quick
         False: {"reps": 5, "warmup_s": 2.0, "duration_s": 20.0}}
EARLY_S = 2.0
SAMPLE_S = 0.1
# Targets (issue 35), for both antagonist strengths and both classes of the
# antagonist: p99 over the whole window ≤ 3× alone and ≤ 0.1× plain CFS, over
# the first EARLY_S ≤ 5× alone; the antagonist ≥ 80 % of its plain CFS
# throughput beside a throughput-class unit.
P99_LIMIT = 3.0
CFS_FACTOR = 10.0
EARLY_LIMIT = 5.0
TP_THROUGHPUT_MIN = 0.8


def log(msg):
    print(f"[latency] {msg}", file=sys.stderr, flush=True)


class Skip(Exception):
    """The benchmark cannot run here; the message says why."""


def preflight(layout):
    if os.geteuid() != 0:
        return "the latency benchmark creates cgroups: it must run as root"
    if layout is None:
        return "no cgroup CPU controller (need cgroup v2 with cpu, or a v1 cpu hierarchy)"
    if not shutil.which("hackbench"):
        return "hackbench not found (Debian package rt-tests)"
    return None


def _loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError):
        return None


def _host_psi_some():
    try:
        with open("/proc/pressure/cpu") as f:
            return cgmod.parse_psi(f.read()).get("some")
    except OSError:
        return None


def _host_busy_s():
    """CPU-seconds the host has been busy (all CPUs: user, nice, system,
    irq, softirq, steal of /proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


_TIME = re.compile(r"^Time:\s*([\d.]+)", re.M)


def parse_time(out):
    m = _TIME.search(out or "")
    return float(m.group(1)) if m else None


# ---- the groups' knobs -----------------------------------------------------

def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def weight_file(cg):
    return os.path.join(cg.bw_dir, "cpu.weight" if cg.is_v2 else "cpu.shares")


def knobs(cg):
    """(weight as the kernel holds it: cpu.shares on v1, cpu.weight on v2; cpu.idle)."""
    w = _read(weight_file(cg))
    i = _read(os.path.join(cg.bw_dir, "cpu.idle"))
    return (int(w) if w and w.lstrip("-").isdigit() else w, int(i) if i and i.isdigit() else i)


def set_idle(cg, on):
    with open(os.path.join(cg.bw_dir, "cpu.idle"), "w") as f:
        f.write("1" if on else "0")


class KnobSampler(threading.Thread):
    """Every SAMPLE_S: each group's weight and cpu.idle; keeps the changes
    as events (t from t0, group, knob, old, new)."""

    def __init__(self, groups, t0):
        super().__init__(daemon=True)
        self.groups, self.t0 = groups, t0
        self.last = {n: knobs(cg) for n, cg in groups.items()}
        self.initial = dict(self.last)
        self.events = []
        self.halt = threading.Event()

    def sample(self):
        t = round(time.monotonic() - self.t0, 2)
        for n, cg in self.groups.items():
            k = knobs(cg)
            for i, name in enumerate(("weight", "idle")):
                if k[i] != self.last[n][i]:
                    self.events.append([t, n, name, self.last[n][i], k[i]])
            self.last[n] = k

    def run(self):
        while not self.halt.wait(SAMPLE_S):
            self.sample()

    def stop(self):
        self.halt.set()
        self.join(2)
        self.sample()


# ---- the antagonist ----------------------------------------------------------

class Antagonist(threading.Thread):
    """hackbench over and over in the antagonist cgroup; one record per run:
    start and end (monotonic s), hackbench's Time:, exit status."""

    def __init__(self, cg, argv, messages=MESSAGES_PER_RUN):
        super().__init__(daemon=True)
        self.cg, self.argv, self.messages = cg, argv, messages
        self.runs = []
        self.halt = threading.Event()
        self.error = None

    def run(self):
        try:
            while not self.halt.is_set():
                t0 = time.monotonic()
                p = self.cg.spawn(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                out, _ = p.communicate()
                t1 = time.monotonic()
                self.cg.procs = [x for x in self.cg.procs if x.poll() is None]
                if not self.halt.is_set():
                    self.runs.append({"start": t0, "end": t1, "time_s": parse_time(out), "rc": p.returncode})
                    if p.returncode != 0:
                        self.error = f"hackbench exited with {p.returncode}: {(out or '').strip()[-200:]}"
                        return
        except OSError as e:
            self.error = f"{type(e).__name__}: {e}"

    def stop(self):
        self.halt.set()
        left = kill_cgroup(self.cg)
        self.join(30)
        return left

    def throughput(self, w0, w1):
        """Messages/s from hackbench's own Time: over the runs wholly inside
        [w0, w1], and those runs; when no run fits inside (a starved
        antagonist), over the runs that spent at least half their time in it
        (then the third value is False)."""
        ok = [r for r in self.runs if r["time_s"] and r["rc"] == 0]
        inside = [r for r in ok if r["start"] >= w0 and r["end"] <= w1]
        whole = bool(inside)
        if not inside:
            inside = [r for r in ok if min(r["end"], w1) - max(r["start"], w0) >= (r["end"] - r["start"]) / 2]
        t = sum(r["time_s"] for r in inside)
        return (self.messages * len(inside) / t if t > 0 else None), inside, whole

    def wall_throughput(self, w0, w1):
        """Messages/s over the window by wall clock: each run's messages
        counted in proportion to the part of its wall time inside the window
        (hackbench's start-up and exit included)."""
        n = 0.0
        for r in self.runs:
            d = r["end"] - r["start"]
            o = min(r["end"], w1) - max(r["start"], w0)
            if d > 0 and o > 0 and r["rc"] == 0:
                n += self.messages * o / d
        return n / (w1 - w0) if w1 > w0 else None


# ---- one run -----------------------------------------------------------------

CHILD_SHARES = 1024


class Bench:
    def __init__(self, bins, layout, workdir, sizes, shares, latency_target, cpu_guarantee, log=log):
        self.bins, self.layout, self.workdir = bins, layout, workdir
        self.sizes, self.shares = sizes, shares
        self.latency_target, self.cpu_guarantee = latency_target, cpu_guarantee
        self.log = log
        self.seq = 0

    def _cgroup(self, name):
        cg = cgmod.Cgroup(self.layout, name).create()
        return cg

    def _parent(self, name):
        """The run's parent group: the bench weight against the host, and
        the cpu controller for its children on a v2 host."""
        p = self._cgroup(name)
        if self.shares:
            p.set_weight(self.shares)
        if p.is_v2:
            sc = os.path.join(p.bw_dir, "cgroup.subtree_control")
            if "cpu" not in (_read(sc) or "").split():
                with open(sc, "w") as f:
                    f.write("+cpu")
        return p

    def run(self, config, rep):
        server, ant_on, mult, ant_idle, ant_class = CONFIGS[row_base(config)]
        hb_args, hb_messages = STRENGTHS[row_strength(config)]
        self.seq += 1
        base = f"{cgmod.PREFIX}lat-{os.getpid()}-{self.seq}"
        rundir = os.path.join(self.workdir, f"{config}-{rep}")
        os.makedirs(rundir, exist_ok=True)
        rec = {"config": config, "rep": rep, "ok": False, "cgroups": [base + "/lat", base + "/ant"],
               "loadavg_start": _loadavg()}
        parent = lat = ant = None
        gov = trace = obs = obs_trace = antag = None
        sp = None
        sampler = None
        try:
            parent = self._parent(base)
            lat = self._cgroup(base + "/lat")
            ant = self._cgroup(base + "/ant")
            for cg in (lat, ant):
                cg.set(None, 100000)
            lat.set_weight(CHILD_SHARES * mult)
            ant.set_weight(CHILD_SHARES)
            if ant_idle:
                set_idle(ant, True)
            rec["weights_set"] = {"lat": knobs(lat), "ant": knobs(ant)}

            socket_unit = None
            # Units named without the "/", with Cgroup= the path.
            lat_u, ant_u = base + "-lat", base + "-ant"
            if ant_class:
                per_unit = {lat_u: {"Cgroup": lat.name, "Class": "latency", "LatencyTarget": self.latency_target},
                            ant_u: {"Cgroup": ant.name, "Class": ant_class}}
                if self.cpu_guarantee:
                    per_unit[lat_u]["CPUGuarantee"] = self.cpu_guarantee
                gov = Bwgovd(self.bins["bwgovd"], os.path.join(rundir, "gov"), [lat_u, ant_u], "elastic",
                             None, None, per_unit=per_unit)
                trace = WriteTrace(os.path.join(rundir, "writes.strace"))
                started = gov.start(trace, [f for cg in (lat, ant) for f in cg.bandwidth_files().values()],
                                    ready_metric="bwgov_baseline_burst_usec")
                if not started:
                    raise RuntimeError("bwgovd did not adopt the groups: " + " | ".join(gov.log_tail(5)))
                socket_unit = (gov, lat_u)
            elif server:
                # The same instrument in every row: a bwgovd in Mode=observe
                # over the latency group counts its run-queue waits.
                obs = Bwgovd(self.bins["bwgovd"], os.path.join(rundir, "observer"), [lat_u], "observe", None, None,
                             per_unit={lat_u: {"Cgroup": lat.name}})
                obs_trace = WriteTrace(os.path.join(rundir, "observer.strace"))
                if obs.start(obs_trace, list(lat.bandwidth_files().values()), ready_metric="bwgov_baseline_burst_usec"):
                    socket_unit = (obs, lat_u)
                else:
                    rec["rq_reason"] = "the Mode=observe bwgovd did not start: " + " | ".join(obs.log_tail(3))
            rq_ok = False
            if socket_unit and self.bins.get("bwgovctl"):
                d, unit = socket_unit
                first = tm.wait_counting(self.bins["bwgovctl"], d.socket, unit, timeout=10,
                                         alive=lambda: d.proc.poll() is None)
                rq_ok = bool(first and first.get("available"))
                if not rq_ok:
                    rec["rq_reason"] = (first or {}).get("reason") or "bwgovctl latency did not answer"

            warm, dur = self.sizes["warmup_s"], self.sizes["duration_s"]
            res = None
            l0 = None
            if server:
                argv = [self.bins["bwgov-wakeup"]] + SERVER + [f"--duration={dur:g}", f"--warmup={warm:g}",
                                                              f"--seed={rep + 1}", f"--early={min(EARLY_S, dur):g}"]
                errf = open(os.path.join(rundir, "server.err"), "w")
                sp = lat.spawn(argv, stdout=subprocess.PIPE, stderr=errf, text=True)
                errf.close()
            # The window opens when the antagonist starts (the server's own
            # window: its warm-up is the time it runs alone first).
            # A little after the server's window opens (its clock starts 5 ms
            # after exec), so that the window holds the antagonist's start.
            w0 = time.monotonic() + warm + 0.03
            sampler = KnobSampler({"lat": lat, "ant": ant}, w0)
            sampler.start()
            time.sleep(max(0.0, w0 - time.monotonic()))
            if ant_on:
                antag = Antagonist(ant, ["hackbench"] + hb_args, hb_messages)
                rec["antagonist_start"] = time.monotonic()
                antag.start()
            u0 = {"lat": lat.stat(), "ant": ant.stat(), "parent": parent.stat()}
            h0, b0 = _host_psi_some(), _host_busy_s()
            if rq_ok and server:
                l0 = tm.latency(self.bins["bwgovctl"], socket_unit[0].socket, socket_unit[1])
            if server:
                out, _ = sp.communicate(timeout=warm + dur + 60)
                if sp.returncode != 0:
                    raise RuntimeError(f"bwgov-wakeup exited with {sp.returncode}")
                res = json.loads(next(x for x in reversed(out.strip().splitlines()) if x.startswith("{")))
                # The server's own window (CLOCK_MONOTONIC, the clock of time.monotonic()).
                w0 = res["measure_start_ns"] / 1e9
                w1 = res["measure_end_ns"] / 1e9
                if ant_on:
                    rec["antagonist_offset_s"] = rec["antagonist_start"] - w0
            else:
                time.sleep(dur)
                w1 = time.monotonic()
            if antag and antag.error:
                raise RuntimeError(f"antagonist: {antag.error}")
            u1 = {"lat": lat.stat(), "ant": ant.stat(), "parent": parent.stat()}
            h1, b1 = _host_psi_some(), _host_busy_s()
            if l0 is not None:
                l1 = tm.latency(self.bins["bwgovctl"], socket_unit[0].socket, socket_unit[1])
                rec["rq"] = tm.window(l0, l1)
            if gov:
                rec["bwgovd"] = self._bwgovd_state(gov, [lat_u, ant_u])
                rec["ladder"] = ladder(gov.log)
            sampler.stop()
            rec["knobs"] = {"initial": sampler.initial, "events": sampler.events,
                            "final": {n: knobs(c) for n, c in (("lat", lat), ("ant", ant))}}
            if antag:
                left = antag.stop()
                if left:
                    rec["warning"] = f"antagonist processes left after SIGKILL: {left[:10]}"
                if antag.error:
                    raise RuntimeError(f"antagonist: {antag.error}")
                rate, inside, whole = antag.throughput(w0, w1)
                rec["antagonist"] = {"msgs_per_s": rate, "runs_inside": len(inside), "runs_whole": whole,
                                     "runs": len(antag.runs), "wall_msgs_per_s": antag.wall_throughput(w0, w1),
                                     "time_s": [r["time_s"] for r in inside],
                                     "cpu_s": (u1["ant"]["usage_usec"] - u0["ant"]["usage_usec"]) / 1e6}
            span = w1 - w0
            rec.update({"ok": True, "result": res, "window_s": span,
                        "lat_cpu_s": (u1["lat"]["usage_usec"] - u0["lat"]["usage_usec"]) / 1e6,
                        "lat_psi_some_ms_per_s": (u1["lat"]["psi_some_usec"] - u0["lat"]["psi_some_usec"]) / 1000 / span
                        if span > 0 else None,
                        "host_psi_some_ms_per_s": (h1 - h0) / 1000 / span if h0 is not None and h1 is not None
                        and span > 0 else None,
                        # CPUs busy on the host outside the run's groups (other work, the kernel's, the harness's)
                        "other_cpus": ((b1 - b0) - (u1["parent"]["usage_usec"] - u0["parent"]["usage_usec"]) / 1e6)
                        / span if b0 is not None and b1 is not None and span > 0 else None})
        except Exception as e:       # a failed run is recorded, the benchmark goes on
            rec["error"] = f"{type(e).__name__}: {e}"
            self.log(f"{config} rep {rep + 1}: {rec['error']}")
        finally:
            if sampler and sampler.is_alive():
                sampler.stop()
            if sp is not None:
                cgmod.kill_and_reap(sp, timeout=5)
            if antag and antag.is_alive():
                antag.stop()
            for d, tr in ((gov, trace), (obs, obs_trace)):
                if d and d.proc:
                    try:
                        rc = d.stop()
                        if d is gov:
                            rec["bwgovd_exit_status"] = rc
                    except Exception:
                        stop_pid(tr.proc)
            for cg in (lat, ant, parent):
                if cg is None:
                    continue
                if cg is ant:
                    kill_cgroup(cg)
                for w in cg.destroy():
                    self.log(f"warning: {w}")
        return rec

    def _bwgovd_state(self, gov, units):
        """What bwgovd says about the units at the end of the window: explain
        and show (JSON when it gives it), for the report's actions."""
        out = {}
        ctl = self.bins.get("bwgovctl")
        if not ctl:
            return out
        for u in units:
            for cmd in ("explain", "show"):
                try:
                    p = tm.ctl(ctl, gov.socket, cmd, u, "--json", timeout=10)
                    try:
                        out.setdefault(u, {})[cmd] = json.loads(p.stdout) if p.returncode == 0 else \
                            {"exit": p.returncode, "stderr": p.stderr.strip()[-300:]}
                    except ValueError:
                        out.setdefault(u, {})[cmd] = {"text": p.stdout[-2000:]}
                except (OSError, subprocess.TimeoutExpired) as e:
                    out.setdefault(u, {})[cmd] = {"error": str(e)}
        return out


# ---- summary -----------------------------------------------------------------

_LADDER = re.compile(r'protection (up|down) to "([a-z-]+)"')


def ladder(log_path):
    """The rungs bwgovd's latency ladder took, in order, from its log
    ("... protection up to "weight"")."""
    try:
        with open(log_path, errors="replace") as f:
            return [m.group(2) for m in map(_LADDER.search, f) if m]
    except OSError:
        return []


def _summary(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def _get(rec, path):
    d = rec
    for k in path.split("."):
        if not isinstance(d, dict) or d.get(k) is None:
            return None
        d = d[k]
    return d


MEASURES = {
    "p50_us": "result.wakeup_us.p50",
    "p90_us": "result.wakeup_us.p90",
    "p99_us": "result.wakeup_us.p99",
    "p99_early_us": "result.wakeup_early_us.p99",
    "p999_us": "result.wakeup_us.p999",
    "max_us": "result.wakeup_us.max",
    "mean_us": "result.wakeup_us.mean",
    "over_1ms": "result.over_1ms",
    "requests": "result.requests",
    "kmsg_per_s": None,
    "ant_cpu_s": "antagonist.cpu_s",
    "ant_runs_inside": "antagonist.runs_inside",
    "rq_p99_us": "rq.p99_usec",
    "rq_p50_us": "rq.p50_usec",
    "lat_psi_some_ms_per_s": "lat_psi_some_ms_per_s",
    "host_psi_some_ms_per_s": "host_psi_some_ms_per_s",
    "other_cpus": "other_cpus",
}


def aggregate(runs, configs):
    agg = {}
    for cfg in configs:
        rs = [r for r in runs if r["config"] == cfg and r.get("ok")]
        a = {"runs": len(rs), "failed": len([r for r in runs if r["config"] == cfg and not r.get("ok")])}
        for k, path in MEASURES.items():
            if k == "kmsg_per_s":
                a[k] = _summary([(_get(r, "antagonist.msgs_per_s") or 0) / 1000 or None for r in rs])
            else:
                a[k] = _summary([_get(r, path) for r in rs])
        a["p99_per_rep"] = {r["rep"]: _get(r, "result.wakeup_us.p99") for r in rs}
        a["kmsg_per_rep"] = {r["rep"]: (_get(r, "antagonist.msgs_per_s") or 0) / 1000 or None for r in rs}
        agg[cfg] = a
    return agg


def _med(agg, cfg, k):
    s = (agg.get(cfg) or {}).get(k)
    return s["median"] if s else None


def _ratio(a, b):
    return a / b if a is not None and b else None


def evaluate(agg, strengths=None):
    """The Done-when rows of issue 35 from the medians, per antagonist
    strength, plus the same figures for the hand-tuned rows (for
    comparison, no target)."""
    alone = _med(agg, "alone", "p99_us")
    rows = []

    def row(name, figure, limit, met, ref=False):
        rows.append({"target": name, "figure": figure, "limit": limit,
                     "met": None if met is None else bool(met), "reference": ref})

    for st in strengths or [x for x in STRENGTHS if with_strength("cfs", x) in agg]:
        cfs = _med(agg, with_strength("cfs", st), "p99_us")
        cfs_k = _med(agg, with_strength("cfs", st), "kmsg_per_s")
        for c, ref in (("bwgovd-best-effort", False), ("bwgovd-throughput", False), ("static-idle", True),
                       ("static", True)):
            cfg = with_strength(c, st)
            if cfg not in agg:
                continue
            p = _med(agg, cfg, "p99_us")
            r = _ratio(p, alone)
            row(f"{row_title(cfg)}: p99 ≤ {P99_LIMIT:g}× alone", r, P99_LIMIT, None if r is None else r <= P99_LIMIT, ref)
            b = _ratio(p, cfs)
            row(f"{row_title(cfg)}: p99 ≤ {1 / CFS_FACTOR:g}× plain CFS (this p99 ÷ CFS p99)", b, 1 / CFS_FACTOR,
                None if b is None else b <= 1 / CFS_FACTOR, ref)
            e = _ratio(_med(agg, cfg, "p99_early_us"), alone)
            row(f"{row_title(cfg)}: p99 over the first {EARLY_S:g} s ≤ {EARLY_LIMIT:g}× alone", e, EARLY_LIMIT,
                None if e is None else e <= EARLY_LIMIT, ref)
            if row_base(cfg) in ("bwgovd-throughput", "static"):
                k = _ratio(_med(agg, cfg, "kmsg_per_s"), cfs_k)
                row(f"{row_title(cfg)}: antagonist throughput ≥ {TP_THROUGHPUT_MIN * 100:g} % of plain CFS", k,
                    TP_THROUGHPUT_MIN, None if k is None else k >= TP_THROUGHPUT_MIN, ref)
    return rows


def _fmt(x, digits=None):
    if x is None:
        return "–"
    if digits is None:
        a = abs(x)
        digits = 0 if a >= 100 else 1 if a >= 10 else 2
    return f"{x:.{digits}f}"


def _cell(s, digits=None):
    if not s:
        return "–"
    m = _fmt(s["median"], digits)
    if s["n"] < 2 or s["min"] == s["max"]:
        return m
    return f"{m} [{_fmt(s['min'], digits)}–{_fmt(s['max'], digits)}]"


def actions(runs, cfg):
    """What changed in the groups' knobs during the runs of one
    configuration, and the workers' slices, as short text."""
    parts = []
    seen = set()
    for r in runs:
        if r["config"] != cfg or not r.get("ok"):
            continue
        for t, g, k, old, new in (r.get("knobs") or {}).get("events", []):
            key = (g, k, old, new)
            if key in seen:
                continue
            seen.add(key)
            parts.append(f"{g} {k} {old}→{new} (+{t:.1f} s)")
        if r.get("ladder"):
            s = "ladder " + "→".join(r["ladder"])
            if s not in seen:
                seen.add(s)
                parts.insert(0, s)
        sl = [x for x in (_get(r, "result.slice_ns") or []) if x is not None]
        if sl:
            s = f"slices {min(sl) / 1e3:g}–{max(sl) / 1e3:g} µs" if min(sl) != max(sl) else f"slice {sl[0] / 1e3:g} µs"
            if s not in seen:
                seen.add(s)
                parts.append(s)
    return "; ".join(parts[:8]) + (" …" if len(parts) > 8 else "") if parts else "–"


def summarise(res):
    runs = res["runs"]
    res["aggregates"] = aggregate(runs, res["meta"]["configs"])
    res["targets"] = evaluate(res["aggregates"])
    return res


def markdown(res):
    if not res:
        return ""
    if res.get("skipped"):
        return f"Skipped: {res['skipped']}"
    if res.get("error") and not res.get("runs"):
        return f"Failed: {res['error']}"
    m = res["meta"]
    agg = res.get("aggregates") or aggregate(res["runs"], m["configs"])
    targets = res.get("targets") or evaluate(agg)
    alone = _med(agg, "alone", "p99_us")
    hdr = ["configuration", "wake-up p50 µs", "p99 µs", "p99.9 µs", "max µs", "p99 ÷ alone",
           f"first {EARLY_S:g} s p99 µs", "÷ alone",
           "run-queue wait p99 µs (bwgovd)", "antagonist kmsg/s", "÷ plain CFS", "other load (CPUs)",
           "what changed (bwgovd / harness)"]
    lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for cfg in m["configs"]:
        a = agg.get(cfg)
        if not a:
            continue
        if not a["runs"]:
            lines.append(f"| {row_title(cfg)} | " + " | ".join(["failed"] + ["–"] * (len(hdr) - 2)) + " |")
            continue
        server, ant_on = CONFIGS[row_base(cfg)][:2]
        cfs_k = _med(agg, with_strength("cfs", row_strength(cfg)), "kmsg_per_s")
        early = ant_on and server and a.get("p99_early_us")
        lines.append("| " + " | ".join([
            row_title(cfg),
            _cell(a["p50_us"], 1) if server else "–", _cell(a["p99_us"]) if server else "–",
            _cell(a["p999_us"]) if server else "–", _cell(a["max_us"]) if server else "–",
            _fmt(_ratio(_med(agg, cfg, "p99_us"), alone), 2) if server else "–",
            _cell(a["p99_early_us"]) if early else "–",
            _fmt(_ratio(_med(agg, cfg, "p99_early_us"), alone), 2) if early else "–",
            _cell(a["rq_p99_us"], 0) if server else "–",
            _cell(a["kmsg_per_s"]) if ant_on else "–",
            (f"{_ratio(_med(agg, cfg, 'kmsg_per_s'), cfs_k) * 100:.0f} %"
             if ant_on and _ratio(_med(agg, cfg, "kmsg_per_s"), cfs_k) is not None else "–"),
            _cell(a.get("other_cpus"), 2), actions(res["runs"], cfg)]) + " |")
    tl = ["| target (issue 35) | figure | met |", "|---|---|---|"]
    for t in targets:
        fig = _fmt(t["figure"], 2) if t["figure"] is not None else "–"
        met = "–" if t["met"] is None else ("met" if t["met"] else "**not met**")
        if t["reference"]:
            met += " (reference, by hand)"
        tl.append(f"| {t['target']} | {fig} | {met} |")
    per_rep = []
    for cfg in m["configs"]:
        a = agg.get(cfg) or {}
        if CONFIGS[row_base(cfg)][0] and a.get("p99_per_rep"):
            per_rep.append(f"{row_title(cfg)} " + " · ".join(_fmt(a["p99_per_rep"][k]) for k in sorted(a["p99_per_rep"])))
    kper = []
    for cfg in m["configs"]:
        a = agg.get(cfg) or {}
        if CONFIGS[row_base(cfg)][1] and a.get("kmsg_per_rep"):
            kper.append(f"{row_title(cfg)} " + " · ".join(_fmt(a["kmsg_per_rep"][k]) for k in sorted(a["kmsg_per_rep"])))
    loads = [r.get("loadavg_start") for r in res["runs"] if r.get("loadavg_start") is not None]
    other = [r.get("other_cpus") for r in res["runs"] if r.get("other_cpus") is not None]
    hpsi = [r.get("host_psi_some_ms_per_s") for r in res["runs"] if r.get("host_psi_some_ms_per_s") is not None]
    notes = [
        f"{m.get('date')} · kernel {m.get('kernel')} · {m.get('cpus')} CPUs · layout {m.get('layout')} · "
        f"{m.get('reps')} repetitions · {m.get('warmup_s'):g} s alone, then {m.get('duration_s'):g} s measured from the "
        "antagonist's start per run · "
        f"{m.get('elapsed_min')} min."
        + (f" {m['outside_load']} busy loop(s) outside the run's groups throughout, pinned to the last "
           f"{m['outside_load']} CPU(s) (--outside-load)." if m.get("outside_load") else ""),
        "Server: `bwgov-wakeup " + " ".join(SERVER) + "` in the latency group (each worker's wake-up latency: "
        "from the time its request fell due to the time it ran, CLOCK_MONOTONIC deadlines, 1 ns timer slack). "
        "Antagonist: hackbench over and over in a sibling group, "
        + " and ".join(f"{st} `hackbench {' '.join(STRENGTHS[st][0])}` ({STRENGTHS[st][1]:,} messages per run)"
                       for st in STRENGTHS)
        + ", started when the server's measured window opens (the server ran alone for the warm-up before: "
        "bwgovd's reaction is inside the window, and the first "
        f"{EARLY_S:g} s are also reported apart); kmsg/s = messages per run ÷ hackbench's own "
        "Time:, over the runs wholly inside the server's measured window. Cells are median [min–max] over the "
        "repetitions; p99 ÷ alone and ÷ plain CFS are ratios of medians. Every configuration of a repetition "
        "runs back to back, in an order rotated per repetition.",
        f"Weights: both groups under one parent group per run with cpu.shares {m.get('shares')} against the "
        "rest of the host (v2: the equivalent cpu.weight; the bench's weight, so that other load on the host "
        f"delays them less), each with cpu.shares {CHILD_SHARES} against the other to start with (what a row "
        "does to their weights changes only how they share the parent); the static rows "
        f"give the latency group ×{STATIC_MULT} by hand (the knee measured in /tmp/lat15: ×10 took the p99 beside "
        "hackbench from 19× to about 2× alone at 92 % of the antagonist's throughput, ×256 only to 1.8×; a "
        "0.25-CPU server at ×10 can take 10/11 of contended CPU, far above its need). "
        f"bwgovd: one daemon over both groups, Mode=elastic, no CPUQuota=; latency group Class=latency, "
        f"LatencyTarget={m.get('latency_target')}" + (f", CPUGuarantee={m['cpu_guarantee']}" if m.get("cpu_guarantee")
                                                      else "")
        + "; antagonist Class= as the row says; Interval=1s, every other key at its default.",
        "Run-queue wait p99: the latency group's waits over the measured window from bwgovd's BPF telemetry "
        "(`bwgovctl latency`; the governing daemon in the bwgovd rows, one in Mode=observe over the latency group "
        "in the others): the upper end of a power-of-two bucket, the figure LatencyTarget= is compared with. "
        "“What changed”: the groups' weight (cpu.shares or cpu.weight) and cpu.idle sampled every 100 ms (time "
        f"from the antagonist's start, which is the measured window's start), "
        "the rungs bwgovd's latency ladder climbed (and came down) in order, from its log, and the workers' EEVDF "
        "slices (se.slice) 50 ms before the end of the window. Other load: CPUs busy on the host outside the "
        "run's two groups over the window (/proc/stat less the parent group's usage): other work on the shared "
        "machine, which delays the server in every row.",
    ]
    if per_rep:
        notes.append("p99 µs per repetition: " + "; ".join(per_rep) + ".")
    if kper:
        notes.append("Antagonist kmsg/s per repetition: " + "; ".join(kper) + ".")
    if loads:
        notes.append(f"Host load average at the start of the runs {min(loads):.1f}–{max(loads):.1f}"
                     + (f", host CPU PSI some over the windows {min(hpsi):.0f}–{max(hpsi):.0f} ms/s" if hpsi else "")
                     + (f", CPUs busy outside the run's groups {min(other):.2f}–{max(other):.2f} (median "
                        f"{statistics.median(other):.2f})" if other else "")
                     + " (the machine is shared: other work adds noise to every row alike, interleaved).")
    partial = [f"{r['config']} rep {r['rep'] + 1}" for r in res["runs"] if r.get("ok") and r.get("antagonist")
               and r["antagonist"].get("runs_whole") is False]
    if partial:
        notes.append("No hackbench run fell wholly inside the window in " + ", ".join(partial) + ": their throughput "
                     "is from the runs that spent at least half their time in it.")
    reasons = sorted({r.get("rq_reason") for r in res["runs"] if r.get("rq_reason")})
    if reasons:
        notes.append("No run-queue wait in some runs: " + "; ".join(reasons)[:500] + ".")
    failed = [r for r in res["runs"] if not r.get("ok")]
    if failed:
        notes.append(f"{len(failed)} runs failed: " + "; ".join(sorted({r.get('error', '?') for r in failed}))[:600])
    if m.get("notes"):
        notes += m["notes"]
    return "\n".join(lines) + "\n\n" + "\n".join(tl) + "\n\n" + "\n\n".join(notes)


# ---- the benchmark -------------------------------------------------------------

class OutsideLoad:
    """n busy loops outside the bench's groups (in the caller's cgroup),
    pinned to the last n CPUs; stopped by PID."""

    def __init__(self, n):
        self.n, self.procs = n, []

    def __enter__(self):
        ncpu = os.cpu_count() or 1
        for i in range(self.n):
            cpu = max(0, ncpu - 1 - i % ncpu)
            self.procs.append(subprocess.Popen(
                ["taskset", "-c", str(cpu), sys.executable, "-c", "while True: pass"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        return False


def run(bins, layout, quick, log=log, workdir=None, shares=10240, reps=None, configs=None,
        latency_target=LATENCY_TARGET, cpu_guarantee=None, duration_s=None, warmup_s=None, strengths=None,
        outside_load=0):
    """The whole benchmark; returns its result (a dict). Raises Skip when it
    cannot run here."""
    why = preflight(layout)
    if why:
        raise Skip(why)
    for k in ("bwgov-wakeup", "bwgovd"):
        if not os.access(bins.get(k) or "", os.X_OK):
            raise RuntimeError(f"missing {k}")
    sizes = dict(SIZES[bool(quick)])
    if reps:
        sizes["reps"] = reps
    if duration_s:
        sizes["duration_s"] = duration_s
    if warmup_s is not None:
        sizes["warmup_s"] = warmup_s
    configs = [c for c in row_order(strengths or list(STRENGTHS)) if c in (configs or ORDER)]
    own_tmp = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix="bwgov-latency-")
    os.makedirs(workdir, exist_ok=True)
    started = time.time()
    res = {"meta": {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "kernel": platform.release(),
                    "cpus": os.cpu_count(), "layout": layout.kind, "quick": bool(quick), "shares": shares,
                    "reps": sizes["reps"], "warmup_s": sizes["warmup_s"], "duration_s": sizes["duration_s"],
                    "configs": configs, "latency_target": latency_target, "cpu_guarantee": cpu_guarantee,
                    "server": ["bwgov-wakeup"] + SERVER,
                    "antagonists": {st: ["hackbench"] + STRENGTHS[st][0] for st in STRENGTHS},
                    "loadavg_start": _loadavg(), "outside_load": outside_load},
           "runs": []}
    bench = Bench(bins, layout, workdir, sizes, shares, latency_target, cpu_guarantee, log)
    per_run = sizes["warmup_s"] + sizes["duration_s"] + 2.5
    total = sizes["reps"] * len(configs)
    log(f"{total} runs ({len(configs)} configurations × {sizes['reps']} repetitions), about "
        f"{total * per_run / 60:.1f} min")
    k = 0
    if outside_load:
        log(f"{outside_load} busy loop(s) outside the run's groups, on the last {outside_load} CPU(s)")
    try:
        with OutsideLoad(outside_load):
            for rep in range(sizes["reps"]):
                order = configs[rep % len(configs):] + configs[:rep % len(configs)]
                for cfg in order:
                    k += 1
                    t = time.time()
                    r = bench.run(cfg, rep)
                    res["runs"].append(r)
                    if r.get("ok"):
                        p = _get(r, "result.wakeup_us")
                        kk = _get(r, "antagonist.msgs_per_s")
                        log(f"[{k}/{total}] {cfg} rep {rep + 1}: "
                            + (f"p50 {p['p50']:.0f} p99 {p['p99']:.0f} p99.9 {p['p999']:.0f} max {p['max']:.0f} µs"
                               if p else "no server")
                            + (f", first {EARLY_S:g} s p99 {_get(r, 'result.wakeup_early_us.p99'):.0f} µs"
                               if _get(r, "result.wakeup_early_us.p99") is not None else "")
                            + (f", antagonist {kk / 1000:.0f} kmsg/s" if kk else "")
                            + (f", rq p99 {_get(r, 'rq.p99_usec')} µs" if _get(r, "rq.p99_usec") is not None else "")
                            + f" ({time.time() - t:.1f} s)")
    finally:
        if own_tmp:
            shutil.rmtree(workdir, ignore_errors=True)
    res["meta"]["elapsed_min"] = round((time.time() - started) / 60, 2)
    return summarise(res)


def install_deps():
    if not shutil.which("apt-get") or not shutil.which("dpkg-query") or os.geteuid() != 0:
        return
    subprocess.run(["bash", "-c", f'. "{REPO}/scripts/deps.sh" && bwgov_install_deps "${{BWGOV_BUILD_DEPS[@]}}" '
                    'rt-tests strace'], stdout=sys.stderr)


def build(build_dir):
    if not os.path.isfile(os.path.join(build_dir, "build.ninja")):
        subprocess.run(["meson", "setup", build_dir, REPO], check=True, stdout=sys.stderr)
    subprocess.run(["ninja", "-C", build_dir, "src/daemon/bwgovd", "src/ctl/bwgovctl", "tests/bench/bwgov-wakeup"],
                   check=True, stdout=subprocess.DEVNULL)
    return {"bwgovd": os.path.join(build_dir, "src", "daemon", "bwgovd"),
            "bwgovctl": os.path.join(build_dir, "src", "ctl", "bwgovctl"),
            "bwgov-wakeup": os.path.join(build_dir, "tests", "bench", "bwgov-wakeup")}


def write_outputs(out, res):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "latency.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = "# Latency protection (issues 15 A, 35)\n\n" + markdown(res) + "\n"
    with open(os.path.join(out, "latency.md"), "w") as f:
        f.write(md)
    return md


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 repetitions of 2 + 10 s (about 10 minutes)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 2 with --quick, else 5)")
    ap.add_argument("--duration", type=float, default=None,
                    help="measured seconds per run, from the antagonist's start (default 10 / 20)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds the server runs alone before the antagonist starts (default 2)")
    ap.add_argument("--configs", default="", help="comma-separated rows (default all: " + ",".join(ORDER) + ")")
    ap.add_argument("--strengths", default=",".join(STRENGTHS),
                    help="antagonist strengths, comma-separated (default: " + ",".join(STRENGTHS) + ")")
    ap.add_argument("--latency-target", default=LATENCY_TARGET, help=f"LatencyTarget= (default {LATENCY_TARGET})")
    ap.add_argument("--cpu-guarantee", default=None, help="CPUGuarantee= of the latency group (default unset)")
    ap.add_argument("--outside-load", type=int, default=0, metavar="N",
                    help="N busy loops outside the run's groups, pinned to the last N CPUs (default 0)")
    ap.add_argument("--shares", type=int, default=10240,
                    help="cpu.shares of the parent of both groups against the host (default 10240)")
    ap.add_argument("--out", default=None, help="output directory (default: ./bench-out-latency-DATE)")
    ap.add_argument("--build", default=os.environ.get("BWGOV_BENCH_BUILD", os.path.join(REPO, "build-bench")),
                    help="meson build directory, configured and built if needed (default: build-bench)")
    ap.add_argument("--keep", action="store_true", help="keep per-run files (bwgovd logs, strace) under DIR/raw")
    ap.add_argument("--report-only", metavar="DIR", help="only redo latency.md from DIR/latency.json")
    a = ap.parse_args(argv)
    if a.report_only:
        with open(os.path.join(a.report_only, "latency.json")) as f:
            res = summarise(json.load(f))
        print(write_outputs(a.report_only, res))
        return 0
    layout = cgmod.detect()
    why = preflight(layout)
    if why and os.geteuid() == 0 and "hackbench" in why:
        install_deps()
        why = preflight(layout)
    if why:
        print(f"SKIP: {why}")
        return 77
    bins = build(os.path.abspath(a.build))

    def on_signal(signo, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    out = os.path.abspath(a.out or f"bench-out-latency-{time.strftime('%Y%m%d-%H%M%S')}")
    raw = os.path.join(out, "raw")
    configs = [x for x in a.configs.split(",") if x] or None
    for c in configs or []:
        if c not in ORDER:
            raise SystemExit(f"unknown configuration {c} (known: {', '.join(ORDER)})")
    strengths = [x for x in a.strengths.split(",") if x]
    for x in strengths:
        if x not in STRENGTHS:
            raise SystemExit(f"unknown antagonist strength {x} (known: {', '.join(STRENGTHS)})")
    try:
        res = run(bins, layout, a.quick, workdir=raw, shares=a.shares, reps=a.reps, configs=configs,
                  latency_target=a.latency_target, cpu_guarantee=a.cpu_guarantee, duration_s=a.duration,
                  warmup_s=a.warmup, strengths=strengths, outside_load=a.outside_load)
    except Skip as e:
        print(f"SKIP: {e}")
        return 77
    res["meta"]["command"] = "tests/bench/latency.py " + " ".join(argv)
    print(write_outputs(out, res))
    if not a.keep:
        shutil.rmtree(raw, ignore_errors=True)
    log(f"wrote {out}/latency.json and {out}/latency.md")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
