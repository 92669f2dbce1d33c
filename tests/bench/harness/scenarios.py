# SPDX-License-Identifier: LGPL-2.1-or-later
"""The workloads of issue 6 as scenarios: baseline, command line, the
figure of merit, and quick/full sizes."""

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
    metric    (json path, label, unit) of the figure of merit, lower is better
    """

    steady_from_s = None        # start of the steady window; None: half the run

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


class Warmup(Scenario):
    """A JIT-like start: warm_work CPU-s at 3× the quota, then half of it."""

    def __init__(self, warm_work, steady_s, reps, configs=CONFIGS):
        super().__init__("warmup", f"warm-up: {warm_work:g} CPU-s at 1.5 CPU, then 0.25 CPU for {steady_s:g} s, "
                         f"0.5-CPU quota", 50000, 100000, steady_s, configs, reps,
                         ("warmup_s", "warm-up time", "s"),
                         (("ideal_warmup_s", "ideal"), ("steady_achieved_cpus", "steady CPUs")))
        self.warm_work, self.steady_s = warm_work, steady_s

    def start(self, cg, bins, rep, logf, side=None):
        argv = [bins["bwgov-warmup"], "--warm-cpus", "1.5", "--warm-work-cpu-s", f"{self.warm_work:g}",
                "--steady-cpus", "0.25", "--duration", f"{self.steady_s:g}", "--seed", str(rep + 1)]
        return _Single(cg.spawn(argv, stdout=subprocess.PIPE, stderr=logf, text=True), _json_last_line)

    def timeout(self):
        return self.warm_work / 0.5 * 3 + self.steady_s + 60


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


def suite(quick, only=None, with_sysbench=True):
    """The scenarios of a run. --quick keeps >= 3 repetitions of the core
    comparisons and shortens everything else."""
    steady = Bursty(duration=30 if quick else 120, reps=1, configs=["bwgovd-elastic"] if quick else
                    ["bwgovd-burst", "bwgovd-elastic"], name="steady",
                    title=f"steady state: the bursty workload for {30 if quick else 120} s, bwgovd's writes after "
                          f"{10 if quick else 30} s")
    steady.steady_from_s = 10 if quick else 30
    if quick:
        s = [Bursty(duration=7, reps=3),
             ReqServer(0.95, duration=7, reps=3),
             ReqServer(0.8, duration=4, reps=3,
                       configs=["static", "static+burst", "koordinator", "bwgovd-elastic"]),
             Warmup(warm_work=3.0, steady_s=1.5, reps=3,
                    configs=["static", "static+burst", "koordinator", "bwgovd-elastic", NOHOST]),
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
             Warmup(warm_work=4.5, steady_s=10, reps=5, configs=CONFIGS + [NOHOST])]
        if with_sysbench:
            s += [Sysbench(p, duration=20, reps=3) for p in (100, 50, 10)]
        s.append(steady)
    if only:
        s = [x for x in s if any(x.name.startswith(o) for o in only)]
    return s
