# SPDX-License-Identifier: LGPL-2.1-or-later
"""One benchmark run: a fresh bwgov-bench-* cgroup with the scenario's
baseline, the configuration's governor, the workload, counters before and
after, a 100 ms timeline of quota/burst/usage/throttling, and the
governor's writes counted twice (its own metrics, strace). run_multi(): the
host-protection run, several governed cgroups and an ungoverned antagonist."""

import json
import os
import shutil
import signal
import subprocess
import threading
import time

from . import cgroup as cgmod
from . import telemetry as tm
from .governor import Bwgovd, Koordinator, WriteTrace, proc_stats
from .analysis import window_allowance_s
from .scenarios import lookup

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


def _new_cgroup(ctx, name):
    cg = cgmod.Cgroup(ctx.layout, name)
    ctx.live_cgroups.append(cg)
    return cg


def _setup(ctx, cg, quota, period, burst=0):
    """Create cg with the benchmark weight and a static bandwidth."""
    cg.create()
    if ctx.shares:
        cg.set_weight(ctx.shares)
    cg.set(quota, period, burst)


def _start_governor(ctx, config, scen, rundir, cgs):
    """The configuration's governor over cgs (None when it has none), started
    under strace and past its adoption. Returns (gov, trace)."""
    watch = [f for cg in cgs for f in cg.bandwidth_files().values()]
    if config.startswith("bwgovd"):
        extra_global = {"HostPressureLimit": "0%"} if config.endswith("-nohost") else None
        gov = Bwgovd(ctx.bins["bwgovd"], os.path.join(rundir, "gov"), [cg.name for cg in cgs],
                     "burst" if config == "bwgovd-burst" else "elastic", ctx.credit_max_s,
                     300.0 * scen.baseline_cpus, extra_global=extra_global)
        if scen.empty_credit:
            # The kernel's value as the baseline and no credit: bwgovd finds
            # its baseline in place and adopts it with an empty bucket.
            units = {}
            for cg in cgs:
                q, p, b = cg.get()
                units[cg.name] = {"cgroup": cg.name, "quota_usec": q, "period_usec": p, "burst_usec": b,
                                  "has_burst": cg.has_burst()}
            gov.seed_state(units, credit_usec=0)
        trace = WriteTrace(os.path.join(rundir, "writes.strace"))
        started = gov.start(trace, watch)
        ctx.live_procs.append(gov.proc)
        if not started:
            gov_tail = " | ".join(gov.log_tail(5))
            trace.stop()
            raise RuntimeError("bwgovd did not adopt the cgroup: " + gov_tail)
        return gov, trace
    if config == "koordinator":
        if len(cgs) != 1:
            raise RuntimeError("the Koordinator-style comparator governs one cgroup")
        cg = cgs[0]
        gov = Koordinator(ctx.bins["koordinator"], cg.bw_dir, cg.is_v2, 300.0, 1.0, rundir)
        trace = WriteTrace(os.path.join(rundir, "writes.strace"))
        started = gov.start(trace, watch)
        ctx.live_procs.append(gov.proc)
        if not started:
            trace.stop()
            raise RuntimeError("koordinator.py did not start")
        return gov, trace
    return None, None


def _stop_governor(gov, trace, cgs, e0, wall, steady_from, gstart_cpu):
    """Stop the governor; its writes (per cgroup when there are several),
    counters, CPU time and memory."""
    gend = proc_stats(gov.pid)
    per_unit = {}
    if isinstance(gov, Bwgovd):
        met = {cg.name: gov.metrics(cg.name) for cg in cgs}
        rc = gov.stop()
        first = met[cgs[0].name]
        gsum = {"writes_metric": sum(m.get("bwgov_writes_total") or 0 for m in met.values())
                if any("bwgov_writes_total" in m for m in met.values()) else None,
                "skipped_metric": first.get("bwgov_skipped_writes_total"),
                "external_changes_metric": first.get("bwgov_external_changes_total"),
                "credit_end_usec": first.get("bwgov_credit_usec"), "exit_status": rc}
        per_unit = {n: {"writes_metric": m.get("bwgov_writes_total"), "credit_end_usec": m.get("bwgov_credit_usec")}
                    for n, m in met.items()}
    else:
        ks = gov.stop()
        gsum = {"writes_metric": ks.get("writes") if ks else None,
                "identical_self": ks.get("identical_writes") if ks else None,
                "max_quota_usec": ks.get("max_quota_usec") if ks else None}
    tr = trace.analyse([d for cg in cgs for d in (cg.bw_dir, cg.v2_dir)], since=None,
                       steady_since=e0 + steady_from)
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
        "units": len(cgs),
    })
    if len(cgs) > 1:
        for cg in cgs:
            t1 = trace.analyse([cg.bw_dir, cg.v2_dir], since=None, steady_since=e0 + steady_from)
            per_unit.setdefault(cg.name, {}).update({"writes": t1["writes"], "identical": t1["identical"],
                                                     "writes_during": len([t for t in t1["write_times"]
                                                                           if t <= e0 + wall])})
    if per_unit:
        gsum["per_unit"] = per_unit
    gsum["cpu_pct"] = 100.0 * gsum["cpu_s"] / wall if gsum["cpu_s"] is not None else None
    gsum["cpu_s_before_workload"] = gstart_cpu
    return gsum


