#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgovd at scale on this host's real cgroups (issue 16): what the
simulated kernel of overhead.py cannot show (kernfs reads, PSI triggers,
the BPF telemetry, cgroups that come and go).

idle: --count N cgroups bwgov-bench-rcg-<i>, spread under --parents
unlimited parents bwgov-bench-rcg-p<j> (as slices hold services and
containers; 0: all under the root), each with a 50 % quota and a
drop-in (Mode=elastic), governed by one bwgovd (Interval=1s): adoption time,
CPU % of one core over --window once adopted, VmRSS/VmHWM and file
descriptors (under the shipped unit's watchdog, --watchdog-sec), then SIGTERM: time to exit and every cgroup back at exactly
the quota, period and burst it had before. `bwgovctl status` runs every
50 ms throughout (paused while the CPU is measured): its largest latency
while adopting, running and stopping.

churn: a pool of --pool configured names whose cgroups are created and
removed at --rate per second for --duration seconds (each lives 2 to 8 s)
while bwgovd governs them. Sampled every second: RSS and open fds. At the
end: growth (the last third against the second, after warm-up), how long
each new cgroup waited until bwgovd said "governing cgroup" for it (its
stderr at --log-level=info, timestamped as it is read), whether any fd of
the daemon still points into a removed cgroup, and whether the saved state
(state.json with state.journal applied) still has an entry for a cgroup
that no longer exists.

Only cgroups named bwgov-bench-rcg-* are created, and all are removed at
the end (also on SIGINT/SIGTERM). Needs root and a cpu controller;
exits 77 (skip) with the reason otherwise.

  realcg.py --bwgovd BUILD/src/daemon/bwgovd [--count 1000] [--parents 10] [--window 30]
            [--churn] [--rate 50] [--duration 300] [--quick] [--out FILE.json]
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integration"))
from statefile import saved_units  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import stop as stop_daemon  # noqa: E402  (SIGTERM, then SIGKILL; seconds or None)
from overhead import Probe, default_bwgovctl  # noqa: E402

PREFIX = "bwgov-bench-rcg-"
SKIP = 77
CLK_TCK = os.sysconf("SC_CLK_TCK")



def shipped_watchdog_sec():
    """WatchdogSec= of systemd/bwgovd.service.in, in seconds (30 when it cannot be read)."""
    unit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "systemd", "bwgovd.service.in")
    try:
        with open(unit) as f:
            for line in f:
                if line.startswith("WatchdogSec=") and line.strip().endswith("s"):
                    return float(line.strip()[len("WatchdogSec="):-1])
    except (OSError, ValueError):
        pass
    return 30.0


def log(msg):
    print(f"[realcg] {msg}", file=sys.stderr, flush=True)


class Tree:
    """Where a governed cgroup lives on this host: v2 (cpu.max in the v2
    directory) or hybrid (v1 cpu for the bandwidth, a v2 twin of the same
    name for usage and pressure)."""

    def __init__(self):
        if os.path.exists("/sys/fs/cgroup/cgroup.controllers") and \
                "cpu" in open("/sys/fs/cgroup/cgroup.controllers").read().split():
            self.kind, self.dirs = "v2", ["/sys/fs/cgroup"]
        elif os.path.exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
            self.kind = "hybrid"
            self.dirs = ["/sys/fs/cgroup/cpu"] + (["/sys/fs/cgroup/unified"]
                                                  if os.path.isdir("/sys/fs/cgroup/unified") else [])
        else:
            self.kind, self.dirs = None, []
        self.made = set()

    def files(self):
        if self.kind == "v2":
            return {"cpu.max": "50000 100000", "cpu.max.burst": "0"}
        return {"cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "100000", "cpu.cfs_burst_us": "0"}

    def create(self, name):
        for d in self.dirs:
            os.mkdir(os.path.join(d, name))
        self.made.add(name)
        bw = self.dirs[0]
        for f, v in self.files().items():
            if os.path.exists(os.path.join(bw, name, f)):
                with open(os.path.join(bw, name, f), "w") as fh:
                    fh.write(v)

    def create_unlimited(self, name):
        """A cgroup without a quota of its own (unlimited, as a slice is)."""
        self.create(name)
        bw = os.path.join(self.dirs[0], name, "cpu.max" if self.kind == "v2" else "cpu.cfs_quota_us")
        with open(bw, "w") as f:
            f.write("max" if self.kind == "v2" else "-1")

    def remove(self, name):
        for d in reversed(self.dirs):
            try:
                os.rmdir(os.path.join(d, name))
            except FileNotFoundError:
                pass
        self.made.discard(name)

    def values(self, name):
        out = {}
        for f in self.files():
            try:
                with open(os.path.join(self.dirs[0], name, f)) as fh:
                    out[f] = fh.read().strip()
            except OSError:
                pass
        return out

    def cleanup(self):
        for name in sorted(self.made, key=lambda n: -n.count("/")):     # children first
            try:
                self.remove(name)
            except OSError as e:
                log(f"cannot remove {name}: {e}")


def write_conf(base, names, interval="1s", paths=None, governor=()):
    conf = os.path.join(base, "conf")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "bwgov.conf"), "w") as f:
        f.write(f"[Governor]\nInterval={interval}\n" + "".join(f"{g}\n" for g in governor))
    for i, n in enumerate(names):
        d = os.path.join(conf, n + ".d")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "10-bench.conf"), "w") as f:
            f.write(f"[Bandwidth]\nCgroup={paths[i] if paths else n}\nMode=elastic\n")
    return conf


