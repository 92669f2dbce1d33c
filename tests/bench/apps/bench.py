# SPDX-License-Identifier: LGPL-2.1-or-later
"""The application benchmark as a whole: prepare every scenario (data, rate),
then every repetition of every scenario with its configurations back to back
in an order rotated per repetition and scenario (the same seed in each), and the
report.
run() is what tests/bench/run --only apps and tests/bench/apps/run call."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

from . import cron, parts, report, runner, scenarios, servers


class Skip(Exception):
    pass


def preflight(only=()):
    """What every scenario needs that a package provides; raises Skip."""
    if os.geteuid() != 0:
        raise Skip("the application benchmark creates cgroups and must run as root")
    for path, pkg in ((servers.APACHE, "apache2"), (servers.NGINX, "nginx"), (servers.CADDY, "caddy"),
                      (servers.LIGHTTPD, "lighttpd"), (servers.LIGHTTPD_DEFLATE, "lighttpd-mod-deflate"),
                      (os.path.join(servers.PG_BIN, "postgres"), "postgresql-15"), (servers.MARIADBD, "mariadb-server"),
                      (servers.TOMCAT_HOME, "tomcat10"), (servers.TOMCAT_EXAMPLES, "tomcat10-examples")):
        if not os.path.exists(path):
            raise Skip(f"{path} is missing (Debian package {pkg}; scripts/deps.sh BWGOV_APPS_DEPS installs it)")
    for tool in ("java", "taskset", "strace", "sysbench", "xz", "gzip", "zstd"):
        if not shutil.which(tool):
            raise Skip(f"{tool} is missing")


def planned(suite):
    """(scenario, configuration, repetition) in the order they run: every
    scenario's repetition r before any repetition r + 1, the configurations
    of one back to back, rotated by the repetition and by the scenario's
    place in the suite, so that no configuration is always last, not even
    in a quick run's single repetition."""
    plan = []
    for rep in range(max((s.reps for s in suite), default=0)):
        for i, sc in enumerate(suite):
            if rep >= sc.reps:
                continue
            k = (rep + i) % len(sc.configs)
            for cfg in sc.configs[k:] + sc.configs[:k]:
                plan.append((sc, cfg, rep))
    return plan


def estimate_s(sc, cfg):
    if sc.kind == "jvm":
        base = {"unlimited": 12, "static": 25, "static+burst": 22}.get(cfg, 18)
        return base + sc.duration + sc.steady + 3
    if sc.kind == "build":
        return {"unlimited": 40, "static": 150, "static+burst": 145}.get(cfg, 100) * (0.3 if "libbwgov" in
                                                                                      " ".join(sc.targets) else 1)
    return sc.warmup + sc.duration + (5 if sc.kind == "db" else 2) + (1 if cfg.startswith(("bwgovd", "koord")) else 0)


