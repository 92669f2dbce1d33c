# SPDX-License-Identifier: LGPL-2.1-or-later
"""Aggregation over repetitions, the markdown tables, and gnuplot plots."""

import os
import shutil
import subprocess

from .scenarios import CONFIG_TITLES
from .stats import fmt_num, fmt_summary, ratio, summary


def _gov(r, key):
    g = r.get("governor")
    return g.get(key) if g else None


# (key, extractor) of everything aggregated per (scenario, config).
MEASURES = {
    "metric": lambda r: r.get("metric"),
    "throttled_pct": lambda r: r.get("throttled_pct"),
    "throttled_ms_per_s": lambda r: r.get("throttled_ms_per_s"),
    "psi_some_ms_per_s": lambda r: r.get("psi_some_ms_per_s"),
    "psi_full_ms_per_s": lambda r: r.get("psi_full_ms_per_s"),
    "host_some_ms_per_s": lambda r: r.get("host_some_ms_per_s"),
    "usage_cpu_s": lambda r: r.get("usage_cpu_s"),
    "usage_over_baseline": lambda r: r.get("usage_over_baseline"),
    "usage_over_budget": lambda r: ratio(r.get("usage_cpu_s"), r.get("budget_cpu_s")),
    "window_excess_s": lambda r: r.get("window_excess_s"),
    "second_half_throttled_pct": lambda r: (r.get("second_half") or {}).get("throttled_pct"),
    "writes": lambda r: _gov(r, "writes"),
    "writes_during": lambda r: _gov(r, "writes_during"),
    "writes_metric": lambda r: _gov(r, "writes_metric"),
    "identical": lambda r: _gov(r, "identical"),
    "gov_cpu_pct": lambda r: _gov(r, "cpu_pct"),
    "gov_vmhwm_kib": lambda r: _gov(r, "vmhwm_kib"),
    "wall_s": lambda r: r.get("wall_s"),
    "rq_p99_ms": lambda r: (r.get("rq") or {}).get("p99_ms"),
    "rq_p50_ms": lambda r: _ms((r.get("rq") or {}).get("p50_usec")),
    "rq_throttled_share": lambda r: (r.get("rq") or {}).get("throttled_share") if (r.get("rq") or {}).get("available") else None,
    "rq_waits": lambda r: (r.get("rq") or {}).get("waits"),
}


def _ms(usec):
    return usec / 1000 if usec is not None else None


def rq_unavailable(records, sc_name, cfg=None):
    """Why runs of a scenario (one configuration) have no run-queue wait:
    the distinct reasons of the runs that tried."""
    return sorted({(r.get("rq") or {}).get("reason") or "?" for r in records
                   if r.get("scenario") == sc_name and r.get("ok") and r.get("rq") is not None
                   and not r["rq"].get("available") and (cfg is None or r["config"] == cfg)})


def aggregate(scenarios, records):
    """{scenario: {config: {measure: summary, "extra": {...}, "within_contract": "k/n", ...}}}"""
    out = {}
    for sc in scenarios:
        per = {}
        for cfg in sc.configs:
            rs = [r for r in records if r["scenario"] == sc.name and r["config"] == cfg and r.get("ok")]
            failed = [r for r in records if r["scenario"] == sc.name and r["config"] == cfg and not r.get("ok")]
            a = {k: summary([f(r) for r in rs]) for k, f in MEASURES.items()}
            a["extra"] = {k: summary([(r.get("extra") or {}).get(k) for r in rs]) for k, _ in sc.extra_metrics}
            wc = [r.get("within_contract") for r in rs if r.get("within_contract") is not None]
            a["within_contract"] = f"{sum(wc)}/{len(wc)}" if wc else None
            ww = [r.get("within_contract_window") for r in rs if r.get("within_contract_window") is not None]
            a["within_contract_window"] = f"{sum(ww)}/{len(ww)}" if ww else None
            a["runs"] = len(rs)
            a["failed"] = len(failed)
            a["errors"] = sorted({r.get("error", "?") for r in failed})
            per[cfg] = a
        static = (per.get("static") or {}).get("metric")
        for cfg, a in per.items():
            a["metric_ratio_to_static"] = ratio(a["metric"]["median"] if a["metric"] else None,
                                                static["median"] if static else None)
        out[sc.name] = per
    return out


