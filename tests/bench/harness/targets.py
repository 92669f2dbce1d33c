# SPDX-License-Identifier: LGPL-2.1-or-later
"""The targets of issue 6, evaluated on one run's aggregates."""

from .stats import fmt_num, ratio

ELASTIC = "bwgovd-elastic"
BURSTMODE = "bwgovd-burst"
NOHOST = "bwgovd-elastic-nohost"
MODES = (ELASTIC, BURSTMODE, NOHOST)


def _med(agg, sc, cfg, key):
    a = (agg.get(sc) or {}).get(cfg)
    if not a or not a.get(key):
        return None
    return a[key]["median"]


def _extra(agg, sc, cfg, key):
    a = (agg.get(sc) or {}).get(cfg)
    if not a or not a["extra"].get(key):
        return None
    return a["extra"][key]["median"]


def _contract(agg, sc, cfg):
    a = (agg.get(sc) or {}).get(cfg)
    return a.get("within_contract") if a else None


def _all_held(s):
    if not s:
        return None
    k, n = s.split("/")
    return k == n


def _row(target, measured, met):
    return {"target": target, "measured": measured, "met": met}


def _le(x, lim):
    return None if x is None else x <= lim


def evaluate(agg, records, overhead):
    out = []

    # Bursty workload.
    sc = "bursty"
    if sc in agg:
        for cfg in (c for c in MODES if c in agg[sc]):
            thr = _med(agg, sc, cfg, "throttled_pct")
            out.append(_row(f"bursty, {cfg}: throttled periods ≤ 1 % (static {fmt_num(_med(agg, sc, 'static', 'throttled_pct'), 1)} %, "
                            f"burst {fmt_num(_med(agg, sc, 'static+burst', 'throttled_pct'), 1)} %)",
                            f"{fmt_num(thr, 1)} %", _le(thr, 1.0)))
            r = ratio(_med(agg, sc, cfg, "metric"), _med(agg, sc, "unlimited", "metric"))
            out.append(_row(f"bursty, {cfg}: p99 stretch ≤ 1.2× unlimited",
                            f"{fmt_num(_med(agg, sc, cfg, 'metric'))} vs {fmt_num(_med(agg, sc, 'unlimited', 'metric'))} = "
                            f"{fmt_num(r, 2)}×", _le(r, 1.2)))
            c = _contract(agg, sc, cfg)
            out.append(_row(f"bursty, {cfg}: contract held", f"{c} runs within baseline×t + CreditMax + burst",
                            _all_held(c)))

    # Request server.
    sc = "reqserver-0.95"
    if sc in agg:
        for cfg in (c for c in MODES if c in agg[sc]):
            r = ratio(_med(agg, sc, cfg, "metric"), _med(agg, sc, "unlimited", "metric"))
            out.append(_row(f"request server 0.95 CPU, {cfg}: p99 ≤ 1.1× unlimited",
                            f"{fmt_num(_med(agg, sc, cfg, 'metric'))} ms vs {fmt_num(_med(agg, sc, 'unlimited', 'metric'))} ms = "
                            f"{fmt_num(r, 2)}× (static {fmt_num(ratio(_med(agg, sc, 'static', 'metric'), _med(agg, sc, 'unlimited', 'metric')), 2)}×, "
                            f"burst {fmt_num(ratio(_med(agg, sc, 'static+burst', 'metric'), _med(agg, sc, 'unlimited', 'metric')), 2)}×)",
                            _le(r, 1.1)))
    sc = "reqserver-0.8"
    if sc in agg:
        for cfg in (c for c in MODES if c in agg[sc]):
            m, s = _med(agg, sc, cfg, "metric"), _med(agg, sc, "static", "metric")
            out.append(_row(f"request server 0.8 CPU, {cfg}: p99 no worse than static",
                            f"{fmt_num(m)} ms vs static {fmt_num(s)} ms", None if m is None or s is None else m <= s))
    for sc in ("reqserver-0.95", "reqserver-0.8"):
        if sc not in agg or "koordinator" not in agg[sc]:
            continue
        for cfg in (c for c in (ELASTIC, NOHOST) if c in agg[sc]):
            m, k = _med(agg, sc, cfg, "metric"), _med(agg, sc, "koordinator", "metric")
            um, uk = _med(agg, sc, cfg, "usage_cpu_s"), _med(agg, sc, "koordinator", "usage_cpu_s")
            met = None if None in (m, k, um, uk) else (m < k and um <= uk * 1.02)
            out.append(_row(f"{sc}: {cfg} better p99 than Koordinator-style at equal or lower CPU use (2 % tolerance)",
                            f"p99 {fmt_num(m)} vs {fmt_num(k)} ms; CPU {fmt_num(um)} vs {fmt_num(uk)} CPU-s", met))

    # Warm-up.
    sc = "warmup"
    if sc in agg:
        for cfg in (c for c in (ELASTIC, NOHOST) if c in agg[sc]):
            w = _med(agg, sc, cfg, "metric")
            for ref in ("static", "static+burst"):
                r = ratio(_med(agg, sc, ref, "metric"), w)
                out.append(_row(f"warm-up, {cfg}: done ≥ 2× sooner than {ref}",
                                f"{fmt_num(w)} s vs {fmt_num(_med(agg, sc, ref, 'metric'))} s = {fmt_num(r, 2)}× sooner",
                                None if r is None else r >= 2.0))
            c = _contract(agg, sc, cfg)
            out.append(_row(f"warm-up, {cfg}: CPU within baseline × time + CreditMax + burst",
                            f"{c} runs within; CPU used/baseline×t {fmt_num(_med(agg, sc, cfg, 'usage_over_baseline'), 2)}, "
                            f"largest window excess {fmt_num(_med(agg, sc, cfg, 'window_excess_s'), 2)} CPU-s",
                            _all_held(c)))

    # Steady state: bwgovd's writes in the second half of each run of a
    # stationary workload, and identical writes anywhere.
    steady_w = steady_s = 0.0
    ident = writes = 0
    runs = 0
    has_steady = any(r["scenario"] == "steady" and r.get("ok") for r in records)
    for r in records:
        g = r.get("governor")
        if not r.get("ok") or not g or not r["config"].startswith("bwgovd"):
            continue
        writes += g.get("writes") or 0
        ident += g.get("identical") or 0
        runs += 1
        if (r["scenario"] == "steady") if has_steady else r["scenario"].startswith(("bursty", "reqserver")):
            steady_w += g.get("writes_steady") or 0
            steady_s += g.get("steady_window_s") or 0
    nat = {o["cgroups"]: o.get("native") or {} for o in (overhead or [])}
    sim_wpm = [(n, v.get("writes_per_min_per_cgroup")) for n, v in sorted(nat.items())
               if v.get("writes_per_min_per_cgroup") is not None]
    if steady_s:
        wpm = steady_w / (steady_s / 60)
        where = ("the steady-state run's last " if has_steady else "second halves of bwgovd runs (bursty, request server), ")
        sim_steady = [(n, v.get("writes_per_min_steady_cgroup")) for n, v in sorted(nat.items())
                      if v.get("writes_per_min_steady_cgroup") is not None]
        out.append(_row("steady state: ≤ 1 write per minute per cgroup",
                        f"{fmt_num(wpm, 1)} writes/min over {where}{fmt_num(steady_s, 0)} s ({int(steady_w)} writes)"
                        + ("; simulated kernel, cgroups with steady load: "
                           + ", ".join(f"{n}: {w:.2f}" for n, w in sim_steady) if sim_steady else "")
                        + ("; all cgroups incl. 5 % square-wave ones: "
                           + ", ".join(f"{n}: {w:.2f}" for n, w in sim_wpm) if sim_wpm else ""),
                        wpm <= 1.0 and all(w <= 1.0 for _, w in sim_steady)))
    out.append(_row("zero identical writes (strace, every governor write compared with the file's previous value)",
                    f"{ident} identical of {writes} bwgovd writes in {runs} runs; Koordinator-style "
                    f"{sum((r.get('governor') or {}).get('identical') or 0 for r in records if r['config'] == 'koordinator')}",
                    ident == 0 if runs else None))

    # Overhead.
    if overhead:
        cg = {o["cgroups"]: o.get("callgrind") or {} for o in overhead}
        ipt = [(n, v.get("instructions_per_cgroup_tick")) for n, v in sorted(cg.items())
               if v.get("instructions_per_cgroup_tick")]
        if ipt:
            out.append(_row("overhead: ≤ 20 000 instructions per cgroup per tick",
                            ", ".join(f"{n}: {v:,}" for n, v in ipt), all(v <= 20000 for _, v in ipt)))
        n1k = nat.get(1000)
        if n1k and n1k.get("vmrss_kib"):
            small = nat.get(10) or {}
            out.append(_row("overhead: RSS ≤ 8 MiB with 1 000 cgroups",
                            f"{n1k['vmrss_kib'] / 1024:.1f} MiB VmRSS in steady state, peak {n1k['vmhwm_kib'] / 1024:.1f} MiB "
                            f"(VmHWM; with 10 cgroups {small.get('vmrss_kib', 0) / 1024:.1f} · {small.get('vmhwm_kib', 0) / 1024:.1f} MiB)",
                            n1k["vmrss_kib"] <= 8 * 1024))
        n10k = nat.get(10000)
        o10k = next((o for o in overhead if o["cgroups"] == 10000), None)
        if o10k is not None:
            if n10k.get("cpu_pct_one_core") is not None:
                out.append(_row("overhead: 10 000 cgroups at 1 s interval under 5 % of one core",
                                f"{n10k['cpu_pct_one_core']:.1f} %", n10k["cpu_pct_one_core"] < 5.0))
            else:
                why = []
                if o10k.get("fd_limited"):
                    why.append(f"needs ~{o10k['fds_needed']} open files, RLIMIT_NOFILE is {o10k['rlimit_nofile'][1]}")
                if n10k.get("adopted") is not None:
                    why.append(f"{n10k.get('adopted')} of 10000 adopted after {n10k.get('adopt_s')} s "
                               f"({n10k.get('adopt_cpu_s')} CPU-s)")
                if n10k.get("emfile_warnings"):
                    why.append(f"{n10k['emfile_warnings']} EMFILE warnings")
                larger = [(n, v.get("cpu_pct_one_core")) for n, v in sorted(nat.items())
                          if v.get("cpu_pct_one_core") is not None]
                if larger:
                    why.append("measured: " + ", ".join(f"{n}: {p:.1f} %" for n, p in larger))
                out.append(_row("overhead: 10 000 cgroups at 1 s interval under 5 % of one core",
                                "not reached: " + "; ".join(why), False))
    return out


def markdown(rows):
    lines = ["| target | measured | met |", "|---|---|---|"]
    for r in rows:
        met = "–" if r["met"] is None else ("met" if r["met"] else "**not met**")
        lines.append(f"| {r['target']} | {r['measured']} | {met} |")
    return "\n".join(lines)
