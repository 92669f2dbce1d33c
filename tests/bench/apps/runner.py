# SPDX-License-Identifier: LGPL-2.1-or-later
"""One run of an application scenario under one configuration, and the
preparation shared by the runs (data, the rate that makes unlimited use
TARGET_SHARE of the quota, or the share --load asks for).

A run: fresh bwgov-bench-* cgroups — the server's (its processes only), the
clients' -gen (no quota, pinned clients) and, for the neighbour, a -victim —
all with the benchmark weight against the rest of the host; the server's
bandwidth as the configuration sets it (unlimited; the quota; the quota with
burst = quota; the quota under the Koordinator-style loop or bwgovd); the
server started, the governor started and past its adoption (for start-up
scenarios the other way round: the group is idle and its credit full when the
server starts), then the load. Around it: the cgroup's counters, a 100 ms
timeline (harness.runner.Sampler), bwgovd's credit every 0.5 s, the host's
pressure and busy CPU, and the governor's writes counted by strace."""

import glob
import os
import re
import shutil
import threading
import time

from harness import cgroup as cgmod
from harness.governor import Bwgovd, Koordinator, NoTrace, WriteTrace, proc_stats
from harness.runner import Sampler, _counters, _stop_governor, host_psi, loadavg

from . import clients
from .scenarios import BARE, CEILING, NOHOST, NOTEL, SHARE_RANGE, TARGET_SHARE

# bwgovd runs with its defaults (CreditMax=30s, CPUQuotaMax= four times the
# baseline, CPUBurstMax= the quota, HostPressureLimit=40%): what an operator
# gets with no tuning. Only Mode= is set (and HostPressureLimit=0% for the
# diagnostic row, Telemetry=no for the other).
DEFAULT_CREDIT_MAX_S = 30.0
DEFAULT_QUOTA_MAX = 4.0         # CPUQuotaMax= 400 %
KOORD_CAP_PCT = 300.0


def host_cpu_s(text=None):
    """The host's busy and stolen CPU seconds since boot, from /proc/stat's
    first line (or TEXT): busy is user, nice, system, irq and softirq;
    stolen (steal) is the time the hypervisor ran something else while a
    CPU of this guest wanted to run, which no process here used. None when
    unreadable."""
    try:
        if text is None:
            with open("/proc/stat") as f:
                text = f.readline()
        v = [int(x) for x in text.split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(v) < 8:
        return None
    tck = os.sysconf("SC_CLK_TCK")
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / tck, v[7] / tck


class GovSampler(threading.Thread):
    """bwgovd's own figures every 0.5 s: credit, quota, headroom, shed, and
    the host's figures that its brake reads (its metrics file is written once
    per Interval=, so a figure repeats between writes)."""

    KEYS = ("bwgov_credit_usec", "bwgov_quota_usec", "bwgov_headroom_usec", "bwgov_shed_permille",
            "bwgov_headroom_level", "bwgov_host_pressure_some_usec_per_second",
            "bwgov_host_other_usage_usec_per_second", "bwgov_host_other_wait_usec_per_second",
            "bwgov_host_governed_excess_usec_per_second", "bwgov_host_idle_usec_per_second",
            "bwgov_host_other_behind_usec_per_second")

    def __init__(self, gov, t0):
        super().__init__(daemon=True)
        self.gov, self.t0 = gov, t0
        self.rows = []
        self.halt = threading.Event()

    def run(self):
        while not self.halt.wait(0.5):
            m = self.gov.metrics()
            self.rows.append([round(time.monotonic() - self.t0, 2)] + [m.get(k) for k in self.KEYS])

    def stop(self):
        self.halt.set()
        self.join(2)


class Run:
    """What a scenario's drive() sees of its run."""

    def __init__(self, ctx, scen, config, rep, rundir, cg, gen, victim, server, errlog):
        self.ctx, self.scen, self.config, self.rep = ctx, scen, config, rep
        self.rundir, self.cg, self.gen, self.victim = rundir, cg, gen, victim
        self.server, self.errlog = server, errlog
        self.bins = ctx.bins
        self.latencies = []
        self.measure_start = None

    def mark_measure_start(self):
        self.measure_start = time.monotonic()


class Context:
    def __init__(self, layout, bins, workdir, log, shares, repo):
        self.layout, self.bins, self.workdir, self.log = layout, bins, workdir, log
        self.shares, self.repo = shares, repo
        self.seq = 0
        self.live = []                  # cgroups to remove on cleanup
        self.servers = {}               # scenario name -> prepared server
        self.shared = {}                # the PostgreSQL template, calibrations
        self.prepare_notes = {}
        self.bwgovd_unit = {}           # [Bandwidth] keys every bwgovd row gets beside Mode= (--bwgovd-set)
        self.target_share = TARGET_SHARE  # unlimited's share of the quota the rates are chosen for (--load)

    def new_cgroup(self, suffix, quota=None, period=100000, burst=0, weight=True):
        """weight: the benchmark's cpu.shares (--shares); False keeps the
        default, as a service beside the server has."""
        self.seq += 1
        cg = cgmod.Cgroup(self.layout, f"{cgmod.PREFIX}apps-{os.getpid()}-{self.seq}{suffix}")
        self.live.append(cg)
        cg.create()
        if self.shares and weight:
            cg.set_weight(self.shares)
        cg.set(quota, period, burst)
        return cg

    def drop(self, cg):
        for w in cg.destroy():
            self.log(f"  warning: {w}")
        if cg in self.live:
            self.live.remove(cg)

    def cleanup(self):
        for s in self.servers.values():
            if s is not None:
                for w in s.stop():
                    self.log(f"  warning: {w}")
        for cg in list(self.live):
            self.drop(cg)


TIME_UNITS_S = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0,
                "h": 3600.0, "hr": 3600.0}