def _contract_cell(a):
    """"k/n" runs within the contract over the whole run, and over the worst
    window when that differs."""
    w, ww = a.get("within_contract"), a.get("within_contract_window")
    if not w:
        return "n/a"
    if ww and ww != w:
        return f"{w} (worst window {ww})"
    return w


def rq_notes(sc, records):
    """How the run-queue wait column was measured, the observer's writes,
    and why a cell is n/a."""
    rs = [r for r in records if r.get("scenario") == sc.name and r.get("ok")]
    if not rs:
        return []
    obs = [r["observer"] for r in rs if r.get("observer")]
    out = ["- run-queue wait p99: bwgovd's BPF run-queue telemetry (`bwgovctl latency --json`), the waits of "
           "the run's cgroup from just before the workload started to just after it ended (the difference of the "
           "unit's `total` histograms); a p99 is the upper end of a power-of-two bucket (…, 8.19, 16.4, 32.8 ms), "
           "capped at the longest wait. The bwgovd configurations read their own daemon; unlimited, static, "
           "static + burst and the Koordinator-style comparator a bwgovd in Mode=observe over the same cgroup"
           + (f" (strace, {len(obs)} runs: {sum(o.get('writes_during') or 0 for o in obs)} writes to bandwidth "
              f"files while the workload ran, {sum((o.get('writes') or 0) - (o.get('writes_during') or 0) for o in obs)}"
              f" after it, at the observer's exit; {sum(o.get('other_cgroup_writes') or 0 for o in obs)} other writes "
              "into the cgroup: PSI triggers)" if obs else "") + "."]
    missing = [(cfg, rq_unavailable(records, sc.name, cfg)) for cfg in sc.configs]
    missing += [(cfg, ["not measured (a run from before the column existed)"]) for cfg in sc.configs
                if any(r["config"] == cfg for r in rs) and all(r.get("rq") is None for r in rs if r["config"] == cfg)]
    missing = [(c, w) for c, w in missing if w]
    if missing:
        out.append("- ¹ n/a, no run-queue telemetry: " + "; ".join(f"{CONFIG_TITLES[c]}: {', '.join(w)}"
                                                                  for c, w in missing))
    return out


