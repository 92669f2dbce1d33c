# SPDX-License-Identifier: LGPL-2.1-or-later
"""The workloads as scenarios (issue 6, and the Governor v2 issue: phased
loads, cold start, warm-up with empty credit, overload, host protection):
baseline, command line, the figure of merit, and quick/full sizes."""

import json
import re
import subprocess

CONFIGS = ["unlimited", "static", "static+burst", "koordinator", "bwgovd-burst", "bwgovd-elastic"]
# bwgovd elastic with host shedding off (HostPressureLimit=0%): shows the law
# without its host-pressure brake, which a busy host (or the governed group's
# own throttled tasks, counted in /proc/pressure/cpu "some") can hold on.
NOHOST = "bwgovd-elastic-nohost"

CONFIG_TITLES = {
    "unlimited": "unlimited",
    "static": "static quota",
    "static+burst": "static + burst = quota",
    "koordinator": "Koordinator-style",
    "bwgovd-burst": "bwgovd Mode=burst",
    "bwgovd-elastic": "bwgovd Mode=elastic",
    NOHOST: "bwgovd elastic, HostPressureLimit=0%",
}


class Scenario:
    """One workload at one size.

    name      key in the results
    title     for tables
    quota, period   the baseline (µs), identical for every configuration
    duration  seconds of load (the workload may run longer, e.g. warm-up)
    configs   configurations run, in order
    reps      repetitions
    metric    (path, label, unit) of the figure of merit: a path into the
              workload's JSON, or "harness.KEY" for a figure the harness
              computes (analyse()); lower is better unless better == "higher"
    """

    steady_from_s = None        # start of the steady window; None: half the run
    better = "lower"
    ideal_s = None              # the ideal figure of merit (seconds), if there is one
    empty_credit = False        # bwgovd starts with an empty credit bucket
    multi_group = False         # runner.run_one hands it to run_multi()
    rq_latency = False          # measure the run-queue wait p99 of every configuration (bwgovd's telemetry)

    def __init__(self, name, title, quota, period, duration, configs, reps, metric, extra_metrics=()):
        self.name = name
        self.title = title
        self.quota = quota
        self.period = period
        self.duration = duration
        self.configs = configs
        self.reps = reps
        self.metric = metric
        self.extra_metrics = extra_metrics

    @property
    def baseline_cpus(self):
        return self.quota / self.period

    needs_side_cgroup = False

    def start(self, cg, bins, rep, logf, side=None):
        """Starts the workload in cg (helpers in side); returns an object
        with procs and wait() -> parsed result dict (or raises)."""
        raise NotImplementedError

    def timeout(self):
        return self.duration * 4 + 60

    def analyse(self, rec, credit_max_s):
        """Figures the harness computes from a finished run (the record with
        its timeline), or None; stored as rec["analysis"], read by "harness.*"
        metric paths."""
        if self.ideal_s is None:
            return None
        m = get_path(rec.get("result"), self.metric[0])
        return {"ideal_s": self.ideal_s, "over_ideal": m / self.ideal_s if m is not None else None}


def _json_last_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in the workload's output")


class _Single:
    def __init__(self, p, parse):
        self.p = p
        self.parse = parse
        self.procs = [p]

    def wait(self, timeout):
        out, _ = self.p.communicate(timeout=timeout)
        if self.p.returncode != 0:
            raise RuntimeError(f"workload exited with {self.p.returncode}")
        return self.parse(out)


class Bursty(Scenario):
    def __init__(self, duration, reps, configs=CONFIGS, threads=4, demand=0.45, burst_ms=10, name="bursty",
                 title=None, phase=False):
        super().__init__(name, title or f"bursty: {threads} threads, mean {demand} CPU, {burst_ms:g} ms bursts, "
                         f"0.5-CPU quota", 50000, 100000, duration, configs, reps,
                         ("stretch.p99", "p99 stretch", "×"),
                         (("stretch.p50", "p50 stretch"), ("stretch.p999", "p99.9 stretch"),
                          ("achieved_demand_cpus", "achieved CPUs")))
        self.threads, self.demand, self.burst_ms, self.phase = threads, demand, burst_ms, phase
        self.rq_latency = True

    def start(self, cg, bins, rep, logf, side=None):
        argv = [bins["bwgov-bursty"], "--threads", str(self.threads), "--mean-demand", str(self.demand),
                "--burst-ms", f"{self.burst_ms:g}", "--duration", f"{self.duration:g}", "--seed", str(rep + 1)]
        if self.phase:
            argv.append("--phase")
        return _Single(cg.spawn(argv, stdout=subprocess.PIPE, stderr=logf, text=True), _json_last_line)