def timespan_s(text):
    """A bwgov.conf(5) time span ("2s", "1min 30s", "500ms", a bare number
    of seconds) in seconds; ValueError for anything else."""
    parts = re.findall(r"\s*(\d+(?:\.\d*)?)\s*([a-z]*)", text)
    if not text.strip() or "".join(n + u for n, u in parts) != re.sub(r"\s+", "", text):
        raise ValueError(f"expected a time span such as 2s or 500ms, got {text!r}")
    total = 0.0
    for num, unit in parts:
        if unit and unit not in TIME_UNITS_S:
            raise ValueError(f"unknown time unit {unit!r} in {text!r}")
        total += float(num) * TIME_UNITS_S.get(unit, 1.0)
    return total


def contract_extra_s(config, quota_s, unit=None):
    """What the contract allows a configuration above baseline × t, in CPU-s
    (None: no contract). bwgovd's is CreditMax= + the largest burst, its
    defaults (30 s, CPUBurstMax= the quota) or what --bwgovd-set gave."""
    if config == "static":
        return 0.0
    if config == "static+burst":
        return quota_s
    if config.startswith("bwgovd"):
        unit = unit or {}
        credit = timespan_s(unit["CreditMax"]) if "CreditMax" in unit else DEFAULT_CREDIT_MAX_S
        burst = timespan_s(unit["CPUBurstMax"]) if "CPUBurstMax" in unit else quota_s
        return credit + burst
    return None


def limits(config, quota, period, ncpus):
    """(quota, burst) a configuration's cgroup starts with (quota None: no
    limit). static-ceiling: what bwgovd's elastic row holds once it has
    raised the quota with credit to spare, CPUQuotaMax= (4× the baseline)
    but at most the host's CPUs, with a burst of the baseline quota
    (CPUBurstMax=), and no governor."""
    if config == "unlimited":
        return None, 0
    if config == CEILING:
        return min(int(quota * DEFAULT_QUOTA_MAX), ncpus * period), quota
    return quota, quota if config == "static+burst" else 0


def governor_globals(config):
    """The [Governor] keys a bwgovd row sets besides the harness's (None:
    bwgovd's defaults)."""
    return {NOHOST: {"HostPressureLimit": "0%"}, NOTEL: {"Telemetry": "no"}}.get(config)


def instruments(config, path):
    """How a governor row is watched: its writes traced (strace), but for
    the bare row, whose write count is bwgovd's own metric."""
    return NoTrace(path) if config == BARE else WriteTrace(path)