def scenario_notes(sc, records):
    """Lines under a scenario's table that do not fit its columns."""
    from .analysis import host_protect_ratios
    out = []
    if getattr(sc, "rq_latency", False):
        out += rq_notes(sc, records)
    if sc.multi_group:
        hp = host_protect_ratios(records, sc.name)
        if hp["per_rep"]:
            out.append("- antagonist CPU under bwgovd ÷ under static, per repetition: "
                       + ", ".join(f"rep {p['rep'] + 1}: {fmt_num(p['governed_cpu_s'])} / "
                                   f"{fmt_num(p['static_cpu_s'])} CPU-s = {fmt_num(p['ratio'], 3)}"
                                   for p in hp["per_rep"]) + f"; median {fmt_num(hp['median'], 3)}")
        for cfg in sc.configs:
            rs = [r for r in records if r["scenario"] == sc.name and r["config"] == cfg and r.get("ok")]
            for r in rs:
                parts = [f"{g['cgroup'].rsplit('-', 1)[1]} {fmt_num(g['hog_cpus'], 3)} CPUs in the hog window, "
                         f"{fmt_num(g['usage_cpu_s'], 2)} CPU-s over {fmt_num(r['wall_s'], 1)} s, contract "
                         f"{'held' if g['within_contract'] else 'BROKEN'} (worst window "
                         f"{fmt_num(g['window_excess_s'], 2)} of {fmt_num(g.get('window_allowance_s'), 3)} CPU-s)"
                         if g.get("contract_extra_s") is not None else
                         f"{g['cgroup'].rsplit('-', 1)[1]} {fmt_num(g['hog_cpus'], 3)} CPUs in the hog window"
                         for g in r.get("groups", [])]
                out.append(f"- {CONFIG_TITLES[cfg]} rep {r['rep'] + 1}: " + "; ".join(parts))
    if sc.name == "overload":
        for r in (r for r in records if r["scenario"] == sc.name and r.get("ok")):
            a = r.get("analysis") or {}
            back = (f"quota back at exactly the baseline at {fmt_num(a.get('back_s'), 2)} s with harness credit "
                    f"{fmt_num(a.get('credit_at_back_s'), 2)} CPU-s" if a.get("back_s") is not None else
                    "quota never above the baseline" if not a.get("quota_ever_above") else
                    "quota NEVER back at the baseline")
            out.append(f"- {CONFIG_TITLES[r['config']]} rep {r['rep'] + 1}: {back}; harness credit first below 0 at "
                       f"{fmt_num(a.get('overdrawn_s'), 2)} s; lowest {fmt_num(a.get('min_credit_s'), 2)} CPU-s "
                       f"(the contract allows −{fmt_num(a.get('debt_allowed_s'), 3)}: one burst, one quota for period "
                       f"alignment); quota above the baseline "
                       f"again afterwards: {fmt_num(a.get('rose_again'))}; highest quota "
                       f"{fmt_num(a.get('max_quota_cpus'), 2)} CPUs; contract {'held' if r.get('within_contract') else 'BROKEN'} "
                       f"over the run, worst window {fmt_num(r.get('window_excess_s'), 2)} of "
                       f"{fmt_num(r.get('window_allowance_s'), 3)} CPU-s")
    if sc.empty_credit:
        cr = [((r.get("governor") or {}).get("credit_at_adoption_usec"), r["config"]) for r in records
              if r["scenario"] == sc.name and r.get("ok") and r.get("governor")]
        if cr:
            out.append("- bwgovd's credit right after adoption (its metrics): "
                       + ", ".join(f"{c} {fmt_num(v / 1e6 if v is not None else None, 2)} s" for v, c in cr))
    return out


def rq_cell(a):
    """The run-queue wait p99 of one configuration: median [min–max] in ms,
    or n/a¹ (the footnote under the table says why)."""
    if a["rq_p99_ms"]:
        cell = fmt_summary(a["rq_p99_ms"])
        if a["rq_p99_ms"]["n"] < a["runs"]:
            cell += f" ({a['rq_p99_ms']['n']} of {a['runs']} runs)¹"
        return cell
    return "n/a¹"