class _Pipeline:
    def __init__(self, gen, srv):
        self.gen, self.srv = gen, srv
        self.procs = [gen, srv]

    def wait(self, timeout):
        out, _ = self.srv.communicate(timeout=timeout)
        self.gen.wait(timeout=5)
        if self.srv.returncode != 0:
            raise RuntimeError(f"bwgov-reqserver exited with {self.srv.returncode}")
        return _json_last_line(out)


class ReqServer(Scenario):
    """3 workers, 2 ms per request, Poisson arrivals generated outside the
    cgroup; latency from scheduled arrival to completion."""

    def __init__(self, offered, duration, reps, configs=CONFIGS, workers=3, cost_ms=2.0):
        rate = offered * 1000.0 / cost_ms
        super().__init__(f"reqserver-{offered:g}", f"request server: {workers} workers, {offered:g} CPU offered, "
                         f"1-CPU quota", 100000, 100000, duration, configs, reps,
                         ("latency_ms.p99", "p99 latency", "ms"),
                         (("latency_ms.p50", "p50 latency"), ("latency_ms.p999", "p99.9 latency"),
                          ("achieved_cpus", "achieved CPUs"),
                          ("max_enqueue_lag_ms", "largest arrival lag (ms; host noise or throttled reader)")))
        self.offered, self.rate, self.workers, self.cost_ms = offered, rate, workers, cost_ms
        self.rq_latency = True

    needs_side_cgroup = True

    def start(self, cg, bins, rep, logf, side=None):
        argv = [bins["bwgov-reqgen"], "--rate", f"{self.rate:g}", "--duration", f"{self.duration:g}",
                "--seed", str(rep + 1)]
        if side is not None:
            gen = side.spawn(argv, stdout=subprocess.PIPE, stderr=logf)
        else:
            gen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=logf)
        try:
            srv = cg.spawn([bins["bwgov-reqserver"], "--serve", "--workers", str(self.workers),
                            "--cost-ms", f"{self.cost_ms:g}"], stdin=gen.stdout, stdout=subprocess.PIPE,
                           stderr=logf, text=True)
        except Exception:
            gen.kill()
            gen.wait()
            raise
        gen.stdout.close()
        return _Pipeline(gen, srv)


QUOTA_MAX_FACTOR = 3.0          # the harness sets CPUQuotaMax= 300 % of the baseline


class Warmup(Scenario):
    """A JIT-like start: warm_work CPU-s at 3× the quota, then half of it.
    The ideal under bwgovd is the work at the CPUQuotaMax= rate."""

    def __init__(self, warm_work, steady_s, reps, configs=CONFIGS, name="warmup", empty_credit=False):
        super().__init__(name, f"warm-up{' with EMPTY credit' if empty_credit else ''}: {warm_work:g} CPU-s at "
                         f"1.5 CPU, then 0.25 CPU for {steady_s:g} s, 0.5-CPU quota", 50000, 100000, steady_s,
                         configs, reps, ("warmup_s", "warm-up time", "s"),
                         (("harness.ideal_s", "ideal (work ÷ CPUQuotaMax= rate)"), ("harness.over_ideal", "× ideal"),
                          ("steady_achieved_cpus", "steady CPUs")))
        self.warm_work, self.steady_s = warm_work, steady_s
        self.empty_credit = empty_credit
        self.ideal_s = warm_work / min(1.5, QUOTA_MAX_FACTOR * self.baseline_cpus)

    def start(self, cg, bins, rep, logf, side=None):
        argv = [bins["bwgov-warmup"], "--warm-cpus", "1.5", "--warm-work-cpu-s", f"{self.warm_work:g}",
                "--steady-cpus", "0.25", "--duration", f"{self.steady_s:g}", "--seed", str(rep + 1)]
        return _Single(cg.spawn(argv, stdout=subprocess.PIPE, stderr=logf, text=True), _json_last_line)

    def timeout(self):
        return self.warm_work / 0.5 * 3 + self.steady_s + 60