class RqProbe:
    """The run-queue wait of one cgroup over a run, from bwgovd's BPF
    telemetry (`bwgovctl latency --json`): the configuration's own bwgovd,
    or for the configurations without one (unlimited, static, static+burst,
    Koordinator-style) a bwgovd in Mode=observe over the cgroup, started
    under strace like a governor, so that the same instrument measures every
    configuration; observe mode decides but never writes, and the trace
    shows that it did not. The waits of the run are the difference of the
    unit's `total` before and after (the cgroup is fresh, so that is also
    all it ever counted)."""

    def __init__(self, ctx, config, scen, rundir, cg, gov):
        self.ctx, self.cg = ctx, cg
        self.observer = self.trace = None
        self.observer_result = None     # stop()'s figures
        self.reason = None
        self.lat0 = None
        self.bwgovctl = ctx.bins.get("bwgovctl")
        if not self.bwgovctl:
            self.reason = "no bwgovctl"
            return
        if isinstance(gov, Bwgovd):
            self.source, self.daemon = "bwgovd", gov
        else:
            self.source = "observer"
            self.daemon = Bwgovd(ctx.bins["bwgovd"], os.path.join(rundir, "observer"), [cg.name], "observe",
                                 ctx.credit_max_s, 300.0 * scen.baseline_cpus)
            self.trace = WriteTrace(os.path.join(rundir, "observer.strace"))
            started = self.daemon.start(self.trace, list(cg.bandwidth_files().values()),
                                        ready_metric="bwgov_baseline_burst_usec")
            ctx.live_procs.append(self.daemon.proc)
            self.observer = self.daemon
            if not started:
                self.reason = "the Mode=observe bwgovd did not start: " + " | ".join(self.daemon.log_tail(3))
                return
        lat = tm.wait_counting(self.bwgovctl, self.daemon.socket, cg.name, timeout=10,
                               alive=lambda: self.daemon.proc.poll() is None)
        if lat is None:
            self.reason = "bwgovctl latency did not answer"
        elif not lat.get("available"):
            self.reason = lat.get("reason") or "not available"
        if self.reason and self.observer:
            self.stop()             # nothing to measure: the run goes on without it

    def begin(self):
        if self.reason:
            return
        try:
            self.lat0 = tm.latency(self.bwgovctl, self.daemon.socket, self.cg.name)
        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
            self.reason = str(e)

    def end(self):
        """The run's figures (call before the daemon stops)."""
        out = {"source": self.source}
        if not self.reason:
            try:
                w = tm.window(self.lat0, tm.latency(self.bwgovctl, self.daemon.socket, self.cg.name))
                if w is None:
                    self.reason = "no run-queue telemetry at the end of the run"
                else:
                    out.update(w)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                self.reason = str(e)
        out["available"] = self.reason is None
        out["reason"] = self.reason
        return out

    def stop(self, workload_end=None):
        """Stop the observer (if any): its writes to the cgroup (strace; those
        up to workload_end, epoch seconds, apart), CPU time and memory in
        observer_result."""
        if not self.observer:
            return
        obs, self.observer = self.observer, None
        st = proc_stats(obs.pid) if obs.pid else {}
        writes_metric = obs.metrics().get("bwgov_writes_total")
        rc = obs.stop()
        tr = self.trace.analyse([self.cg.bw_dir, self.cg.v2_dir])
        self.observer_result = {"writes": tr["writes"], "identical": tr["identical"], "failed": tr["failed"],
                                "writes_during": (len([t for t in tr["write_times"] if t <= workload_end])
                                                  if workload_end is not None else None),
                                "traced": tr["traced"], "other_cgroup_writes": tr["other_cgroup_writes"],
                                "writes_metric": writes_metric, "cpu_s": st.get("cpu_s"),
                                "vmhwm_kib": st.get("vmhwm_kib"), "exit_status": rc}