def sampled(config, gov):
    """A bwgovd row's credit and host figures are read every 0.5 s, but for
    the bare row's."""
    return isinstance(gov, Bwgovd) and config != BARE


def _start_governor(ctx, scen, config, rundir, cg):
    if config.startswith("bwgovd"):
        mode = "burst" if config == "bwgovd-burst" else "elastic"
        extra_global = governor_globals(config)
        gov = Bwgovd(ctx.bins["bwgovd"], os.path.join(rundir, "gov"), [cg.name], mode, None, None,
                     extra_global=extra_global, extra_unit=ctx.bwgovd_unit or None)
        if scen.empty_credit:
            q, p, b = cg.get()
            gov.seed_state({cg.name: {"cgroup": cg.name, "quota_usec": q, "period_usec": p, "burst_usec": b,
                                      "has_burst": cg.has_burst()}}, credit_usec=0)
    elif config == "koordinator":
        gov = Koordinator(ctx.bins["koordinator"], cg.bw_dir, cg.is_v2, KOORD_CAP_PCT, 1.0, rundir)
    else:
        return None, None
    trace = instruments(config, os.path.join(rundir, "writes.strace"))
    ok = gov.start(trace, list(cg.bandwidth_files().values()))
    if not ok:
        tail = " | ".join(gov.log_tail(5)) if isinstance(gov, Bwgovd) else ""
        trace.stop()
        raise RuntimeError(f"the governor did not start: {tail}")
    return gov, trace


def _brake_notices(gov):
    if not isinstance(gov, Bwgovd):
        return None
    try:
        with open(gov.log, errors="replace") as f:
            return sum(1 for line in f if "withdrawing headroom" in line)
    except OSError:
        return None


def run_one(ctx, scen, config, rep):
    rundir = os.path.join(ctx.workdir, "runs", f"{scen.name}-{config}-{rep}")
    os.makedirs(rundir, exist_ok=True)
    rec = {"scenario": scen.name, "config": config, "rep": rep, "ok": False, "rate_per_s": scen.rate,
           "baseline_quota_usec": scen.quota, "period_usec": scen.period}
    q, b = limits(config, scen.quota, scen.period, os.cpu_count())
    cg = ctx.new_cgroup("", q, scen.period, b)
    gen = ctx.new_cgroup("-gen")
    victim = ctx.new_cgroup("-victim") if scen.victim else None
    server = ctx.servers.get(scen.name)
    gov = trace = gsamp = None
    errlog = open(os.path.join(rundir, "clients.err"), "w")
    try:
        if server is not None and scen.start_before_governor:
            server.start(cg)
        gov, trace = _start_governor(ctx, scen, config, rundir, cg)
        gstart_cpu = proc_stats(gov.pid)["cpu_s"] if gov else None
        t0, e0 = time.monotonic(), time.time()
        s0, h0, b0, la0 = cg.stat(), host_psi(), host_cpu_s(), loadavg()
        g0 = gen.stat()["usage_usec"]
        sampler = Sampler(cg, t0)
        sampler.sample()
        sampler.start()
        if sampled(config, gov):
            gsamp = GovSampler(gov, t0)
            gsamp.start()
        r = Run(ctx, scen, config, rep, rundir, cg, gen, victim, server, errlog)
        try:
            res = scen.drive(r)
        finally:
            sampler.stop()
            if gsamp:
                gsamp.stop()
        t1 = time.monotonic()
        s1, h1, b1 = cg.stat(), host_psi(), host_cpu_s()
        wall = t1 - t0
        if gov:
            rec["governor"] = _stop_governor(gov, trace, [cg], e0, wall, scen.steady_from(), gstart_cpu)
            if not rec["governor"]["traced"]:
                # Not traced (the bare row): the writes bwgovd counted itself.
                rec["governor"]["writes"] = rec["governor"]["writes_metric"]
            rec["governor"]["brake_notices"] = _brake_notices(gov)
            rec["governor"]["timeline"] = gsamp.rows if gsamp else None
            rec["governor"]["keys"] = list(GovSampler.KEYS)
            gov = None
        if server is not None:
            for w in server.stop():
                ctx.log(f"  warning: {w}")
        rec.update(_counters(s0, s1, sampler.rows, wall, scen.quota_cpus,
                             contract_extra_s(config, scen.quota / 1e6, ctx.bwgovd_unit), scen.quota / 1e6))
        gen_cpus = (gen.stat()["usage_usec"] - g0) / 1e6 / wall
        busy = (b1[0] - b0[0]) / wall if b0 is not None and b1 is not None else None
        steal = (b1[1] - b0[1]) / wall if b0 is not None and b1 is not None else None
        rec.update({
            "ok": True, "wall_s": wall, "result": res,
            "usage_cpus": rec["usage_cpu_s"] / wall,
            "usage_share_of_quota": rec["usage_cpu_s"] / wall / scen.quota_cpus,
            "host_some_ms_per_s": (h1.get("some", 0) - h0.get("some", 0)) / 1000 / wall,
            "host_busy_cpus": busy, "host_steal_cpus": steal, "clients_cpus": gen_cpus,
            "outside_cpus": (busy - rec["usage_cpu_s"] / wall - gen_cpus) if busy is not None else None,
            "loadavg_start": la0, "restored": list(cg.get()),
            "measure_from_s": (r.measure_start - t0) if r.measure_start else None,
        })
        rec["latency_cdf"] = clients.cdf_points(r.latencies)
    except Exception as e:      # a failed run is recorded, the bench goes on
        rec["error"] = f"{type(e).__name__}: {e}"
        if server is not None:
            rec["server_log"] = server.log_tail(8)
    finally:
        errlog.close()
        if gov:
            try:
                gov.stop()
            except Exception:
                pass
        if trace:
            trace.stop()
        if server is not None:
            server.stop()
        for c in (cg, gen, victim):
            if c is not None:
                ctx.drop(c)
    if rec.get("ok"):
        shutil.rmtree(os.path.join(rundir, "gov", "state"), ignore_errors=True)
    return rec