class ColdStart(Scenario):
    """A group governed and idle for idle_s, then a spike of work CPU-s at
    cpus: how long the spike takes after a long idle."""

    def __init__(self, idle_s, reps, configs=CONFIGS, work=1.5, cpus=1.5):
        super().__init__("coldstart", f"cold start: idle {idle_s:g} s under the governor, then {work:g} CPU-s at "
                         f"{cpus:g} CPU, 0.5-CPU quota", 50000, 100000, idle_s + 0.2, configs, reps,
                         ("warmup_s", "spike completion time", "s"),
                         (("harness.ideal_s", "ideal (work ÷ CPUQuotaMax= rate)"), ("harness.over_ideal", "× ideal"),
                          ("achieved_cpus", "CPUs over the run")))
        self.idle_s, self.work, self.cpus = idle_s, work, cpus
        self.ideal_s = work / min(cpus, QUOTA_MAX_FACTOR * self.baseline_cpus)

    def start(self, cg, bins, rep, logf, side=None):
        argv = [bins["bwgov-warmup"], "--warm-cpus", f"{self.cpus:g}", "--warm-work-cpu-s", f"{self.work:g}",
                "--steady-cpus", "0", "--duration", "0.2", "--start-delay-ms", str(int(self.idle_s * 1000)),
                "--seed", str(rep + 1)]
        return _Single(cg.spawn(argv, stdout=subprocess.PIPE, stderr=logf, text=True), _json_last_line)

    def timeout(self):
        return self.idle_s + self.work / self.baseline_cpus * 3 + 60


class Phased(Scenario):
    """bwgov-phased: high CPUs for high_s, low CPUs for low_s, cycles times."""

    def __init__(self, name, high, high_s, low, low_s, cycles, reps, configs=CONFIGS):
        mean = (high * high_s + low * low_s) / (high_s + low_s)
        super().__init__(name, f"phased: {high:g} CPU for {high_s:g} s ({high / 0.5:.1f}× quota), {low:g} CPU for "
                         f"{low_s:g} s (mean {mean:.2f}), {cycles} cycles, 0.5-CPU quota", 50000, 100000,
                         cycles * (high_s + low_s), configs, reps, ("stretch.p99", "p99 stretch", "×"),
                         (("high_stretch.p99", "high-phase p99 stretch"), ("stretch.p50", "p50 stretch"),
                          ("high_achieved_cpus", "CPUs in high phases"), ("achieved_cpus", "achieved CPUs")))
        self.high, self.high_s, self.low, self.low_s = high, high_s, low, low_s

    def start(self, cg, bins, rep, logf, side=None):
        argv = [bins["bwgov-phased"], "--high-cpus", f"{self.high:g}", "--high-s", f"{self.high_s:g}",
                "--low-cpus", f"{self.low:g}", "--low-s", f"{self.low_s:g}", "--duration", f"{self.duration:g}",
                "--seed", str(rep + 1)]
        return _Single(cg.spawn(argv, stdout=subprocess.PIPE, stderr=logf, text=True), _json_last_line)


def constant_load(bins, cpus, seconds, seed=1, start_delay_ms=0):
    """bwgov-phased as a constant load of cpus (ceil(cpus) threads)."""
    argv = [bins["bwgov-phased"], "--high-cpus", f"{cpus:g}", "--high-s", f"{seconds:g}", "--low-cpus", "0",
            "--low-s", "0", "--duration", f"{seconds:g}", "--seed", str(seed)]
    if start_delay_ms:
        argv += ["--start-delay-ms", str(int(start_delay_ms))]
    return argv