def _credit_at_adoption(gov, cgs):
    if not isinstance(gov, Bwgovd):
        return None
    return {cg.name: gov.metrics(cg.name).get("bwgov_credit_usec") for cg in cgs}


def _counters(s0, s1, rows, wall, baseline_cpus, extra, quota_s):
    """Throttling, pressure, CPU used and the contract of one cgroup over a
    run: s0/s1 its counters at the start and the end, rows its timeline."""
    d = {k: s1[k] - s0[k] for k in s0}
    base_s = baseline_cpus * wall
    usage_s = d["usage_usec"] / 1e6
    wex = window_excess(rows, baseline_cpus)
    return {
        "delta": d,
        "throttled_pct": 100.0 * d["nr_throttled"] / d["nr_periods"] if d["nr_periods"] > 0 else 0.0,
        "throttled_ms_per_s": d["throttled_usec"] / 1000 / wall,
        "psi_some_ms_per_s": d["psi_some_usec"] / 1000 / wall,
        "psi_full_ms_per_s": d["psi_full_usec"] / 1000 / wall,
        "usage_cpu_s": usage_s, "baseline_cpu_s": base_s,
        "usage_over_baseline": usage_s / base_s if base_s else None,
        "contract_extra_s": extra,
        "budget_cpu_s": base_s + extra if extra is not None else None,
        "within_contract": (usage_s <= base_s + extra) if extra is not None else None,
        "window_excess_s": wex,
        "window_allowance_s": window_allowance_s(extra, quota_s),
        "within_contract_window": (wex <= window_allowance_s(extra, quota_s)) if extra is not None else None,
        "second_half": slice_stats(rows, wall / 2, wall),
        "timeline": rows,
    }


def _finish(ctx, rec, gov, trace, cgs, rundir):
    """Whatever happened: stop the governor and strace, remove the cgroups,
    forget finished processes."""
    if gov:
        try:
            gov.stop()
        except Exception:
            pass
    if trace:
        trace.stop()
    for c in cgs:
        if c is None:
            continue
        for w in c.destroy():
            ctx.log(f"  warning: {w}")
        if c in ctx.live_cgroups:
            ctx.live_cgroups.remove(c)
    ctx.live_procs[:] = [p for p in ctx.live_procs if p.poll() is None]
    if rec.get("ok"):
        shutil.rmtree(os.path.join(rundir, "gov", "state"), ignore_errors=True)


def run_one(ctx, scen, config, rep):
    if scen.multi_group:
        return run_multi(ctx, scen, config, rep)
    ctx.seq += 1
    name = f"{cgmod.PREFIX}{os.getpid()}-{ctx.seq}"
    rundir = os.path.join(ctx.workdir, f"{scen.name}-{config}-{rep}")
    os.makedirs(rundir, exist_ok=True)
    cg = _new_cgroup(ctx, name)
    side = None
    if scen.needs_side_cgroup:
        # The load generator runs outside the measured cgroup, in one of its
        # own with the same weight and no quota, so host noise does not
        # delay arrivals.
        side = _new_cgroup(ctx, name + "-gen")
    gov = trace = probe = None
    rec = {"scenario": scen.name, "config": config, "rep": rep, "cgroup": name, "ok": False,
           "baseline_quota_usec": scen.quota, "period_usec": scen.period}
    try:
        if config == "unlimited":
            set_to = (None, scen.period, 0)
        elif config == "static+burst":
            set_to = (scen.quota, scen.period, scen.quota)
        else:
            set_to = (scen.quota, scen.period, 0)
        _setup(ctx, cg, *set_to)
        if side:
            _setup(ctx, side, None, scen.period)

        if scen.rq_latency and not config.startswith("bwgovd"):
            # The observer first: it adopts the static baseline as set.
            probe = RqProbe(ctx, config, scen, rundir, cg, None)
        gov, trace = _start_governor(ctx, config, scen, rundir, [cg])
        if scen.rq_latency and config.startswith("bwgovd"):
            probe = RqProbe(ctx, config, scen, rundir, cg, gov)
        credit0 = _credit_at_adoption(gov, [cg])
        gstart_cpu = proc_stats(gov.pid)["cpu_s"] if gov else None
        t0 = time.monotonic()
        e0 = time.time()
        if probe:
            probe.begin()
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
        if probe:
            rec["rq"] = probe.end()

        if gov:
            steady_from = scen.steady_from_s if scen.steady_from_s is not None else wall / 2
            rec["governor"] = _stop_governor(gov, trace, [cg], e0, wall, steady_from, gstart_cpu)
            if credit0 is not None:
                rec["governor"]["credit_at_adoption_usec"] = credit0[cg.name]
            gov = None
        if probe:
            probe.stop(workload_end=e0 + wall)
            if probe.observer_result is not None:
                rec["observer"] = probe.observer_result
        restored = cg.get()
        if not config.startswith("bwgovd") and config != "koordinator":
            # No governor: the bandwidth must still be what the harness set
            # (an observer, if one ran, never writes).
            rec["bandwidth_unchanged"] = tuple(restored) == set_to

        rec.update(_counters(s0, s1, sampler.rows, wall, scen.baseline_cpus,
                             contract_extra_s(config, scen, ctx.credit_max_s), scen.quota / 1e6))
        rec.update({
            "ok": True, "wall_s": wall, "result": res,
            "host_some_ms_per_s": (h1.get("some", 0) - h0.get("some", 0)) / 1000 / wall,
            "loadavg_start": la0,
            "restored": list(restored),
        })
        rec["analysis"] = scen.analyse(rec, ctx.credit_max_s)
        rec["metric"] = lookup(rec, scen.metric[0])
        rec["extra"] = {k: lookup(rec, k) for k, _ in scen.extra_metrics}
    except Exception as e:      # a failed run is recorded, the bench goes on
        rec["ok"] = False
        rec["error"] = f"{type(e).__name__}: {e}"
    finally:
        if probe and probe.observer:
            try:
                probe.stop()
            except Exception:
                pass
        _finish(ctx, rec, gov, trace, [cg, side], rundir)
    return rec


