# SPDX-License-Identifier: LGPL-2.1-or-later
"""The load generators of the application benchmarks, outside the governed
cgroup (in the run's -gen cgroup, with the same weight and no quota) and
pinned with taskset to the last CPU: bwgov-httpload (open loop, latency from
the due time), pgbench (-R: open loop, latency from the scheduled start,
per-transaction log) and sysbench (--rate: open loop, latency from the
queueing of the event, histogram). Each reads the same seed in every
configuration of a repetition. Pure helpers (percentiles with failures counted
as the worst, pgbench's log, sysbench's report) are tested by selftest.py."""

import glob
import json
import math
import os
import re
import subprocess

PG_BIN = "/usr/lib/postgresql/15/bin"


def client_cpu():
    """The CPU the load generators are pinned to: the last one."""
    return (os.cpu_count() or 1) - 1


def pinned(argv):
    return ["taskset", "-c", str(client_cpu())] + argv


def percentile(sorted_vals, p):
    """Nearest-rank percentile (0 < p <= 1) of an ascending list, or None."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, int(math.ceil(p * len(sorted_vals))) - 1))
    return sorted_vals[k]


def latency_summary(lat_ms, failed=0):
    """p50/p90/p99/p99.9/max/mean of latencies in ms, with `failed` requests
    (timeouts, errors, pgbench's skipped transactions) counted as worse than
    every answer: a stall that makes requests fail cannot improve the tail."""
    vals = sorted(lat_ms) + [math.inf] * failed
    if not vals:
        return None
    out = {k: percentile(vals, p) for k, p in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))}
    out["max"] = vals[-1]
    out["mean"] = sum(lat_ms) / len(lat_ms) if lat_ms else None
    out["n"] = len(lat_ms)
    out["failed"] = failed
    return {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in out.items()}


def cdf_points(lat_ms, n_points=200):
    """A tail CDF to plot: [(latency ms, fraction at or below)], denser in the tail."""
    vals = sorted(lat_ms)
    if not vals:
        return []
    out = []
    for i in range(n_points + 1):
        q = 1 - 10 ** (-4 * i / n_points)           # 0 ... 0.9999
        out.append((percentile(vals, max(q, 1e-9)), q))
    out.append((vals[-1], 1.0))
    return out


# ---- bwgov-httpload -------------------------------------------------------------

def httpload_argv(binary, url, rate, duration, warmup, seed, log_path, connections=12, arrivals="fixed",
                  headers=(), timeout=30):
    argv = [binary, f"--rate={rate:g}", f"--duration={duration:g}", f"--warmup={warmup:g}",
            f"--connections={connections}", f"--arrivals={arrivals}", f"--seed={seed}",
            f"--timeout={timeout:g}", f"--drain={timeout:g}", f"--log={log_path}"]
    for h in headers:
        argv.append(f"--header={h}")
    return pinned(argv + [url])


def read_httpload_log(path, t_from=None, t_to=None):
    """(latencies ms of answered requests with a 2xx status, failures) from
    bwgov-httpload's --log, within [t_from, t_to) of the due times."""
    lat, failed = [], 0
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) != 4:
                    continue
                t, ms, status = float(parts[0]), float(parts[1]), int(parts[2])
                if (t_from is not None and t < t_from) or (t_to is not None and t >= t_to):
                    continue
                if 200 <= status < 300:
                    lat.append(ms)
                else:
                    failed += 1
    except OSError:
        pass
    return lat, failed


def httpload_result(out, log_path):
    """The client's JSON line and the latency summary from its log (failures
    counted as the worst)."""
    res = None
    for line in reversed((out or "").strip().splitlines()):
        if line.startswith("{"):
            res = json.loads(line)
            break
    if res is None:
        raise RuntimeError("bwgov-httpload printed no result")
    lat, failed = read_httpload_log(log_path)
    unfinished = (res.get("errors") or {}).get("unfinished", 0)
    res["latency"] = latency_summary(lat, failed + unfinished)
    res["errors_total"] = failed + unfinished
    return res, lat


# ---- pgbench -------------------------------------------------------------------