class Overload(Scenario):
    """A load of 3× the baseline for the whole run: credit runs out; the
    harness counts the credit the contract allows and checks when the quota
    came back to the baseline."""

    def __init__(self, duration, reps, configs=("bwgovd-elastic", "bwgovd-burst"), load=1.5):
        super().__init__("overload", f"overload: {load:g} CPU ({load / 0.5:g}× the baseline) for {duration:g} s, "
                         f"0.5-CPU quota", 50000, 100000, duration, list(configs), reps,
                         ("harness.min_credit_s", "lowest harness credit", "CPU-s"),
                         (("harness.back_s", "quota back at the baseline at (s)"),
                          ("harness.credit_at_back_s", "harness credit then (CPU-s)"),
                          ("harness.overdrawn_s", "harness credit below 0 at (s)"),
                          ("harness.rose_again", "quota above the baseline again"),
                          ("harness.max_quota_cpus", "highest quota (CPUs)"),
                          ("achieved_cpus", "achieved CPUs")))
        self.load = load
        self.better = "higher"

    def start(self, cg, bins, rep, logf, side=None):
        return _Single(cg.spawn(constant_load(bins, self.load, self.duration, rep + 1), stdout=subprocess.PIPE,
                                stderr=logf, text=True), _json_last_line)

    def analyse(self, rec, credit_max_s):
        from .analysis import WINDOW_TOLERANCE_S, overload_analysis
        q = self.quota / 1e6
        return overload_analysis(rec.get("timeline") or [], self.quota, self.period, credit_max_s, q,
                                 slack_s=q + WINDOW_TOLERANCE_S)


class HostProtect(Scenario):
    """Host protection: `groups` governed cgroups of quota/period each run a
    CPU hog of hog_threads busy threads after idle_s, for `duration` s, next
    to an ungoverned antagonist cgroup (same weight, no quota) that runs one
    busy thread per CPU throughout. Figure of merit: the antagonist's CPU in
    the hog window (higher is better). See runner.run_multi()."""

    multi_group = True

    def __init__(self, duration, reps, configs=("static", "bwgovd-elastic"), idle_s=3.0, groups=2, hog_threads=2,
                 quota=25000):
        super().__init__("host-protect", f"host protection: {groups} governed groups of {quota / 1e5:g} CPU, each "
                         f"running {hog_threads} busy threads for {duration:g} s after {idle_s:g} s idle, next to an "
                         f"ungoverned antagonist with one busy thread per CPU", quota, 100000, duration,
                         list(configs), reps, ("harness.antagonist_cpu_s", "antagonist CPU in the hog window", "CPU-s"),
                         (("harness.antagonist_cpus", "antagonist CPUs"),
                          ("harness.governed_cpus", "governed groups' CPUs (sum)"),
                          ("harness.g0_cpus", "g0 CPUs"), ("harness.g1_cpus", "g1 CPUs")))
        self.idle_s, self.groups, self.hog_threads = idle_s, groups, hog_threads
        self.better = "higher"

    def hog_argv(self, bins, rep, index):
        return constant_load(bins, self.hog_threads, self.duration, seed=rep * 16 + index + 1)

    def antagonist_argv(self, bins, cpus):
        # Stopped by the harness once the hogs are done; the duration is a bound.
        return constant_load(bins, cpus, self.idle_s + self.duration * 4 + 60, seed=99)

    def timeout(self):
        return self.duration * 2 + 30


def parse_sysbench(text):
    def num(pat):
        m = re.search(pat, text)
        return float(m.group(1)) if m else None
    return {"events_per_s": num(r"events per second:\s+([\d.]+)"),
            "events": num(r"total number of events:\s+(\d+)"),
            "latency_ms": {"p50": None, "mean": num(r"avg:\s+([\d.]+)"),
                           "p99": num(r"99th percentile:\s+([\d.]+)"), "max": num(r"max:\s+([\d.]+)")}}