# ---- preparation: data, and the rate ----------------------------------------------------

def fresh_log_prefix(prefix):
    """prefix, with no file prefix.* left from an earlier call: pgbench writes
    its log to prefix.PID, and the count reads every prefix.* (the probe and
    each step of a calibration use the same prefix)."""
    for path in glob.glob(glob.escape(prefix) + ".*"):
        os.remove(path)
    return prefix


def _measure_cpu_per_request(ctx, scen, server, rate, seconds):
    """CPU-seconds the server uses per request at `rate`, unlimited, and its
    CPU use in CPUs."""
    cg = ctx.new_cgroup("-cal")
    gen = ctx.new_cgroup("-cal-gen")
    try:
        server.start(cg)
        log = fresh_log_prefix(os.path.join(ctx.workdir, f"calibrate-{scen.name}"))
        u0 = cg.stat()["usage_usec"]
        with open(log + ".err", "w") as errlog:
            out, rc = clients.run_client(gen, scen.calibrate_argv(ctx.bins, server, rate, seconds, log),
                                         seconds + 120, errlog)
        u1 = cg.stat()["usage_usec"]
        n = scen.calibrate_count(out, log)
    finally:
        server.stop()
        ctx.drop(cg)
        ctx.drop(gen)
    if n <= 0:
        raise RuntimeError(f"calibration of {scen.name}: no request answered")
    return (u1 - u0) / 1e6 / n, (u1 - u0) / 1e6 / seconds


PROBE = {"web": (3.0, 6), "web-nginx": (10.0, 6), "web-caddy": (10.0, 6), "web-lighttpd": (10.0, 6),
         "db-tpcb": (150.0, 6), "db-select": (600.0, 6), "db-report": (10.0, 6),
         "mariadb-ro": (100.0, 6), "mariadb-rw": (100.0, 6), "mariadb-ranges": (10.0, 6), "jvm": (60.0, 10)}