def pgbench_argv(port, rate, duration, seed, log_prefix, select_only=False, clients=8, latency_limit_ms=1000,
                 script=None):
    argv = [os.path.join(PG_BIN, "pgbench"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
            "-c", str(clients), "-j", "1", "-R", f"{rate:g}", "-T", str(int(round(duration))),
            f"--latency-limit={latency_limit_ms:g}", "-l", f"--log-prefix={log_prefix}", "-M", "prepared",
            "-n", f"--random-seed={seed}"]
    if select_only:
        argv.append("-S")
    if script:
        argv += ["-f", script]
    return pinned(argv + ["bench"])


def parse_pgbench_log_lines(lines):
    """pgbench's per-transaction log with --rate: "client txn time script
    epoch_s epoch_us [lag]", where time is the latency in µs from the
    scheduled start (so it includes the schedule lag), or "skipped" for a
    transaction that --latency-limit skipped because it was already too late
    to start. Returns (latencies ms, skipped, (first, last) epoch seconds)."""
    lat, skipped, t_min, t_max = [], 0, None, None
    for line in lines:
        parts = line.split()
        if len(parts) < 6:
            continue
        try:
            t = int(parts[4]) + int(parts[5]) / 1e6
            ms = None if parts[2] == "skipped" else int(parts[2]) / 1000.0
        except ValueError:
            continue
        t_min = t if t_min is None else min(t_min, t)
        t_max = t if t_max is None else max(t_max, t)
        if ms is None:
            skipped += 1
        else:
            lat.append(ms)
    return lat, skipped, (t_min, t_max)


def pgbench_summary_field(out, key):
    """A number from pgbench's summary ("number of transactions above the 1000.0
    ms latency limit: 12/3000 (0.400 %)" → 12)."""
    m = re.search(re.escape(key) + r"[^:]*:\s*([0-9.]+)", out or "")
    return float(m.group(1)) if m else None


def pgbench_result(out, log_prefix):
    lat, skipped = [], 0
    for path in glob.glob(log_prefix + ".*"):
        with open(path) as f:
            l1, s1, _ = parse_pgbench_log_lines(f)
        lat += l1
        skipped += s1
    res = {"program": "pgbench", "completed": len(lat), "skipped": skipped,
           "late": pgbench_summary_field(out, "number of transactions above the"),
           "tps": pgbench_summary_field(out, "tps = "),
           "failed_txns": pgbench_summary_field(out, "number of failed transactions")}
    res["latency"] = latency_summary(lat, skipped)
    res["errors_total"] = skipped + int(res["failed_txns"] or 0)
    return res, lat


# ---- sysbench (MariaDB) ----------------------------------------------------------

def sysbench_argv(test, db_args, rate, duration, seed, threads=8, extra=()):
    """sysbench's OLTP scripts with --rate: open loop, each transaction's
    latency counted from the moment its event was queued, so a stall shows
    in it (sysbench adds the queue time); the histogram gives every latency
    to a bucket of about 2 %. sysbench takes a whole rate per second."""
    return pinned(["sysbench", test] + list(db_args) + list(extra) +
                  [f"--threads={threads}", f"--rate={max(1, round(rate))}", f"--time={int(round(duration))}",
                   f"--rand-seed={seed}", "--percentile=99", "--histogram=on", "run"])


def parse_sysbench(out):
    """sysbench's report: (transactions, ignored errors, latencies ms from the
    histogram, one per transaction at its bucket's value)."""
    m = re.search(r"^\s*transactions:\s+(\d+)", out or "", re.M)
    n = int(m.group(1)) if m else None
    m = re.search(r"^\s*ignored errors:\s+(\d+)", out or "", re.M)
    errors = int(m.group(1)) if m else 0
    lat, in_hist = [], False
    for line in (out or "").splitlines():
        if line.startswith("Latency histogram"):
            in_hist = True
        elif in_hist and "|" in line:
            value, bar = line.split("|", 1)
            try:
                lat += [float(value)] * int(bar.split()[-1])
            except (ValueError, IndexError):
                pass
        elif in_hist and lat and not line.strip():
            break
    return n, errors, lat


def sysbench_result(out):
    n, errors, lat = parse_sysbench(out)
    if n is None:
        raise RuntimeError("sysbench printed no transaction count")
    res = {"program": "sysbench", "completed": n, "ignored_errors": errors, "histogram_n": len(lat)}
    res["latency"] = latency_summary(lat)
    res["errors_total"] = errors
    return res, lat


def run_client(cg, argv, timeout, logf):
    """Runs a client in cg (the -gen cgroup) to its end; (stdout, returncode)."""
    p = cg.spawn(argv, stdout=subprocess.PIPE, stderr=logf, text=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        raise RuntimeError(f"{os.path.basename(argv[3])} did not finish within {timeout:g} s")
    return out, p.returncode