class Sysbench(Scenario):
    """sysbench cpu with threads = quota/period (1 CPU here) at a period."""

    def __init__(self, period_ms, duration, reps, configs=CONFIGS, cpus=1):
        period = int(period_ms * 1000)
        super().__init__(f"sysbench-{period_ms:g}ms", f"sysbench cpu, {cpus} thread(s), quota = {cpus} CPU, "
                         f"period {period_ms:g} ms", period * cpus, period, duration, configs, reps,
                         ("latency_ms.p99", "p99 event latency", "ms"),
                         (("events_per_s", "events/s"),))
        self.cpus = cpus

    def start(self, cg, bins, rep, logf, side=None):
        argv = [bins["sysbench"], "cpu", f"--threads={self.cpus}", f"--time={self.duration:g}",
                "--percentile=99", "run"]
        return _Single(cg.spawn(argv, stdout=subprocess.PIPE, stderr=logf, text=True), parse_sysbench)


def get_path(d, path):
    for k in path.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def lookup(rec, path):
    """A metric path of a run record: "harness.KEY" from the harness's
    analysis, anything else from the workload's JSON."""
    if path.startswith("harness."):
        return get_path(rec.get("analysis"), path[len("harness."):])
    return get_path(rec.get("result"), path)


def suite(quick, only=None, with_sysbench=True):
    """The scenarios of a run. --quick keeps >= 3 repetitions of the core
    comparisons and shortens everything else."""
    steady = Bursty(duration=30 if quick else 120, reps=1, configs=["bwgovd-elastic"] if quick else
                    ["bwgovd-burst", "bwgovd-elastic"], name="steady",
                    title=f"steady state: the bursty workload for {30 if quick else 120} s, bwgovd's writes after "
                          f"{10 if quick else 30} s")
    steady.steady_from_s = 10 if quick else 30
    steady.rq_latency = False
    empty_cfgs = ["static", "static+burst", "bwgovd-burst", "bwgovd-elastic"]
    if quick:
        s = [Bursty(duration=7, reps=3),
             ReqServer(0.95, duration=7, reps=3),
             ReqServer(0.8, duration=4, reps=3),
             Phased("phased-1s", 0.9, 1, 0.2, 2, cycles=3, reps=3),
             Phased("phased-3s", 0.75, 3, 0.15, 3, cycles=2, reps=3),
             Warmup(warm_work=3.0, steady_s=1.5, reps=3),
             Warmup(warm_work=3.0, steady_s=1.5, reps=3, configs=empty_cfgs, name="warmup-empty", empty_credit=True),
             ColdStart(idle_s=8, reps=3),
             Overload(duration=20, reps=1),
             HostProtect(duration=20, reps=3),
             ]
        if with_sysbench:
            s += [Sysbench(p, duration=3, reps=1, configs=["static", "static+burst", "bwgovd-elastic"])
                  for p in (100, 50, 10)]
        s.append(steady)
    else:
        s = [Bursty(duration=30, reps=5, configs=CONFIGS + [NOHOST]),
             Bursty(duration=30, reps=3, burst_ms=200, demand=0.45, name="bursty-phase", phase=True,
                    title="bursty phases: 4 threads × 200 ms at once (a burst longer than one quota), "
                          "mean 0.45 CPU, 0.5-CPU quota", configs=CONFIGS + [NOHOST]),
             ReqServer(0.95, duration=30, reps=5, configs=CONFIGS + [NOHOST]),
             ReqServer(0.8, duration=30, reps=5, configs=CONFIGS + [NOHOST]),
             Phased("phased-1s", 0.9, 1, 0.2, 2, cycles=10, reps=5, configs=CONFIGS + [NOHOST]),
             Phased("phased-3s", 0.75, 3, 0.15, 3, cycles=5, reps=5, configs=CONFIGS + [NOHOST]),
             Warmup(warm_work=4.5, steady_s=10, reps=5, configs=CONFIGS + [NOHOST]),
             Warmup(warm_work=4.5, steady_s=10, reps=5, configs=empty_cfgs, name="warmup-empty", empty_credit=True),
             ColdStart(idle_s=30, reps=5),
             Overload(duration=60, reps=3),
             HostProtect(duration=60, reps=5)]
        if with_sysbench:
            s += [Sysbench(p, duration=20, reps=3) for p in (100, 50, 10)]
        s.append(steady)
    if only:
        s = [x for x in s if any(x.name.startswith(o) for o in only)]
    return s
