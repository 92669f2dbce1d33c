# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgovd's run-queue telemetry as the benchmarks read it (issue 14):
`bwgovctl latency UNIT --json` (GetLatency), the wait percentiles of a
window as the difference of two `total` histograms, the BPF programs a
daemon holds (/proc/PID/fdinfo) and their in-kernel run time (`bpftool prog
show --json` with kernel.bpf_stats_enabled=1)."""

import json
import os
import subprocess
import time

PROG_PREFIX = "bw_sched_"
BPF_STATS = "/proc/sys/kernel/bpf_stats_enabled"


def ctl(bwgovctl, socket, *args, timeout=30):
    return subprocess.run([bwgovctl, *args, "--socket", socket], capture_output=True, text=True, timeout=timeout)


def latency(bwgovctl, socket, unit):
    """GetLatency's reply for one unit (a dict), or raises RuntimeError."""
    p = ctl(bwgovctl, socket, "latency", unit, "--json")
    if p.returncode != 0:
        raise RuntimeError(f"bwgovctl latency {unit}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        raise RuntimeError(f"bwgovctl latency {unit}: not JSON ({e})") from None


def status(bwgovctl, socket):
    """GetStatus's reply (a dict), or raises RuntimeError."""
    p = ctl(bwgovctl, socket, "status", "--json")
    if p.returncode != 0:
        raise RuntimeError(f"bwgovctl status: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout)


def wait_counting(bwgovctl, socket, unit, timeout=10.0, alive=None):
    """Polls GetLatency until the unit is counted (available) or the reply
    says why it cannot be (a reason other than the cgroup not being there
    yet); returns the last reply, or None when the daemon never answered.
    alive: a callable, False once the daemon has exited."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = latency(bwgovctl, socket, unit)
            if last.get("available") or "cgroup" not in (last.get("reason") or ""):
                return last
        except (RuntimeError, ValueError, subprocess.TimeoutExpired):
            pass
        if alive is not None and not alive():
            break
        time.sleep(0.1)
    return last


def slot_bounds(buckets):
    return [(b["lower_usec"], b["upper_usec"]) for b in buckets]


def quantile_usec(counts, bounds, q, max_usec=None):
    """bw_rq_quantile_usec() of src/lib/telemetry/rqstat.c over a histogram: the upper
    end of the first bucket by which at least q of the waits are in, never
    above max_usec (the longest wait, when known); None without a wait."""
    total = sum(counts)
    if total == 0:
        return None
    q10k = round(q * 10000)                 # as the daemon: in 1/10000, integers
    cum = 0
    for c, (lo, hi) in zip(counts, bounds):
        cum += c
        if cum * 10000 < total * q10k:
            continue
        if hi is None:                      # the last bucket: open above
            return max_usec if max_usec is not None else lo
        return min(hi, max_usec) if max_usec else hi
    return None


def window(before, after):
    """The waits between two GetLatency replies of the same unit (`total`
    after minus `total` before): counts, sums and the percentiles of the
    difference of the histograms, as the daemon computes them. The longest
    wait caps the percentiles only when it grew in the window (then it is
    the window's own). None when either reply has no telemetry."""
    if not before or not after or not before.get("available") or not after.get("available"):
        return None
    t0, t1 = before.get("total") or {}, after.get("total") or {}
    b0, b1 = t0.get("buckets") or [], t1.get("buckets") or []
    if not b1:
        return None
    if len(b0) != len(b1):              # the counters started again (maps grown): after alone
        b0, t0 = [], {}
    counts = [b["count"] - (b0[i]["count"] if b0 else 0) for i, b in enumerate(b1)]
    if any(c < 0 for c in counts):      # counters restarted in between
        counts, t0 = [b["count"] for b in b1], {}
    bounds = slot_bounds(b1)
    mx = t1.get("wait_max_usec")
    cap = mx if mx is not None and mx > (t0.get("wait_max_usec") or 0) else None

    def d(k):
        return (t1.get(k) or 0) - (t0.get(k) or 0)

    wait_usec = d("wait_usec")
    out = {"waits": sum(counts), "wait_usec": wait_usec, "throttled_wait_usec": d("throttled_wait_usec"),
           "throttled_share": d("throttled_wait_usec") / wait_usec if wait_usec > 0 else 0.0,
           "wakeups": d("wakeups"), "preemptions": d("preemptions"), "throttles": d("throttles"),
           "max_usec": cap, "total_p99_usec": t1.get("p99_usec"), "total_waits": t1.get("waits")}
    for k, q in (("p50_usec", 0.5), ("p90_usec", 0.9), ("p99_usec", 0.99), ("p999_usec", 0.999)):
        out[k] = quantile_usec(counts, bounds, q, cap)
    out["p99_ms"] = out["p99_usec"] / 1000 if out["p99_usec"] is not None else None
    return out


def owned_prog_ids(pid):
    """IDs of the BPF programs process pid holds open (its fds' fdinfo)."""
    ids = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return ids
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf-prog":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except (OSError, ValueError, IndexError):
            continue
    return ids


def bpf_progs(prefix=PROG_PREFIX):
    """{id: {"name", "run_time_ns", "run_cnt"}} of the loaded programs whose
    name starts with prefix (run_* are 0 unless kernel.bpf_stats_enabled)."""
    p = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError(f"bpftool prog show: {p.stderr.strip()[-300:]}")
    out = {}
    for x in json.loads(p.stdout or "[]"):
        if str(x.get("name", "")).startswith(prefix):
            out[x["id"]] = {"name": x["name"], "run_time_ns": x.get("run_time_ns", 0), "run_cnt": x.get("run_cnt", 0)}
    return out


def prog_delta(p0, p1, ids):
    """Per program name: run_cnt and run_time_ns grown from p0 to p1 over
    the programs ids (present in both)."""
    out = {}
    for i in ids:
        if i in p0 and i in p1:
            n = p1[i]["name"]
            c = out.setdefault(n, {"run_cnt": 0, "run_time_ns": 0})
            c["run_cnt"] += p1[i]["run_cnt"] - p0[i]["run_cnt"]
            c["run_time_ns"] += p1[i]["run_time_ns"] - p0[i]["run_time_ns"]
    return out


def read_bpf_stats():
    with open(BPF_STATS) as f:
        return f.read().strip()


def write_bpf_stats(value):
    with open(BPF_STATS, "w") as f:
        f.write(str(value))