def scenario_table(sc, agg, records=()):
    """One markdown table for one scenario."""
    name, unit = sc.metric[1], sc.metric[2]
    hdr = ["configuration", f"{name} ({unit})", "× static", "throttled periods %", "throttled ms/s",
           "PSI some / full ms/s", "CPU used / baseline×t", "within contract", "governor writes (identical)",
           "governor CPU % · peak RSS"]
    rq = getattr(sc, "rq_latency", False)
    if rq:
        hdr.insert(3, "run-queue wait p99 (ms)")
    if sc.better == "higher":
        hdr[1] += ", higher is better"
    lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for cfg in sc.configs:
        a = agg[sc.name].get(cfg)
        if not a or a["runs"] == 0:
            lines.append(f"| {CONFIG_TITLES[cfg]} | failed ({'; '.join(a['errors']) if a else '?'}) |"
                         + " |" * (len(hdr) - 2))
            continue
        gov = cfg.startswith("bwgovd") or cfg == "koordinator"  # has a governor process
        writes = (f"{fmt_summary(a['writes_during'], 0)} ({fmt_num(a['identical']['max'] if a['identical'] else None, 0)})"
                  if gov else "–")
        govcpu = (f"{fmt_num(a['gov_cpu_pct']['median'] if a['gov_cpu_pct'] else None, 2)} % · "
                  f"{fmt_num(a['gov_vmhwm_kib']['median'] / 1024 if a['gov_vmhwm_kib'] else None, 1)} MiB"
                  if gov else "–")
        psi = (f"{fmt_num(a['psi_some_ms_per_s']['median'] if a['psi_some_ms_per_s'] else None, 0)} / "
               f"{fmt_num(a['psi_full_ms_per_s']['median'] if a['psi_full_ms_per_s'] else None, 0)}")
        row = [CONFIG_TITLES[cfg], fmt_summary(a["metric"]), fmt_num(a["metric_ratio_to_static"], 2),
               fmt_summary(a["throttled_pct"], 1), fmt_summary(a["throttled_ms_per_s"], 1), psi,
               fmt_summary(a["usage_over_baseline"], 2), _contract_cell(a), writes, govcpu]
        if rq:
            row.insert(3, rq_cell(a))
        if a["failed"]:
            row[0] += f" ({a['failed']} failed)"
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def markdown(scenarios, agg, meta, targets_md, overhead_md, records=(), hackbench_md="", latency_md=""):
    out = [f"# bwgov benchmark ({'quick' if meta.get('quick') else 'full'})", "",
           f"{meta.get('date')} · kernel {meta.get('kernel')} · {meta.get('cpus')} CPUs · "
           f"cgroup layout {meta.get('layout')} · commit {meta.get('commit')} · "
           f"host load average at start {meta.get('loadavg_start')}", "",
           "Every configuration of a workload runs against the same baseline in the same run, "
           f"interleaved, {meta.get('reps_note')}. Cells are median [min–max] over the repetitions; "
           "“× static” is the ratio of medians to the static quota. CPU used is the cgroup's usage over "
           "the run divided by baseline × wall time; the contract is baseline × time (+ burst for "
           "static + burst, + CreditMax + burst for bwgovd); unlimited and the Koordinator-style "
           "comparator have none; “within contract” counts runs within it over the whole run, and "
           "names the worst window (any stretch of the 100 ms timeline; as samples do not fall on period "
           "boundaries, a window may exceed its share by one quota more, which even a static quota shows) "
           "when that differs. "
           "Governor writes are counted independently with strace; "
           "(identical) is the largest number of writes, in any repetition, of the value the file "
           "already held.", ""]
    for sc in scenarios:
        out += [f"## {sc.title}", "", scenario_table(sc, agg, records), ""]
        extras = []
        for cfg in sc.configs:
            a = agg[sc.name].get(cfg)
            if not a or not a["runs"]:
                continue
            parts = [f"{label} {fmt_summary(a['extra'].get(k))}" for k, label in sc.extra_metrics]
            if a.get("rq_p99_ms"):
                parts.append(f"run-queue wait p50 {fmt_summary(a['rq_p50_ms'])} ms, throttled share of the wait "
                             f"{fmt_summary(a['rq_throttled_share'], 2)}, waits {fmt_summary(a['rq_waits'], 0)}")
            parts.append(f"throttled periods in the second half {fmt_summary(a['second_half_throttled_pct'], 1)} %")
            parts.append(f"host PSI some {fmt_num(a['host_some_ms_per_s']['median'] if a['host_some_ms_per_s'] else None, 0)} ms/s")
            extras.append(f"- {CONFIG_TITLES[cfg]}: " + ", ".join(parts))
        out += extras + scenario_notes(sc, records) + [""]
    if overhead_md:
        out += ["## Overhead and scale (simulated kernel)", "", overhead_md, ""]
    if hackbench_md:
        out += ["## Run-queue telemetry overhead (hackbench, real kernel)", "", hackbench_md, ""]
    if latency_md:
        out += ["## Latency protection (issue 15 A): request server beside hackbench", "", latency_md, ""]
    if targets_md:
        out += ["## Targets (issue “Governor v2”)", "", "Each row from the medians of this run; "
                "“–” where the run has no figure for it.", "", targets_md, ""]
    return "\n".join(out)


