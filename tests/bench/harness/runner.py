# SPDX-License-Identifier: LGPL-2.1-or-later
"""One benchmark run: a fresh bwgov-bench-* cgroup with the scenario's
baseline, the configuration's governor, the workload, counters before and
after, a 100 ms timeline of quota/burst/usage/throttling, and the
governor's writes counted twice (its own metrics, strace)."""

import os
import shutil
import threading
import time

from . import cgroup as cgmod
from .governor import Bwgovd, Koordinator, WriteTrace, proc_stats
from .scenarios import get_path

SAMPLE_S = 0.1


def host_psi():
    try:
        with open("/proc/pressure/cpu") as f:
            return cgmod.parse_psi(f.read())
    except OSError:
        return {}


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError):
        return None


class Sampler(threading.Thread):
    """Reads the cgroup's bandwidth and counters every SAMPLE_S."""

    def __init__(self, cg, t0):
        super().__init__(daemon=True)
        self.cg, self.t0 = cg, t0
        self.rows = []
        self.halt = threading.Event()

    def sample(self):
        try:
            q, p, b = self.cg.get()
            s = self.cg.stat()
        except (OSError, ValueError):
            return
        self.rows.append([round(time.monotonic() - self.t0, 3), q, p, b, s["usage_usec"], s["throttled_usec"],
                          s["nr_throttled"], s["nr_periods"], s["psi_full_usec"]])

    def run(self):
        while not self.halt.wait(SAMPLE_S):
            self.sample()

    def stop(self):
        self.halt.set()
        self.join(2)
        self.sample()


def window_excess(rows, rate_cpus, t_from=0.0):
    """Largest CPU-seconds used above baseline × window over any window of
    the timeline (the contract's left side minus baseline × t)."""
    best, lo = 0.0, None
    for r in rows:
        if r[0] < t_from:
            continue
        x = r[4] / 1e6 - rate_cpus * r[0]
        lo = x if lo is None else min(lo, x)
        best = max(best, x - lo)
    return best


def slice_stats(rows, t_from, t_to):
    """Throttling over [t_from, t_to] of the timeline."""
    a = next((r for r in rows if r[0] >= t_from), None)
    b = next((r for r in reversed(rows) if r[0] <= t_to), None)
    if not a or not b or b[0] <= a[0]:
        return None
    dt = b[0] - a[0]
    periods = b[7] - a[7]
    return {"from_s": a[0], "to_s": b[0],
            "throttled_pct": 100.0 * (b[6] - a[6]) / periods if periods > 0 else 0.0,
            "throttled_ms_per_s": (b[5] - a[5]) / 1000 / dt,
            "usage_cpus": (b[4] - a[4]) / 1e6 / dt}


class Context:
    """What every run needs, and what cleanup must find."""

    def __init__(self, layout, bins, workdir, credit_max_s, log, shares=None):
        self.shares = shares
        self.layout = layout
        self.bins = bins
        self.workdir = workdir
        self.credit_max_s = credit_max_s
        self.log = log
        self.live_cgroups = []
        self.live_procs = []
        self.seq = 0

    def cleanup(self):
        """Kill what we started (by PID), remove our cgroups."""
        from .governor import stop_pid
        for p in list(self.live_procs):
            try:
                stop_pid(p, timeout=3)
            except Exception:
                pass
        self.live_procs.clear()
        for cg in list(self.live_cgroups):
            for w in cg.destroy():
                self.log(f"warning: {w}")
        self.live_cgroups.clear()


def contract_extra_s(config, scen, credit_max_s):
    """CPU-seconds the configuration may use above baseline × time, or None
    when it has no contract."""
    q = scen.quota / 1e6
    if config == "static":
        return 0.0
    if config == "static+burst":
        return q
    if config.startswith("bwgovd"):
        return credit_max_s + q       # CreditMax + the largest burst (CPUBurstMax unset: one quota)
    return None