def _stop_workload(p, timeout=10.0):
    """SIGTERM a workload we started (by PID); its JSON line, or None."""
    if p.poll() is None:
        try:
            p.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    try:
        for line in reversed((out or "").strip().splitlines()):
            if line.startswith("{"):
                return json.loads(line)
    except ValueError:
        pass
    return None


def run_multi(ctx, scen, config, rep):
    """Host protection: scen.groups governed cgroups (quota/period each; one
    bwgovd governs them all, or static quotas) and an ungoverned antagonist
    sibling (no quota, the same weight) running one busy thread per CPU from
    the start. After scen.idle_s each governed group starts a hog for
    scen.duration; the antagonist's usage over exactly that window (from
    before the hogs start to after they exit) is the figure of merit."""
    ctx.seq += 1
    base = f"{cgmod.PREFIX}{os.getpid()}-{ctx.seq}"
    rundir = os.path.join(ctx.workdir, f"{scen.name}-{config}-{rep}")
    os.makedirs(rundir, exist_ok=True)
    groups = [_new_cgroup(ctx, f"{base}-g{i}") for i in range(scen.groups)]
    ant = _new_cgroup(ctx, f"{base}-ant")
    gov = trace = None
    procs = []
    rec = {"scenario": scen.name, "config": config, "rep": rep, "cgroup": base, "ok": False,
           "baseline_quota_usec": scen.quota, "period_usec": scen.period,
           "cgroups": [g.name for g in groups], "antagonist_cgroup": ant.name}
    ncpu = os.cpu_count() or 1
    try:
        for g in groups:
            _setup(ctx, g, None if config == "unlimited" else scen.quota, scen.period,
                   scen.quota if config == "static+burst" else 0)
        _setup(ctx, ant, None, scen.period)
        gov, trace = _start_governor(ctx, config, scen, rundir, groups)
        credit0 = _credit_at_adoption(gov, groups)
        gstart_cpu = proc_stats(gov.pid)["cpu_s"] if gov else None

        t0 = time.monotonic()
        e0 = time.time()
        h0, la0 = host_psi(), loadavg()
        s0 = [g.stat() for g in groups]
        samplers = [Sampler(c, t0) for c in groups + [ant]]
        for smp in samplers:
            smp.sample()
            smp.start()
        logf = open(os.path.join(rundir, "workload.err"), "w")
        try:
            ap = ant.spawn(scen.antagonist_argv(ctx.bins, ncpu), stdout=subprocess.PIPE, stderr=logf, text=True)
            procs.append(ap)
            ctx.live_procs.append(ap)
            time.sleep(scen.idle_s)
            if ap.poll() is not None:
                raise RuntimeError(f"the antagonist exited early ({ap.returncode})")
            a0 = ant.stat()["usage_usec"]
            g0 = [g.stat()["usage_usec"] for g in groups]
            th0 = time.monotonic()
            hogs = []
            for i, g in enumerate(groups):
                hp = g.spawn(scen.hog_argv(ctx.bins, rep, i), stdout=subprocess.PIPE, stderr=logf, text=True)
                hogs.append(hp)
                procs.append(hp)
                ctx.live_procs.append(hp)
            deadline = time.monotonic() + scen.timeout()
            hog_res = []
            for hp in hogs:
                out, _ = hp.communicate(timeout=max(1.0, deadline - time.monotonic()))
                if hp.returncode != 0:
                    raise RuntimeError(f"a hog exited with {hp.returncode}")
                hog_res.append(next((json.loads(x) for x in reversed(out.strip().splitlines())
                                     if x.startswith("{")), None))
            th1 = time.monotonic()
            a1 = ant.stat()["usage_usec"]
            g1 = [g.stat()["usage_usec"] for g in groups]
            ant_res = _stop_workload(ap)
        finally:
            for smp in samplers:
                smp.stop()
            logf.close()
        t1 = time.monotonic()
        s1, h1 = [g.stat() for g in groups], host_psi()
        wall = t1 - t0
        hog_wall = th1 - th0

        if gov:
            rec["governor"] = _stop_governor(gov, trace, groups, e0, wall, scen.idle_s, gstart_cpu)
            if credit0 is not None:
                rec["governor"]["credit_at_adoption_usec"] = credit0
            gov = None

        extra = contract_extra_s(config, scen, ctx.credit_max_s)
        per = []
        for i, g in enumerate(groups):
            c = _counters(s0[i], s1[i], samplers[i].rows, wall, scen.baseline_cpus, extra, scen.quota / 1e6)
            c.update({"cgroup": g.name, "hog_cpu_s": (g1[i] - g0[i]) / 1e6,
                      "hog_cpus": (g1[i] - g0[i]) / 1e6 / hog_wall, "hog_result": hog_res[i],
                      "restored": list(g.get())})
            per.append(c)
        # The run as one row of the table: counters summed over the governed
        # groups, the contract held when it held for each.
        d = {k: sum(p["delta"][k] for p in per) for k in per[0]["delta"]}
        usage = sum(p["usage_cpu_s"] for p in per)
        base_s = scen.baseline_cpus * wall * len(groups)
        ant_cpu = (a1 - a0) / 1e6
        rec.update({
            "ok": True, "wall_s": wall, "hog_window_s": [th0 - t0, th1 - t0], "hog_wall_s": hog_wall,
            "groups": per,
            "antagonist": {"cpu_s_hog": ant_cpu, "cpus_hog": ant_cpu / hog_wall, "threads": ncpu,
                           "result": ant_res, "timeline": samplers[-1].rows},
            "result": {"hogs": hog_res, "antagonist": ant_res},
            "delta": d,
            "throttled_pct": 100.0 * d["nr_throttled"] / d["nr_periods"] if d["nr_periods"] > 0 else 0.0,
            "throttled_ms_per_s": d["throttled_usec"] / 1000 / wall,
            "psi_some_ms_per_s": d["psi_some_usec"] / 1000 / wall,
            "psi_full_ms_per_s": d["psi_full_usec"] / 1000 / wall,
            "host_some_ms_per_s": (h1.get("some", 0) - h0.get("some", 0)) / 1000 / wall,
            "loadavg_start": la0,
            "usage_cpu_s": usage, "baseline_cpu_s": base_s,
            "usage_over_baseline": usage / base_s if base_s else None,
            "contract_extra_s": extra,
            "budget_cpu_s": base_s + extra * len(groups) if extra is not None else None,
            "within_contract": all(p["within_contract"] for p in per) if extra is not None else None,
            "window_excess_s": max(p["window_excess_s"] for p in per),
            "window_allowance_s": per[0]["window_allowance_s"],
            "within_contract_window": all(p["within_contract_window"] for p in per) if extra is not None else None,
            "second_half": per[0]["second_half"],
            "timeline": per[0]["timeline"],
        })
        rec["analysis"] = {"antagonist_cpu_s": ant_cpu, "antagonist_cpus": ant_cpu / hog_wall,
                           "governed_cpus": sum(p["hog_cpus"] for p in per)}
        for i, p in enumerate(per):
            rec["analysis"][f"g{i}_cpus"] = p["hog_cpus"]
        rec["metric"] = lookup(rec, scen.metric[0])
        rec["extra"] = {k: lookup(rec, k) for k, _ in scen.extra_metrics}
    except Exception as e:
        rec["ok"] = False
        rec["error"] = f"{type(e).__name__}: {e}"
    finally:
        for p in procs:
            cgmod.kill_and_reap(p, timeout=5)
        _finish(ctx, rec, gov, trace, groups + [ant], rundir)
    return rec