def run(bins, layout, quick, log, workdir=None, shares=10240, only=(), repo=None, reps=None, keep=False,
        configs=(), bwgovd_unit=None, outside_cron=None, load=None):
    """Returns the result dict (meta, scenarios, records, aggregates, targets).
    configs: the configurations to run in every scenario instead of its own;
    bwgovd_unit: [Bandwidth] keys for every bwgovd row besides Mode=
    (otherwise bwgovd runs with its defaults); outside_cron: (n, spin_s,
    period_s) for a cron job beside the server for the whole run (cron.py),
    calibration included; load: unlimited's share of the quota the rates
    are chosen for, within SHARE_RANGE (default TARGET_SHARE)."""
    if load is not None and not scenarios.share_in_range(load):
        raise ValueError(f"load {load:g} is outside {scenarios.SHARE_RANGE[0]:g}–{scenarios.SHARE_RANGE[1]:g}")
    # The contract is judged with the CreditMax= and CPUBurstMax= bwgovd runs
    # with: refused before anything runs when the harness cannot read them.
    runner.contract_extra_s("bwgovd-elastic", 0.0, bwgovd_unit)
    preflight(only)
    suite = scenarios.suite(quick, only)
    for s in suite:
        if reps:
            s.reps = reps
        if configs:
            unknown = [c for c in configs if c not in scenarios.CONFIG_TITLES]
            if unknown:
                raise ValueError(f"unknown configuration {unknown[0]}")
            s.configs = list(configs)
    base = workdir or tempfile.mkdtemp(prefix="bwgov-bench-apps-", dir="/dev/shm" if os.path.isdir("/dev/shm")
                                       else None)
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    ctx = runner.Context(layout, bins, base, log, shares, repo)
    ctx.bwgovd_unit = dict(bwgovd_unit or {})
    if load is not None:
        ctx.target_share = load
    started = time.time()
    source = parts.provenance(repo)
    load0 = runner.loadavg()
    records, interrupted = [], False
    cron_log, cron_proc = os.path.join(base, "cron.log"), None
    try:
        if outside_cron:
            cron_cg = ctx.new_cgroup("-cron", weight=False)
            cron_proc = cron_cg.spawn([sys.executable, os.path.join(os.path.dirname(__file__), "cron.py")]
                                      + [str(x) for x in outside_cron] + [cron_log],
                                      stdin=subprocess.DEVNULL)
            log(f"a cron job beside the server: every {outside_cron[2]:g} s, {outside_cron[0]} processes "
                f"use {outside_cron[1]:g} s of CPU each")
        for sc in suite:
            log(f"preparing {sc.name}")
            runner.prepare(ctx, sc)
        plan = planned(suite)
        log(f"{len(plan)} runs in {len(suite)} scenarios, about "
            f"{sum(estimate_s(s, c) for s, c, _ in plan) / 60:.1f} min")
        for i, (sc, cfg, rep) in enumerate(plan, 1):
            t, m0 = time.time(), time.monotonic()
            rec = runner.run_one(ctx, sc, cfg, rep)
            if cron_proc:
                rec["outside_cron_walls_s"] = cron.bursts_in(cron.read_log(cron_log), m0, time.monotonic())
            records.append(rec)
            m = report.get(rec, "result." + sc.metric[0]) if rec.get("ok") else None
            log(f"[{i}/{len(plan)}] {sc.name} {cfg} rep {rep + 1}: "
                + (f"{sc.metric[1]} {report.fmt(m)} {sc.metric[2]}, throttled {rec['throttled_pct']:.1f} %, "
                   f"CPU {rec['usage_cpus']:.3f}" if rec.get("ok") else f"FAILED: {rec.get('error')}")
                + f" ({time.time() - t:.1f} s)")
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: cleaning up and reporting what was measured")
    finally:
        if cron_proc and cron_proc.poll() is None:
            # SIGTERM: it reaps its processes, so that its cgroup empties.
            cron_proc.terminate()
            try:
                cron_proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
        ctx.cleanup()
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    meta = {"elapsed_min": round((time.time() - started) / 60, 2), "interrupted": interrupted, "quick": quick,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)), "loadavg_start": load0,
            "source": source,
            "prepare": ctx.prepare_notes, "client_cpu": os.cpu_count() - 1, "shares": shares,
            "load_share": ctx.target_share,
            "bwgovd_config": "defaults (CreditMax=30s, CPUQuotaMax=4× the baseline, CPUBurstMax= the quota, "
                             "HostPressureLimit=40%, Interval=1s), Mode= per row"
                             + "".join(f", {k}={v}" for k, v in ctx.bwgovd_unit.items()),
            "koordinator": f"tests/bench/koordinator.py: 1 s loop, ±20 % steps, cap {runner.KOORD_CAP_PCT:g} %"}
    if outside_cron:
        meta["outside_cron"] = {"processes": outside_cron[0], "spin_s": outside_cron[1], "period_s": outside_cron[2]}
    return summarise({"meta": meta, "scenarios": [scenario_dict(s) for s in suite], "records": records})


def scenario_dict(s):
    return {"name": s.name, "kind": s.kind, "title": s.title, "quota_usec": s.quota, "period_usec": s.period,
            "configs": s.configs, "reps": s.reps, "duration_s": s.duration, "warmup_s": s.warmup,
            "rate_per_s": s.rate, "calibration": s.calibration, "metric": list(s.metric),
            "empty_credit": s.empty_credit, "quota_share_checked": s.quota_share_checked}


def summarise(res):
    res["aggregates"] = report.aggregate(res["scenarios"], res["records"])
    res["targets"] = report.evaluate(res["scenarios"], res["aggregates"], res["records"])
    return res