# ---- plots -----------------------------------------------------------------

def gq(text):
    """Text for a single-quoted gnuplot string (no apostrophes)."""
    return str(text).replace("'", "’")


def _gnuplot(script, outdir, log):
    if not shutil.which("gnuplot"):
        log("gnuplot not found: no plots")
        return False
    p = subprocess.run(["gnuplot"], input=script, text=True, cwd=outdir, capture_output=True)
    if p.returncode != 0:
        log("gnuplot failed: " + p.stderr.strip()[-500:])
        return False
    return True


TERM = "set terminal pngcairo size 900,560 font 'DejaVu Sans,10' noenhanced\n"
COLORS = {"unlimited": "#777777", "static": "#d62728", "static+burst": "#ff7f0e", "koordinator": "#9467bd",
          "bwgovd-burst": "#17becf", "bwgovd-elastic": "#2ca02c", "bwgovd-elastic-nohost": "#8c564b"}


def plot_percentiles(sc, records, outdir, log):
    """Tail CDF: x = latency (or stretch), y = percentile on a 'nines' scale,
    median over repetitions of each percentile."""
    import math
    key = sc.metric[0].split(".")[0]
    pts = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)]
    datafile = f"pct-{sc.name}.dat"
    plots = []
    with open(os.path.join(outdir, datafile), "w") as f:
        idx = 0
        for cfg in sc.configs:
            rs = [r for r in records if r["scenario"] == sc.name and r["config"] == cfg and r.get("ok")]
            if not rs:
                continue
            f.write(f"# {cfg}\n")
            for k, p in pts:
                s = summary([((r.get("result") or {}).get(key) or {}).get(k) for r in rs])
                if s and s["median"] > 0:
                    f.write(f"{s['median']} {-math.log10(1 - p)} {s['min']} {s['max']}\n")
            f.write("\n\n")
            plots.append(f"'{datafile}' index {idx} using 1:2 with linespoints lw 2 pt 7 "
                         f"lc rgb '{COLORS[cfg]}' title '{CONFIG_TITLES[cfg]}'")
            idx += 1
    if not plots:
        return None
    png = f"percentiles-{sc.name}.png"
    unit = sc.metric[2]
    script = TERM + f"""set output '{png}'
set title '{gq(sc.title)}: {key} percentiles (median of repetitions)'
set logscale x
set xlabel '{key} ({unit})'
set ylabel 'percentile'
set ytics ('50%%' 0.301, '90%%' 1, '99%%' 2, '99.9%%' 3)
set yrange [0.2:3.2]
set grid
set key bottom right
plot {', '.join(plots)}
"""
    return png if _gnuplot(script, outdir, log) else None


def plot_throttled(scenarios, agg, outdir, log):
    """Throttled periods % per configuration, one cluster per scenario."""
    configs = []
    for sc in scenarios:
        for c in sc.configs:
            if c not in configs:
                configs.append(c)
    datafile = "throttled.dat"
    with open(os.path.join(outdir, datafile), "w") as f:
        f.write("# scenario " + " ".join(f"{c}_med {c}_min {c}_max" for c in configs) + "\n")
        for sc in scenarios:
            vals = []
            for c in configs:
                s = (agg[sc.name].get(c) or {}).get("throttled_pct")
                vals += [s["median"], s["min"], s["max"]] if s else ["NaN", "NaN", "NaN"]
            f.write(f'"{sc.name}" ' + " ".join(str(v) for v in vals) + "\n")
    cols = []
    for i, c in enumerate(configs):
        b = 2 + 3 * i
        cols.append(f"'{datafile}' using {b}:{b + 1}:{b + 2}{':xtic(1)' if i == 0 else ''} "
                    f"lc rgb '{COLORS[c]}' title '{gq(CONFIG_TITLES[c])}'")
    png = "throttled.png"
    script = TERM.replace("900,560", "1100,560") + f"""set output '{png}'
set title 'Throttled periods per configuration (median, bars: min–max)'
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set ylabel 'throttled periods %'
set yrange [0:*]
set grid ytics
set key top right
set xtics rotate by -20
plot {', '.join(cols)}
"""
    return png if _gnuplot(script, outdir, log) else None