RUNTIME_DIRS = []     # made under /run, removed at the end


TMPFS_MAGIC = 0x01021994


def is_tmpfs(path):
    try:
        out = subprocess.run(["stat", "-f", "-c", "%t", path], capture_output=True, text=True, check=True)
        return int(out.stdout.strip(), 16) == TMPFS_MAGIC
    except (OSError, ValueError, subprocess.CalledProcessError):
        return False


def runtime_dir(base):
    """BASE/run, where bwgovd writes metrics.prom and its socket: on a tmpfs
    (/run, else /dev/shm) when there is one, as bwgovd.service's
    RuntimeDirectory= is on /run; a disk file system adds its writeback to
    every metrics write."""
    rt = os.path.join(base, "run")
    if os.path.lexists(rt):
        return rt
    for d in ("/run", "/dev/shm"):
        if is_tmpfs(d) and os.access(d, os.W_OK):
            os.makedirs(base, exist_ok=True)
            RUNTIME_DIRS.append(tempfile.mkdtemp(prefix="bwgov-bench-rcg-run-", dir=d))
            os.symlink(RUNTIME_DIRS[-1], rt)
            break
    return rt


class Daemon:
    def __init__(self, bwgovd, base, env=None):
        self.base = base
        runtime_dir(base)
        self.lines = []                 # (monotonic, line)
        self.proc = subprocess.Popen(
            [bwgovd, "--config-dir", os.path.join(base, "conf"), "--state-dir", os.path.join(base, "state"),
             "--runtime-dir", os.path.join(base, "run"), "--log-level", "info"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace",
            env=dict(os.environ, **(env or {})))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    @property
    def pid(self):
        return self.proc.pid

    def cpu_s(self):
        """CPU time of the daemon's threads: schedstat's nanoseconds where
        the kernel has them (utime and stime tick at 1/CLK_TCK, 10 ms: a
        third of 0.1 % over 30 s)."""
        try:
            with open(f"/proc/{self.pid}/schedstat") as f:
                return int(f.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            pass
        with open(f"/proc/{self.pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / CLK_TCK

    def status(self, key):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return None

    def fd_targets(self):
        out = []
        d = f"/proc/{self.pid}/fd"
        for fd in os.listdir(d):
            try:
                out.append(os.readlink(os.path.join(d, fd)))
            except OSError:
                pass
        return out

    def metric(self, name):
        try:
            with open(os.path.join(self.base, "run", "metrics.prom")) as f:
                for line in f:
                    if line.startswith(name + " "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return None

    def unit_ticks(self):
        """({unit: bwgov_unit_ticks_total}, mtime) of the metrics file as it is now."""
        path, out = os.path.join(self.base, "run", "metrics.prom"), {}
        try:
            mt = os.stat(path).st_mtime
            with open(path) as f:
                for line in f:
                    if line.startswith("bwgov_unit_ticks_total{"):
                        out[line.split('unit="', 1)[1].split('"', 1)[0]] = int(line.split()[1])
        except (OSError, ValueError, IndexError):
            return {}, None
        return out, mt

    def next_metrics(self, after, timeout=30):
        """The first version of the metrics file written after mtime after."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ticks, mt = self.unit_ticks()
            if mt is not None and (after is None or mt > after) and ticks:
                return ticks, mt
            time.sleep(0.1)
        return {}, None

    def count(self, needle):
        return sum(1 for _, line in list(self.lines) if needle in line)

    def stop(self, timeout=60):
        took = stop_daemon(self.proc, timeout)
        self.reader.join(timeout=5)
        return took


def start_bursty(a, tree, paths):
    """One bwgov-bursty in each of paths: a burst of --bursty-ms of CPU
    about once a second (the process in the v1 and the v2 directory of a
    hybrid host, as a service's is)."""
    procs = []
    ms = a.bursty_ms
    for n in paths:
        procfiles = [os.path.join(d, n, "cgroup.procs") for d in tree.dirs]

        def enter(files=procfiles):
            for f in files:
                with open(f, "w") as fh:
                    fh.write("0")
        procs.append(subprocess.Popen([a.bursty_bin, "--threads", "1", "--mean-demand", f"{ms / 1000:.4f}",
                                       "--burst-ms", str(ms), "--duration", "86400",
                                       "--seed", str(len(procs) + 1)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=enter))
    return procs


def stop_procs(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()


def idle(a, tree, base, count):
    names = [f"{PREFIX}{i}" for i in range(count)]
    parents = [f"{PREFIX}p{j}" for j in range(a.parents)]
    paths = [f"{parents[i % a.parents]}/{n}" if parents else n for i, n in enumerate(names)]
    # Every 1/share-th cgroup runs a bursty process (spread over the parents).
    every = round(100 / a.bursty) if a.bursty > 0 else 0
    bursty = [i for i in range(count) if every and i % every == every // 2]
    log(f"creating {count} cgroups ({tree.kind}) under {a.parents or 'no'} parents"
        + (f", {len(bursty)} of them bursty" if bursty else ""))
    t = time.monotonic()
    for p in parents:
        tree.create_unlimited(p)
    for n in paths:
        tree.create(n)
    created_s = time.monotonic() - t
    before = {n: tree.values(n) for n in paths}
    write_conf(base, names, paths=paths, governor=a.governor)
    os.makedirs(base, exist_ok=True)
    probe = Probe(base, a.bwgovctl, os.path.join(base, "run", "io.bwgov.Governor"),
                  watchdog_usec=int(a.watchdog_sec * 1e6))
    probe.start()
    d = Daemon(a.bwgovd, base, env=probe.env())
    t0 = time.monotonic()
    res = {"cgroups": count, "parents": a.parents, "layout": tree.kind, "watchdog_s": a.watchdog_sec,
           "create_s": round(created_s, 2),
           "bursty": len(bursty), "bursty_ms_per_s": a.bursty_ms if bursty else None}
    procs = []
    try:
        # Adopted: raised to its headroom, or (ParkAtBaseline=yes) left
        # at its baseline until its first run.
        def adopted():
            return d.count("resting-headroom") + d.count("resting at its baseline until its first run")
        while time.monotonic() - t0 < a.adopt_timeout and d.proc.poll() is None:
            if d.count(": governing cgroup ") >= count and adopted() >= count:
                break
            time.sleep(0.05)
        res["adopt_s"] = round(time.monotonic() - t0, 2)
        res["adopted"] = adopted()
        res["during_adoption"] = probe.summary(0, time.monotonic() - probe.t0)
        procs = start_bursty(a, tree, [paths[i] for i in bursty])
        time.sleep(3)
        # No status calls while the CPU is measured: the window measures
        # the daemon, not its answers.
        probe.paused = True
        time.sleep(0.3)
        m0, mt0 = d.next_metrics(None)
        c0, w0 = d.cpu_s(), time.monotonic()
        active = ActiveIntervals(tree, [paths[i] for i in bursty], a.interval_s, a.window)
        c1, w1 = d.cpu_s(), time.monotonic()
        m1, mt1 = d.unit_ticks()
        d.gated = d.metric("bwgov_gated_samples_total")
        res.update({"window_s": round(w1 - w0, 1), "cpu_pct_one_core": round(100 * (c1 - c0) / (w1 - w0), 3),
                    "vmrss_kib": d.status("VmRSS"), "vmhwm_kib": d.status("VmHWM"),
                    "rss_anon_kib": d.status("RssAnon"), "fds": len(d.fd_targets())})
        res.update(tick_rates(a, names, bursty, m0, mt0, m1, mt1,
                              {names[i]: active.bins.get(paths[i], 0) for i in bursty}, w1 - w0))
        # Status latency while it runs (the bursty ones still bursting).
        probe.paused = False
        ts = time.monotonic() - probe.t0
        time.sleep(a.status_window)
        res["while_running"] = probe.summary(ts, time.monotonic() - probe.t0)
        if a.reload:
            res.update(reload_once(d, a.adopt_timeout))
            res["during_reload"] = probe.summary(ts + a.status_window, time.monotonic() - probe.t0)
        stop_procs(procs)
        procs = []
        ts = time.monotonic() - probe.t0
        res["stop_s"] = d.stop()
        # A call the exit cut short finds no daemon (the socket goes
        # first): status_not_running, not status_failed.
        res["during_stop"] = probe.summary(ts, time.monotonic() - probe.t0)
    finally:
        stop_procs(procs)
        probe.stop()
        if d.proc.poll() is None:
            d.stop()
    res["gated_samples"] = d.gated
    res["log_lines_in_window"] = sum(1 for t, _ in list(d.lines) if w0 <= t <= w1)
    if a.log:
        with open(a.log if count == a.counts[0] else f"{a.log}.{count}", "w") as f:
            f.writelines(f"{t - t0:.3f} {line}\n" for t, line in list(d.lines))
    bad = [n for n in paths if tree.values(n) != before[n]]
    res["not_restored"] = len(bad)
    res["not_restored_examples"] = bad[:3]
    log(json.dumps(res))
    for n in paths + parents:
        tree.remove(n)
    return res


def policy(pid):
    """A thread's scheduling policy from /proc (6: SCHED_DEADLINE), None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[38])
    except (OSError, ValueError, IndexError):
        return None


def reload_once(d, timeout):
    """SIGHUP (`systemctl reload`): seconds until "Configuration reloaded",
    bwgovd's scheduling policies seen meanwhile (6: its SCHED_DEADLINE
    budget, which it gives back for the reload), and the seconds after it
    until it holds the budget again (None: not within 10 s)."""
    n0 = d.count("Configuration reloaded")
    policies = set()
    res = {"reload_s": None, "reload_policies": None, "reload_budget_again_s": None}
    t = time.monotonic()
    os.kill(d.pid, signal.SIGHUP)
    while time.monotonic() - t < timeout and d.proc.poll() is None:
        if d.count("Configuration reloaded") > n0:
            res["reload_s"] = round(time.monotonic() - t, 2)
            break
        p = policy(d.pid)
        if p is not None:
            policies.add(p)
        time.sleep(0.02)
    res["reload_policies"] = sorted(policies)
    t = time.monotonic()
    while res["reload_s"] is not None and time.monotonic() - t < 10 and d.proc.poll() is None:
        if policy(d.pid) == 6:
            res["reload_budget_again_s"] = round(time.monotonic() - t, 2)
            break
        time.sleep(0.02)
    return res


class ActiveIntervals:
    """Sleeps for window seconds, reading each given cgroup's usage at every
    Interval= boundary: bins[name] is how many Interval= windows it ran in
    (its usage grew). A bursty unit's gaps are random: an Interval= without
    a burst needs no sample."""

    def __init__(self, tree, names, interval_s, window):
        self.bins = {n: 0 for n in names}
        last = {n: self.usage(tree, n) for n in names}
        end = time.monotonic() + window
        t = time.monotonic()
        while True:
            t += interval_s
            if t > end:
                break
            time.sleep(max(0.0, t - time.monotonic()))
            for n in names:
                u = self.usage(tree, n)
                if u is not None and last[n] is not None and u > last[n]:
                    self.bins[n] += 1
                last[n] = u
        time.sleep(max(0.0, end - time.monotonic()))

    @staticmethod
    def usage(tree, name):
        """The cgroup's CPU usage in µs (cgroup2's cpu.stat: the twin on a
        hybrid host), None when it cannot be read."""
        try:
            with open(os.path.join(tree.dirs[-1], name, "cpu.stat")) as f:
                for line in f:
                    if line.startswith("usage_usec "):
                        return int(line.split()[1])
        except OSError:
            pass
        return None


def tick_rates(a, names, bursty, m0, mt0, m1, mt1, active_bins, active_s):
    """Samples per second of the idle and of the bursty units between two
    versions of the metrics file, and the bursty units sampled less often
    than once per Interval= they ran in (the law's horizon is never longer):
    samples over the active windows, scaled to the metrics' span."""
    if mt0 is None or mt1 is None or mt1 <= mt0:
        return {"tick_rates": None}
    dt = mt1 - mt0
    busy = {names[i] for i in bursty}
    rate = {n: (m1.get(n, 0) - m0.get(n, 0)) / dt for n in names}
    quiet = [rate[n] for n in names if n not in busy]
    active = [rate[n] for n in busy]
    per_active = {n: rate[n] * active_s / active_bins[n] for n in busy if active_bins.get(n)}
    slow = sorted(n for n in per_active if per_active[n] < 0.9)
    return {"tick_rates": {"over_s": round(dt, 1),
                           "idle_per_unit_per_s": round(sum(quiet) / len(quiet), 3) if quiet else None,
                           "bursty_per_unit_per_s": round(sum(active) / len(active), 3) if active else None,
                           "bursty_min_per_s": round(min(active), 3) if active else None,
                           "bursty_active_share": round(sum(active_bins.values()) * a.interval_s /
                                                        (active_s * len(busy)), 3) if busy else None,
                           "bursty_min_per_active_interval": round(min(per_active.values()), 3)
                           if per_active else None},
            "bursty_below_interval": len(slow), "bursty_below_interval_examples": slow[:3]}


def churn(a, tree, base):
    pool = [f"{PREFIX}c{i}" for i in range(a.pool)]
    write_conf(base, pool, governor=a.governor)
    d = Daemon(a.bwgovd, base)
    rnd = random.Random(1)
    alive = {}                          # name -> (created monotonic, dies at)
    created = []                        # (name, created monotonic)
    removed = []                        # (name, removed monotonic)
    samples = []                        # (t, rss_kib, fds)
    t0 = time.monotonic()
    next_create = t0
    next_sample = t0
    free = list(pool)
    rnd.shuffle(free)
    log(f"churn: {a.rate}/s for {a.duration:.0f} s over a pool of {a.pool} names")
    while time.monotonic() - t0 < a.duration and d.proc.poll() is None:
        now = time.monotonic()
        for n, (_, dies) in list(alive.items()):
            if dies <= now:
                tree.remove(n)
                del alive[n]
                removed.append((n, time.monotonic()))
                free.append(n)
        while next_create <= now and free:
            n = free.pop(0)
            tree.create(n)
            t = time.monotonic()
            alive[n] = (t, t + rnd.uniform(2, 8))
            created.append((n, t))
            next_create += 1.0 / a.rate
        if now >= next_sample:
            samples.append((now - t0, d.status("VmRSS"), len(d.fd_targets())))
            next_sample += 1.0
        time.sleep(0.005)
    time.sleep(2.5)                     # > one Interval= after the last removal
    res = {"rate": a.rate, "duration_s": a.duration, "pool": a.pool, "created": len(created),
           "removed": len(removed), "alive_at_end": len(alive)}
    # Forgotten: no fd into a removed cgroup; no state entry for one.
    gone = {n for n, _ in removed} - set(alive)
    targets = d.fd_targets()
    res["fds_into_removed"] = sum(1 for t in targets if any(f"/{n}/" in t + "/" for n in gone))
    try:
        st = saved_units(os.path.join(base, "state"))
        res["state_entries_of_removed"] = sum(1 for n in gone if n in st)
        res["state_entries"] = len(st)
    except (OSError, ValueError) as e:
        res["state_error"] = str(e)
    # Governed within one Interval=: the first "governing cgroup" line
    # for a name after each creation.
    delays = []
    missed = 0
    by_name = {}
    for t, line in list(d.lines):
        if ": governing cgroup " in line:
            name = line.split(": governing cgroup ", 1)[0].split()[-1]
            by_name.setdefault(name, []).append(t)
    for n, tc in created:
        ts = [t for t in by_name.get(n, []) if t >= tc - 0.01]
        died = next((tr for nr, tr in removed if nr == n and tr >= tc), None)
        if ts and (died is None or ts[0] <= died):
            delays.append(ts[0] - tc)
        elif died is None or died - tc > 1.2:
            missed += 1
    delays.sort()
    res["governed"] = len(delays)
    res["not_governed_while_alive_over_1_2s"] = missed
    if delays:
        res["governed_delay_s"] = {"p50": round(delays[len(delays) // 2], 3),
                                   "p99": round(delays[int(len(delays) * 0.99) - 1], 3),
                                   "max": round(delays[-1], 3)}
    # Growth: the last third against the second (the first is warm-up).
    k = len(samples) // 3
    if k >= 2:
        mid, last = samples[k:2 * k], samples[2 * k:]
        res["rss_kib_mid_last"] = [max(s[1] for s in mid), max(s[1] for s in last)]
        res["fds_mid_last"] = [max(s[2] for s in mid), max(s[2] for s in last)]
    res["samples"] = samples
    res["stop_s"] = d.stop()
    for n in list(alive):
        tree.remove(n)
    log(json.dumps({k: v for k, v in res.items() if k != "samples"}))
    return res


def ms(summary, key="status_max_ms"):
    return (summary or {}).get(key)


def markdown(results):
    out = []
    rows = results.get("idle") or []
    if rows:
        out += ["| real cgroups | bursty | layout | adoption (s) | CPU % of one core | RSS · peak · anon (MiB) | fds | "
                "samples/s per unit idle · bursty (min) | bursty active share · min samples per active Interval= · below 0.9 | "
                "status max ms adopting · running · stopping | "
                "SIGTERM to exit (s) | restored exactly |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for i in rows:
            tr = i.get("tick_rates") or {}
            out.append(
                f"| {i['cgroups']} | {i.get('bursty', 0)} | {i['layout']} | {i['adopt_s']} | "
                f"{i['cpu_pct_one_core']:.2f} | "
                f"{i['vmrss_kib'] / 1024:.1f} · {i['vmhwm_kib'] / 1024:.1f} · {(i.get('rss_anon_kib') or 0) / 1024:.1f} | "
                f"{i['fds']} | {tr.get('idle_per_unit_per_s')} · {tr.get('bursty_per_unit_per_s')} "
                f"({tr.get('bursty_min_per_s')}) | "
                f"{tr.get('bursty_active_share')} · {tr.get('bursty_min_per_active_interval')} · "
                f"{i.get('bursty_below_interval', '-') if i.get('bursty') else '-'} | "
                f"{ms(i.get('during_adoption'))} · {ms(i.get('while_running'))} · {ms(i.get('during_stop'))} | "
                f"{i['stop_s']} | "
                f"{'all' if i['not_restored'] == 0 else str(i['not_restored']) + ' not'} |")
    c = results.get("churn")
    if c:
        g = c.get("governed_delay_s") or {}
        out += ["", "| churn | created · removed | governed after (s) p50 / p99 / max | missed | RSS KiB mid → last | "
                "fds mid → last | fds into removed | state entries of removed |", "|---|---|---|---|---|---|---|---|",
                f"| {c['rate']}/s for {c['duration_s']:.0f} s | {c['created']} · {c['removed']} | "
                f"{g.get('p50')} / {g.get('p99')} / {g.get('max')} | {c['not_governed_while_alive_over_1_2s']} | "
                f"{' → '.join(map(str, c.get('rss_kib_mid_last', [])))} | "
                f"{' → '.join(map(str, c.get('fds_mid_last', [])))} | {c['fds_into_removed']} | "
                f"{c.get('state_entries_of_removed')} |"]
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bwgovd", required=True, help="the bwgovd binary to measure (BUILD/src/daemon/bwgovd)")
    ap.add_argument("--count", default="1000",
                    help="idle cgroups, or a comma-separated list of sizes run one after the other "
                         "(1000,5000,10000; 0: no idle run)")
    ap.add_argument("--bursty", type=float, default=0.0,
                    help="percent of the idle run's cgroups that run a bursty process (default 0)")
    ap.add_argument("--bursty-ms", type=int, default=1,
                    help="CPU ms of each bursty process's burst, about one a second (default 1)")
    ap.add_argument("--bursty-bin", help="the bwgov-bursty binary (default: BUILD/tests/bench/bwgov-bursty)")
    ap.add_argument("--bwgovctl", help="bwgovctl for the status latency (default: BUILD/src/ctl/bwgovctl)")
    ap.add_argument("--status-window", type=float, default=5.0,
                    help="seconds of `bwgovctl status` every 50 ms after the CPU window (default 5)")
    ap.add_argument("--parents", type=int, default=10,
                    help="parent cgroups the idle ones are spread under, as slices hold services and "
                         "containers (default 10; 0: all directly under the root)")
    ap.add_argument("--window", type=float, default=30.0, help="seconds of CPU measurement once adopted")
    ap.add_argument("--watchdog-sec", type=float, default=shipped_watchdog_sec(),
                    help="WATCHDOG_USEC given to bwgovd, in seconds (default: the shipped unit's WatchdogSec=, "
                         "so that the CPU measured is what it costs under systemd; sd-event pings at half of it)")
    ap.add_argument("--adopt-timeout", type=float, default=120.0,
                    help="seconds to wait until every idle cgroup is adopted (default 120)")
    ap.add_argument("--churn", action="store_true", help="also run the churn test")
    ap.add_argument("--rate", type=float, default=50.0, help="cgroups created (and removed) per second")
    ap.add_argument("--duration", type=float, default=300.0, help="seconds of churn")
    ap.add_argument("--pool", type=int, default=0, help="configured names (default 10 × rate)")
    ap.add_argument("--quick", action="store_true", help="CI variant: 30 s of churn, 10 s window")
    ap.add_argument("--governor", action="append", default=[], metavar="KEY=VALUE",
                    help="a [Governor] setting for bwgov.conf, like ParkAtBaseline=yes (repeatable)")
    ap.add_argument("--reload", action="store_true",
                    help="idle run: also time a SIGHUP reload over all the cgroups (until \"Configuration "
                         "reloaded\"), with `bwgovctl status` running")
    ap.add_argument("--out", help="write the results as JSON")
    ap.add_argument("--log", help="write the daemon's log (idle run), each line with its time since start")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless every cgroup was restored, the daemon stopped on SIGTERM, and under churn "
                         "every new cgroup was governed and every removed one forgotten")
    a = ap.parse_args(argv)
    try:
        a.counts = [int(x) for x in a.count.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--count: expected a number or a comma-separated list of numbers, got {a.count!r}")
    a.interval_s = 1.0
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(a.bwgovd))))
    a.bwgovctl = a.bwgovctl or default_bwgovctl(a.bwgovd)
    a.bursty_bin = a.bursty_bin or os.path.join(build, "tests", "bench", "bwgov-bursty")
    if a.bursty > 0 and not os.access(a.bursty_bin, os.X_OK):
        ap.error(f"--bursty needs bwgov-bursty: {a.bursty_bin} is not there (build it, or give --bursty-bin)")
    if a.quick:
        a.duration = min(a.duration, 30.0)
        a.window = min(a.window, 10.0)
    a.pool = a.pool or int(a.rate * 10)
    if os.geteuid() != 0:
        print("SKIP: needs root to create cgroups", file=sys.stderr)
        return SKIP
    tree = Tree()
    if not tree.kind:
        print("SKIP: no cpu controller (cgroup v2 with cpu, or a v1 cpu hierarchy)", file=sys.stderr)
        return SKIP

    def on_signal(signo, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    base = tempfile.mkdtemp(prefix="bwgov-bench-realcg-")
    results = {}
    try:
        results["idle"] = [idle(a, tree, os.path.join(base, f"idle-{n}"), n) for n in a.counts if n > 0]
        if a.churn:
            results["churn"] = churn(a, tree, os.path.join(base, "churn"))
    finally:
        tree.cleanup()
        subprocess.run(["rm", "-rf", base] + RUNTIME_DIRS)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    print(markdown(results))
    return 1 if a.check and failures(results) else 0


def failures(results):
    out = []
    for i in results.get("idle") or []:
        if i.get("not_restored") != 0 or i.get("stop_s") is None or i.get("adopted", 0) < i.get("cgroups", 0):
            out.append(f"idle {i.get('cgroups')}: not all adopted, restored, or stopped")
        for phase in ("during_adoption", "while_running", "during_stop"):
            p = i.get(phase) or {}
            bad = (p.get("status_failed") or 0) + (0 if phase == "during_stop" else p.get("status_not_running") or 0)
            if bad:
                out.append(f"idle {i.get('cgroups')}: {bad} bwgovctl status calls failed {phase.replace('_', ' ')}")
        if i.get("bursty_below_interval"):
            out.append(f"idle {i.get('cgroups')}: {i['bursty_below_interval']} bursty cgroups sampled less than "
                       "once per Interval= they ran in")
    c = results.get("churn") or {}
    if c and (c.get("fds_into_removed") or c.get("state_entries_of_removed") or
              c.get("not_governed_while_alive_over_1_2s") or c.get("stop_s") is None or not c.get("governed")):
        out.append("churn: a removed cgroup not forgotten or a new one not governed")
    for f in out:
        print(f"FAIL: {f}", file=sys.stderr)
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