def calibrate(ctx, scen, server):
    """Sets scen.rate so that unlimited uses ctx.target_share of the quota. The
    CPU per request is measured at a probe rate once per server kind; then,
    per quota, the rate it suggests is tried and, unless the share it used is
    within 5 % of the target, scaled by target / share (a database's CPU per
    transaction falls as the rate rises, a compressing web server's does
    not), tried again and scaled once more if need be."""
    key = scen.kind
    if scen.kind in ("web", "neighbour", "db"):
        key = scen.calibration_key
    cal = ctx.shared.get(("cal", key))
    if cal is None:
        rate, secs = PROBE[key]
        c1, _ = _measure_cpu_per_request(ctx, scen, server, rate, secs)
        cal = {"probe_rate": rate, "cpu_per_request_probe_ms": c1 * 1000}
        ctx.shared[("cal", key)] = cal
        ctx.log(f"calibration {key}: {c1 * 1000:.3f} ms of CPU per request at {rate:g}/s")
    per_quota = ctx.shared.get(("cal", key, scen.quota))
    if per_quota is None:
        secs = PROBE[key][1]
        rate = scen.sendable_rate(ctx.target_share * scen.quota_cpus / (cal["cpu_per_request_probe_ms"] / 1000))
        steps = []
        for _ in range(2):
            c, used = _measure_cpu_per_request(ctx, scen, server, rate, secs)
            share = used / scen.quota_cpus
            steps.append({"rate": round(rate, 1), "share": round(share, 3), "cpu_per_request_ms": c * 1000})
            if abs(share - ctx.target_share) <= 0.05:
                break
            rate = scen.sendable_rate(rate * min(2.0, max(0.5, ctx.target_share / share)))
        per_quota = {"rate": round(rate, 1), "steps": steps, "cpu_per_request_ms": steps[-1]["cpu_per_request_ms"]}
        ctx.shared[("cal", key, scen.quota)] = per_quota
        ctx.log(f"calibration {key} at {scen.quota_cpus:g} CPU: "
                + ", ".join(f"{s['rate']:g}/s used {100 * s['share']:.0f} %" for s in steps)
                + f"; rate {per_quota['rate']:g}/s")
    scen.rate = per_quota["rate"]
    scen.calibration = dict(cal, target_share=ctx.target_share, share_range=list(SHARE_RANGE), rate=scen.rate,
                            steps=per_quota["steps"], cpu_per_request_ms=per_quota["cpu_per_request_ms"])


def shared_template(ctx, key, make, note):
    """The database template every scenario of one engine copies, made once
    in a setup cgroup of its own."""
    srv = ctx.shared.get(key)
    if srv is None:
        d = os.path.join(ctx.workdir, "srv", f"{key}-template")
        os.makedirs(d, exist_ok=True)
        srv = make(d)
        setup = ctx.new_cgroup("-setup")
        try:
            srv.prepare(setup)
        finally:
            srv.stop()
            ctx.drop(setup)
        ctx.shared[key] = srv
        ctx.log(note(srv))
    return srv


def prepare(ctx, scen):
    """Data and rate of a scenario, once."""
    from . import servers
    t = time.monotonic()
    wd = os.path.join(ctx.workdir, "srv", scen.name)
    os.makedirs(wd, exist_ok=True)
    os.chmod(wd, 0o755)
    if scen.kind == "db" and scen.engine == "postgres":
        pg = shared_template(ctx, "pg", servers.Postgres,
                             lambda s: f"PostgreSQL cluster: initdb and pgbench -i -s {s.scale} in {s.init_s:.1f} s")
        scen.shared = pg
        uid, gid = servers.user_ids("postgres")
        os.chown(wd, uid, gid)
        scen.write_script(wd, pg.scale)
    elif scen.kind == "db":
        scen.shared = shared_template(ctx, "mariadb", servers.MariaDb,
                                      lambda s: f"MariaDB data: mariadb-install-db and sysbench prepare "
                                      f"({s.TABLES} × {s.TABLE_SIZE} rows) in {s.init_s:.1f} s")
        uid, gid = servers.user_ids("mysql")
        os.chown(wd, uid, gid)
    if scen.kind == "build":
        scen.prepare(ctx.repo, wd, ctx.log)
        ctx.servers[scen.name] = None
    elif scen.kind == "job":
        scen.prepare(wd)
        ctx.servers[scen.name] = None
        calibrate_job(ctx, scen)
    else:
        srv = scen.server(wd)
        ctx.servers[scen.name] = srv
        if scen.kind == "jvm":
            calibrate_jvm(ctx, scen, srv)
        else:
            calibrate(ctx, scen, srv)
    ctx.prepare_notes[scen.name] = {"prepare_s": round(time.monotonic() - t, 1), "rate_per_s": scen.rate,
                                    "calibration": scen.calibration}