def plot_quota(sc, records, outdir, log):
    """Quota (and burst) over time of the first repetition of each governed
    configuration, with the cgroup's CPU use, in CPUs."""
    datafile = f"quota-{sc.name}.dat"
    plots = []
    idx = 0
    y2 = False
    with open(os.path.join(outdir, datafile), "w") as f:
        for cfg in ("bwgovd-elastic", "bwgovd-elastic-nohost", "bwgovd-burst", "koordinator", "static"):
            rs = [r for r in records if r["scenario"] == sc.name and r["config"] == cfg and r.get("ok")
                  and r.get("timeline")]
            if not rs:
                continue
            r = min(rs, key=lambda x: x["rep"])
            f.write(f"# {cfg} rep {r['rep']}: t quota_cpus burst_cpus usage_cpus (over the last 0.5 s) "
                    f"harness_credit_cpu_s\n")
            tl = r["timeline"]
            credit = (r.get("analysis") or {}).get("credit_series") or []
            if len(credit) != len(tl):
                credit = []
            for i, row in enumerate(tl):
                t, q, p, b, u = row[0], row[1], row[2], row[3], row[4]
                j = i
                while j > 0 and t - tl[j - 1][0] <= 0.5:
                    j -= 1
                use = (u - tl[j][4]) / 1e6 / (t - tl[j][0]) if t > tl[j][0] else None
                f.write(f"{t} {q / p if q else 'NaN'} {b / p} {'NaN' if use is None else round(use, 4)} "
                        f"{credit[i][1] if credit else 'NaN'}\n")
            f.write("\n\n")
            col = COLORS[cfg]
            if credit:
                y2 = True
                plots.append(f"'{datafile}' index {idx} using 1:5 axes x1y2 with lines lw 1 dt 4 lc rgb '{col}' "
                             f"title '{CONFIG_TITLES[cfg]}: harness credit (CPU-s, right axis)'")
            if cfg != "static":
                plots.append(f"'{datafile}' index {idx} using 1:2 with steps lw 2 lc rgb '{col}' "
                             f"title '{CONFIG_TITLES[cfg]}: quota'")
                if cfg.startswith("bwgovd"):
                    plots.append(f"'{datafile}' index {idx} using 1:($2+$3) with steps lw 1 dt 2 lc rgb '{col}' "
                                 f"title '{CONFIG_TITLES[cfg]}: quota + burst'")
            plots.append(f"'{datafile}' index {idx} using 1:4 with lines lw 1 lc rgb '{col}' "
                         f"title '{CONFIG_TITLES[cfg]}: CPU used'")
            idx += 1
    if not plots:
        return None
    png = f"quota-{sc.name}.png"
    script = TERM + f"""set output '{png}'
set title '{gq(sc.title)}: bandwidth over time (first repetition)'
set xlabel 'seconds since the workload started'
set ylabel 'CPUs'
set yrange [0:*]
set grid
set key outside bottom center horizontal maxrows 3
{"set y2label 'harness credit (CPU-s)'" + chr(10) + "set y2tics" + chr(10) + "set ytics nomirror" if y2 else ""}
plot {sc.baseline_cpus} with lines lc rgb '#000000' dt 3 title 'baseline', {', '.join(plots)}
"""
    return png if _gnuplot(script, outdir, log) else None