def run_one(ctx, scen, config, rep):
    ctx.seq += 1
    name = f"{cgmod.PREFIX}{os.getpid()}-{ctx.seq}"
    rundir = os.path.join(ctx.workdir, f"{scen.name}-{config}-{rep}")
    os.makedirs(rundir, exist_ok=True)
    cg = cgmod.Cgroup(ctx.layout, name)
    ctx.live_cgroups.append(cg)
    side = None
    if scen.needs_side_cgroup:
        # The load generator runs outside the measured cgroup, in one of its
        # own with the same weight and no quota, so host noise does not
        # delay arrivals.
        side = cgmod.Cgroup(ctx.layout, name + "-gen")
        ctx.live_cgroups.append(side)
    gov = trace = None
    rec = {"scenario": scen.name, "config": config, "rep": rep, "cgroup": name, "ok": False,
           "baseline_quota_usec": scen.quota, "period_usec": scen.period}
    try:
        cg.create()
        if ctx.shares:
            cg.set_weight(ctx.shares)
        if side:
            side.create()
            side.set(None, scen.period, 0)
            if ctx.shares:
                side.set_weight(ctx.shares)
        if config == "unlimited":
            cg.set(None, scen.period, 0)
        elif config == "static+burst":
            cg.set(scen.quota, scen.period, scen.quota)
        else:
            cg.set(scen.quota, scen.period, 0)

        quota_max_pct = 300.0 * scen.baseline_cpus
        watch = list(cg.bandwidth_files().values())
        if config.startswith("bwgovd"):
            extra_global = {"HostPressureLimit": "0%"} if config.endswith("-nohost") else None
            gov = Bwgovd(ctx.bins["bwgovd"], os.path.join(rundir, "gov"), name,
                         "burst" if config == "bwgovd-burst" else "elastic", ctx.credit_max_s, quota_max_pct,
                         extra_global=extra_global)
            trace = WriteTrace(os.path.join(rundir, "writes.strace"))
            started = gov.start(trace, watch)
            ctx.live_procs.append(gov.proc)
            if not started:
                raise RuntimeError("bwgovd did not adopt the cgroup: " + " | ".join(gov.log_tail(5)))
        elif config == "koordinator":
            gov = Koordinator(ctx.bins["koordinator"], cg.bw_dir, cg.is_v2, 300.0, 1.0, rundir)
            trace = WriteTrace(os.path.join(rundir, "writes.strace"))
            started = gov.start(trace, watch)
            ctx.live_procs.append(gov.proc)
            if not started:
                raise RuntimeError("koordinator.py did not start")

        gstart_cpu = proc_stats(gov.pid)["cpu_s"] if gov else None
        t0 = time.monotonic()
        e0 = time.time()
        s0, h0, la0 = cg.stat(), host_psi(), loadavg()
        sampler = Sampler(cg, t0)
        sampler.sample()
        sampler.start()
        with open(os.path.join(rundir, "workload.err"), "w") as logf:
            w = scen.start(cg, ctx.bins, rep, logf, side)
            ctx.live_procs.extend(w.procs)
            try:
                res = w.wait(scen.timeout())
            finally:
                sampler.stop()
        t1 = time.monotonic()
        s1, h1 = cg.stat(), host_psi()
        wall = t1 - t0

        if gov:
            gend = proc_stats(gov.pid)
            if isinstance(gov, Bwgovd):
                met = gov.metrics()
                rc = gov.stop()
                gsum = {"writes_metric": met.get("bwgov_writes_total"),
                        "skipped_metric": met.get("bwgov_skipped_writes_total"),
                        "external_changes_metric": met.get("bwgov_external_changes_total"),
                        "credit_end_usec": met.get("bwgov_credit_usec"), "exit_status": rc}
            else:
                ks = gov.stop()
                gsum = {"writes_metric": ks.get("writes") if ks else None,
                        "identical_self": ks.get("identical_writes") if ks else None,
                        "max_quota_usec": ks.get("max_quota_usec") if ks else None}
            steady_from = scen.steady_from_s if scen.steady_from_s is not None else wall / 2
            tr = trace.analyse([cg.bw_dir, cg.v2_dir], since=None, steady_since=e0 + steady_from)
            # Writes during the workload, and the restore on exit separately.
            during = [t for t in tr["write_times"] if t <= e0 + wall]    # adoption included, restore on exit not
            gsum.update({
                "writes": tr["writes"], "identical": tr["identical"], "failed": tr["failed"],
                "traced": tr["traced"], "other_cgroup_writes": tr["other_cgroup_writes"],
                "writes_during": len(during),
                "writes_steady": len([t for t in during if t >= e0 + steady_from]),
                "steady_window_s": wall - steady_from,
                "cpu_s": (gend["cpu_s"] - (gstart_cpu or 0)) if gend["cpu_s"] is not None else None,
                "cpu_s_total": gend["cpu_s"], "vmhwm_kib": gend["vmhwm_kib"], "vmrss_kib": gend["vmrss_kib"],
            })
            gsum["cpu_pct"] = 100.0 * gsum["cpu_s"] / wall if gsum["cpu_s"] is not None else None
            gsum["cpu_s_before_workload"] = gstart_cpu
            rec["governor"] = gsum
            gov = None
        restored = cg.get()

        d = {k: s1[k] - s0[k] for k in s0}
        extra = contract_extra_s(config, scen, ctx.credit_max_s)
        base_s = scen.baseline_cpus * wall
        usage_s = d["usage_usec"] / 1e6
        rows = sampler.rows
        rec.update({
            "ok": True, "wall_s": wall, "result": res,
            "metric": get_path(res, scen.metric[0]),
            "extra": {k: get_path(res, k) for k, _ in scen.extra_metrics},
            "delta": d,
            "throttled_pct": 100.0 * d["nr_throttled"] / d["nr_periods"] if d["nr_periods"] > 0 else 0.0,
            "throttled_ms_per_s": d["throttled_usec"] / 1000 / wall,
            "psi_some_ms_per_s": d["psi_some_usec"] / 1000 / wall,
            "psi_full_ms_per_s": d["psi_full_usec"] / 1000 / wall,
            "host_some_ms_per_s": (h1.get("some", 0) - h0.get("some", 0)) / 1000 / wall,
            "loadavg_start": la0,
            "usage_cpu_s": usage_s, "baseline_cpu_s": base_s,
            "usage_over_baseline": usage_s / base_s if base_s else None,
            "contract_extra_s": extra,
            "budget_cpu_s": base_s + extra if extra is not None else None,
            "within_contract": (usage_s <= base_s + extra) if extra is not None else None,
            "window_excess_s": window_excess(rows, scen.baseline_cpus),
            "second_half": slice_stats(rows, wall / 2, wall),
            "restored": list(restored),
            "timeline": rows,
        })
    except Exception as e:      # a failed run is recorded, the bench goes on
        rec["error"] = f"{type(e).__name__}: {e}"
    finally:
        if gov:
            try:
                gov.stop()
            except Exception:
                pass
        if trace:
            trace.stop()
        for c in (cg, side):
            if c is None:
                continue
            for w in c.destroy():
                ctx.log(f"  warning: {w}")
            ctx.live_cgroups.remove(c)
        ctx.live_procs[:] = [p for p in ctx.live_procs if p.poll() is None]
        if rec.get("ok"):
            shutil.rmtree(os.path.join(rundir, "gov", "state"), ignore_errors=True)
    return rec