def calibrate_job(ctx, scen):
    """The job's interval: its CPU (unlimited, the least of three runs after
    one that warms the page cache) over ctx.target_share of the quota; the rate
    is its inverse, in jobs per second."""
    cal = ctx.shared.get(("cal", "job", scen.tool))
    if cal is None:
        cg = ctx.new_cgroup("-cal")
        try:
            cpu, walls = [], []
            for i in range(4):
                u0, t = cg.stat()["usage_usec"], time.monotonic()
                p = scen.run_once(cg)
                if p.wait(timeout=300) != 0:
                    raise RuntimeError(f"calibration of {scen.name}: {scen.argv[0]} exited with {p.returncode}")
                if i:
                    cpu.append((cg.stat()["usage_usec"] - u0) / 1e6)
                    walls.append(time.monotonic() - t)
        finally:
            ctx.drop(cg)
        cal = {"cpu_per_request_ms": min(cpu) * 1000, "wall_unlimited_ms": min(walls) * 1000}
        ctx.shared[("cal", "job", scen.tool)] = cal
        ctx.log(f"calibration job {scen.tool}: {cal['cpu_per_request_ms']:.0f} ms of CPU per job, "
                f"{cal['wall_unlimited_ms']:.0f} ms wall unlimited")
    scen.rate = round(ctx.target_share * scen.quota_cpus / (cal["cpu_per_request_ms"] / 1000), 3)
    scen.calibration = dict(cal, target_share=ctx.target_share, rate=scen.rate)


def calibrate_jvm(ctx, scen, srv):
    """The JSP load's rate: CPU per request of a warmed-up Tomcat (unlimited,
    after 10 s of load), so that in steady state it uses ctx.target_share of the
    quota; during the warm-up the JIT adds to it."""
    from . import servers
    cal = ctx.shared.get(("cal", "jvm"))
    if cal is None:
        cg = ctx.new_cgroup("-cal")
        gen = ctx.new_cgroup("-cal-gen")
        try:
            srv.start(cg)
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and servers.http_get(srv.port, srv.SERVLET, 10)[0] != 200:
                if not srv.alive():
                    raise RuntimeError(f"tomcat exited: {srv.log_tail()}")
                time.sleep(0.1)
            rate, secs = PROBE["jvm"]
            url = f"http://127.0.0.1:{srv.port}{srv.LOAD_PATH}"
            with open(os.path.join(ctx.workdir, "calibrate-jvm.err"), "w") as errlog:
                log = os.path.join(ctx.workdir, "calibrate-jvm")
                clients.run_client(gen, clients.httpload_argv(ctx.bins["bwgov-httpload"], url, rate, secs, 0, 1, log,
                                                              connections=8), secs + 120, errlog)
                u0 = cg.stat()["usage_usec"]
                out, rc = clients.run_client(gen, clients.httpload_argv(ctx.bins["bwgov-httpload"], url, rate, secs,
                                                                        0, 2, log, connections=8), secs + 120, errlog)
                u1 = cg.stat()["usage_usec"]
            res, _ = clients.httpload_result(out, log)
        finally:
            srv.stop()
            ctx.drop(cg)
            ctx.drop(gen)
        if res["completed"] <= 0:
            raise RuntimeError("calibration of the JVM load: no request answered")
        cal = {"probe_rate": rate, "cpu_per_request_ms": (u1 - u0) / 1e3 / res["completed"]}
        ctx.shared[("cal", "jvm")] = cal
        ctx.log(f"calibration jvm: {cal['cpu_per_request_ms']:.3f} ms of CPU per warm request")
    scen.rate = round(ctx.target_share * scen.quota_cpus / (cal["cpu_per_request_ms"] / 1000), 1)
    scen.calibration = dict(cal, target_share=ctx.target_share, rate=scen.rate)