def _rate(tl, i, col=4, span=0.5):
    """CPUs used over the last span seconds at row i of a timeline."""
    t = tl[i][0]
    j = i
    while j > 0 and t - tl[j - 1][0] <= span:
        j -= 1
    return (tl[i][col] - tl[j][col]) / 1e6 / (t - tl[j][0]) if t > tl[j][0] else None


def plot_host_protect(sc, records, outdir, log):
    """Host protection, first repetition of each configuration: the governed
    groups' quotas and CPU use, and the antagonist's CPU use, over time."""
    datafile = f"quota-{sc.name}.dat"
    plots = []
    idx = 0
    with open(os.path.join(outdir, datafile), "w") as f:
        for cfg in sc.configs:
            rs = [r for r in records if r["scenario"] == sc.name and r["config"] == cfg and r.get("ok")
                  and r.get("groups")]
            if not rs:
                continue
            r = min(rs, key=lambda x: x["rep"])
            tls = [g["timeline"] for g in r["groups"]] + [r["antagonist"]["timeline"]]
            n = min(len(t) for t in tls)
            f.write(f"# {cfg} rep {r['rep']}: t, then per governed group quota_cpus usage_cpus, "
                    f"then the antagonist's usage_cpus\n")
            for i in range(n):
                cols = []
                for tl in tls[:-1]:
                    q, p = tl[i][1], tl[i][2]
                    u = _rate(tl, i)
                    cols += [q / p if q else "NaN", "NaN" if u is None else round(u, 4)]
                u = _rate(tls[-1], i)
                cols.append("NaN" if u is None else round(u, 4))
                f.write(f"{tls[0][i][0]} " + " ".join(str(c) for c in cols) + "\n")
            f.write("\n\n")
            col = COLORS.get(cfg, "#000000")
            ng = len(tls) - 1
            for k in range(ng):
                dt = 1 + k
                plots.append(f"'{datafile}' index {idx} using 1:{2 + 2 * k} with steps lw 2 dt {dt} lc rgb '{col}' "
                             f"title '{CONFIG_TITLES[cfg]}: g{k} quota'")
                plots.append(f"'{datafile}' index {idx} using 1:{3 + 2 * k} with lines lw 1 dt {dt} lc rgb '{col}' "
                             f"title '{CONFIG_TITLES[cfg]}: g{k} CPU used'")
            plots.append(f"'{datafile}' index {idx} using 1:{2 + 2 * ng} with lines lw 3 lc rgb '{col}' "
                         f"title '{CONFIG_TITLES[cfg]}: antagonist CPU used'")
            idx += 1
    if not plots:
        return None
    png = f"quota-{sc.name}.png"
    script = TERM + f"""set output '{png}'
set title '{gq(sc.name)}: governed groups g0, g1 and the antagonist (first repetition)'
set xlabel 'seconds since the antagonist started'
set ylabel 'CPUs'
set yrange [0:*]
set grid
set key outside bottom center horizontal maxrows 4
plot {sc.baseline_cpus} with lines lc rgb '#000000' dt 3 title 'baseline of each group', {', '.join(plots)}
"""
    return png if _gnuplot(script, outdir, log) else None


def plots(scenarios, records, agg, outdir, log):
    out = []
    for sc in scenarios:
        if sc.metric[0].split(".")[0] in ("stretch", "latency_ms") and not sc.name.startswith("sysbench"):
            p = plot_percentiles(sc, records, outdir, log)
            if p:
                out.append(p)
    p = plot_throttled(scenarios, agg, outdir, log)
    if p:
        out.append(p)
    for sc in scenarios:
        if not sc.name.startswith("sysbench"):
            p = (plot_host_protect if sc.multi_group else plot_quota)(sc, records, outdir, log)
            if p:
                out.append(p)
    return out
