#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgovd on real cgroups of this kernel (root; v2 or hybrid).

Side by side in one run, from the same 0.5-CPU baseline, a bursty workload
whose mean demand is 90 % of the quota runs under the static quota, under
static + burst = quota, and with bwgovd in elastic mode. Then sustained
overload (three times the baseline) must stay inside the contract, and a
steady load under the quota must cause no writes at all for 60 s. Every
write bwgovd makes is recorded by strace, independently of its own counters,
and none may repeat the value the file already held.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("BWGOV_BUILD_ROOT", "build")
BWGOVD = os.environ.get("BWGOVD") or os.path.join(BUILD, "src/daemon/bwgovd")
BURSTY = os.path.join(BUILD, "tests/bench/bwgov-bursty")
WARMUP = os.path.join(BUILD, "tests/bench/bwgov-warmup")
QUOTA, PERIOD = 50000, 100000
SECS = int(os.environ.get("BWGOV_LIVE_SECONDS", "30"))
CREDIT_S = 10

failures = []
inconclusive = []


def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def mounts():
    v2 = cpu = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            a, b = line.split(" - ")
            mnt = a.split()[4]
            fstype, _, opts = b.split()[:3]
            if fstype == "cgroup2" and v2 is None:
                v2 = mnt
            elif fstype == "cgroup" and "cpu" in opts.split(",") and cpu is None:
                cpu = mnt
    if v2 and "cpu" in open(os.path.join(v2, "cgroup.controllers")).read().split():
        return "v2", v2, v2
    if cpu:
        return "hybrid", cpu, v2
    return None, None, None


class Cgroup:
    def __init__(self, name):
        self.layout, self.bw_root, self.v2_root = mounts()
        self.name = name
        self.bw = os.path.join(self.bw_root, name)
        self.v2 = os.path.join(self.v2_root, name) if self.v2_root else None
        if self.layout == "v2":
            sc = os.path.join(self.v2_root, "cgroup.subtree_control")
            if "cpu" not in open(sc).read().split():
                with open(sc, "w") as f:
                    f.write("+cpu")
        os.mkdir(self.bw)
        if self.v2 and self.v2 != self.bw:
            os.mkdir(self.v2)

    def files(self):
        if self.layout == "v2":
            return {"cpu.max", "cpu.max.burst"}
        return {"cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.cfs_burst_us"}

    def set(self, quota, period, burst):
        def w(f, v):
            with open(os.path.join(self.bw, f), "w") as fh:
                fh.write(str(v))
        if self.layout == "v2":
            w("cpu.max.burst", 0)
            w("cpu.max", f"{quota} {period}")
            w("cpu.max.burst", burst)
        else:
            w("cpu.cfs_burst_us", 0)
            w("cpu.cfs_period_us", period)
            w("cpu.cfs_quota_us", quota)
            w("cpu.cfs_burst_us", burst)

    def get(self):
        r = lambda f: open(os.path.join(self.bw, f)).read().strip()
        if self.layout == "v2":
            q, p = r("cpu.max").split()
            return (q, int(p), int(r("cpu.max.burst")))
        q = r("cpu.cfs_quota_us")
        return ("max" if q == "-1" else q, int(r("cpu.cfs_period_us")), int(r("cpu.cfs_burst_us")))

    def stat(self):
        s = {}
        for line in open(os.path.join(self.bw, "cpu.stat")):
            k, v = line.split()
            s[k] = int(v)
        if "throttled_time" in s:
            s["throttled_usec"] = s["throttled_time"] // 1000
        for line in open(os.path.join(self.v2 or self.bw, "cpu.stat")):
            k, v = line.split()
            if k == "usage_usec":
                s["usage_usec"] = int(v)
        return s

    def spawn(self, argv, out):
        procs = [os.path.join(self.bw, "cgroup.procs")]
        if self.v2 and self.v2 != self.bw:
            procs.append(os.path.join(self.v2, "cgroup.procs"))

        def enter():
            for p in procs:
                with open(p, "w") as f:
                    f.write(str(os.getpid()))
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, preexec_fn=enter)

    def remove(self):
        for d in (self.bw, self.v2):
            if d and os.path.isdir(d):
                try:
                    os.rmdir(d)
                except OSError as e:
                    print(f"warning: cannot remove {d}: {e}", file=sys.stderr)


def run_load(cg, argv, secs_hint):
    before = cg.stat()
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as out:
        p = cg.spawn(argv, out)
        try:
            p.wait(secs_hint + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        out.seek(0)
        text = out.read().strip().splitlines()
    t = time.monotonic() - t0
    after = cg.stat()
    d = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    res = json.loads(text[-1]) if text else {}
    pct = 100.0 * d["nr_throttled"] / d["nr_periods"] if d.get("nr_periods") else 0.0
    return dict(wall=t, throttled_pct=pct, throttled_usec=d["throttled_usec"], usage_usec=d["usage_usec"],
                p99=(res.get("stretch") or {}).get("p99"), result=res)


class Daemon:
    def __init__(self, base, cg, conf):
        self.base = base
        self.unit = cg.name
        for d in ("conf", "state", "run"):
            os.makedirs(os.path.join(base, d), exist_ok=True)
        # This test compares the law against static limits; host shedding is
        # tested on fixtures. On a 2-CPU machine the bursty load's own threads
        # push host PSI some past the 40 % default (measured 44-66 %), which
        # would shed the very boost under test.
        with open(os.path.join(base, "conf", "bwgov.conf"), "w") as f:
            f.write("[Governor]\nHostPressureLimit=100%\n")
        os.makedirs(os.path.join(base, "conf", cg.name + ".d"), exist_ok=True)
        with open(os.path.join(base, "conf", cg.name + ".d", "10-live.conf"), "w") as f:
            f.write("[Bandwidth]\n" + conf)
        self.trace = os.path.join(base, "strace.log")
        self.log = open(os.path.join(base, "bwgovd.log"), "w")
        argv = [BWGOVD, "--config-dir", os.path.join(base, "conf"), "--state-dir", os.path.join(base, "state"),
                "--runtime-dir", os.path.join(base, "run"), "--log-level", "info"]
        if shutil.which("strace"):
            argv = ["strace", "-f", "-qq", "-s", "64", "-e", "trace=write", "-e", "signal=none",
                    "-y", "-o", self.trace] + argv
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)

    def metrics(self):
        out = {}
        try:
            for line in open(os.path.join(self.base, "run", "metrics.prom")):
                m = re.match(r'^(\w+)(?:\{unit="([^"]*)"\})? (\d+)$', line.strip())
                if m:
                    out[(m.group(1), m.group(2))] = int(m.group(3))
        except FileNotFoundError:
            pass
        return out

    def wait_adopted(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ("bwgov_baseline_quota_usec", self.unit) in self.metrics():
                return True
            time.sleep(0.1)
        return False

    def writes(self):
        return self.metrics().get(("bwgov_writes_total", self.unit), 0)

    def daemon_pid(self):
        """bwgovd itself: the strace wrapper's child when traced."""
        if not os.path.exists(self.trace) and self.proc.args[0] != "strace":
            return self.proc.pid
        try:
            for t in os.listdir(f"/proc/{self.proc.pid}/task"):
                kids = open(f"/proc/{self.proc.pid}/task/{t}/children").read().split()
                if kids:
                    return int(kids[0])
        except OSError:
            pass
        return None

    def stop(self):
        if self.proc.poll() is None:
            pid = self.daemon_pid()
            if pid:
                os.kill(pid, signal.SIGTERM)
            else:
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def identical_writes(trace, cg, initial):
    """Writes to the cgroup's bandwidth files that repeat the file's value."""
    last = dict(initial)
    n = total = 0
    pat = re.compile(r'write\(\d+<([^>]+)>, "((?:[^"\\]|\\.)*)"')
    for line in open(trace):
        m = pat.search(line)
        if not m:
            continue
        path, data = m.group(1), m.group(2).encode().decode("unicode_escape").strip()
        name = os.path.basename(path)
        if os.path.dirname(path) != cg.bw or name not in cg.files():
            continue
        total += 1
        if last.get(name) == data:
            n += 1
            print(f"  identical write: {name} = {data}")
        last[name] = data
    return total, n


def initial_values(cg):
    vals = {}
    for f in cg.files():
        v = open(os.path.join(cg.bw, f)).read().strip()
        vals[f] = v
    return vals


def main():
    if os.geteuid() != 0:
        skip("needs root to create cgroups")
    layout, bw, v2 = mounts()
    if not layout:
        skip("no cgroup CPU bandwidth controller")
    if layout == "hybrid" and not v2:
        skip("hybrid host without a cgroup2 tree for usage")
    for b in (BWGOVD, BURSTY, WARMUP):
        if not os.access(b, os.X_OK):
            print(f"FAIL: {b} not built")
            return 1

    base = tempfile.mkdtemp(prefix="bwgov-test-live-")
    cg = Cgroup(f"bwgov-test-live-{os.getpid()}")
    daemon = None
    try:
        print(f"cgroup {cg.name} ({cg.layout}), {SECS}s per run, baseline {QUOTA}/{PERIOD}")
        bursty = [BURSTY, "--threads", "4", "--mean-demand", "0.45", "--burst-ms", "10",
                  "--duration", str(SECS), "--seed", "7"]

        cg.set(QUOTA, PERIOD, 0)
        static = run_load(cg, bursty, SECS)
        cg.set(QUOTA, PERIOD, QUOTA)
        burst = run_load(cg, bursty, SECS)

        cg.set(QUOTA, PERIOD, 0)
        initial = initial_values(cg)
        daemon = Daemon(base, cg, f"Mode=elastic\nCreditMax={CREDIT_S}s\n")
        check(daemon.wait_adopted(), "bwgovd adopted the cgroup")
        elastic = run_load(cg, bursty, SECS)

        for label, r in (("static", static), ("static+burst", burst), ("bwgovd elastic", elastic)):
            print(f"  {label:15s} throttled periods {r['throttled_pct']:5.1f} %  throttled {r['throttled_usec'] / r['wall'] / 1e3:7.1f} ms/s"
                  f"  CPU {r['usage_usec'] / 1e6:6.2f} s  p99 stretch {r['p99']}")
        # The comparison means something only when the workload got the CPU
        # it asked for under the static limit: on a machine busy with other
        # work the load cannot even reach its demand and nothing throttles.
        measurable = static["throttled_pct"] >= 10.0
        if not measurable:
            inconclusive.append(f"static quota throttled only {static['throttled_pct']:.1f} % of periods "
                                f"(achieved {static['result'].get('achieved_demand_cpus')} CPUs of 0.45): host too busy to compare")
        else:
          check(elastic["throttled_pct"] * 10 <= static["throttled_pct"],
              f"elastic throttles at least 10x less than static ({elastic['throttled_pct']:.2f} % vs {static['throttled_pct']:.1f} %)")
          check(elastic["throttled_pct"] < burst["throttled_pct"] or elastic["throttled_pct"] == 0.0,
                f"elastic ends below static + burst ({elastic['throttled_pct']:.2f} % vs {burst['throttled_pct']:.2f} %)")

        # Sustained overload: three times the baseline, past the credit.
        secs = CREDIT_S * 3
        u0 = cg.stat()["usage_usec"]
        t0 = time.monotonic()
        hog = [BURSTY, "--threads", "2", "--mean-demand", "1.5", "--burst-ms", "50", "--duration", str(secs), "--seed", "3"]
        over = run_load(cg, hog, secs)
        t = time.monotonic() - t0
        used = cg.stat()["usage_usec"] - u0
        q, p, b = cg.get()
        budget = QUOTA / PERIOD * t * 1e6 + CREDIT_S * 1e6 + QUOTA
        print(f"  overload: {used / 1e6:.2f} CPU-s in {t:.1f} s, budget {budget / 1e6:.2f} CPU-s (achieved {over['result'].get('achieved_demand_cpus')})")
        check(used <= budget, f"overload stays within baseline x time + CreditMax + burst ({used / 1e6:.2f} <= {budget / 1e6:.2f} CPU-s)")
        # The load asks for three times the baseline, so it can only be held
        # to the contract by spending the whole credit: when it used (nearly)
        # all the budget, the credit is gone and the quota must be back at
        # the baseline. A load that could not get that much CPU on a busy
        # machine says nothing either way.
        if used >= 0.9 * budget:
            check(q == str(QUOTA), f"credit exhausted: quota back at the baseline ({q})")
        else:
            inconclusive.append(f"overload used only {used / 1e6:.2f} of {budget / 1e6:.2f} CPU-s: "
                                "credit exhaustion not reached")

        # Steady load under the quota: after settling, no writes for 60 s.
        steady = [WARMUP, "--warm-work-cpu-s", "0", "--steady-cpus", "0.25", "--duration", "170"]
        with open(os.devnull, "w") as null:
            p = cg.spawn(steady, null)
            try:
                # Settle: after the overload the usage peak holds 30 s and
                # then fades with a 20 s time constant; the decay is done
                # well within 100 s.
                time.sleep(100)
                w0 = daemon.writes()
                time.sleep(60)
                w1 = daemon.writes()
            finally:
                p.kill()
                p.wait()
        check(w1 == w0, f"steady load: no writes in 60 s ({w1 - w0} writes)")

        rc = daemon.stop()
        check(rc == 0, f"bwgovd exited cleanly on SIGTERM ({rc})")
        check(cg.get() == (str(QUOTA), PERIOD, 0), f"SIGTERM restored the baseline exactly ({cg.get()})")
        if os.path.exists(daemon.trace):
            total, same = identical_writes(daemon.trace, cg, initial)
            print(f"  strace: {total} writes to bandwidth files, {same} identical; bwgovd counted {daemon.writes()}")
            check(same == 0, "zero writes of a value equal to the current one (strace)")
            check(total == daemon.writes(), "strace and bwgovd's counter agree on the number of writes")
        else:
            print("note: strace not installed, identical writes checked by counters only")
    finally:
        if daemon:
            daemon.stop()
        # Only our own processes are in the cgroup; they have exited.
        cg.remove()
        if failures:
            try:
                print(open(os.path.join(base, "bwgovd.log")).read()[-4000:])
            except OSError:
                pass
        shutil.rmtree(base, ignore_errors=True)

    for i in inconclusive:
        print(f"inconclusive: {i}")
    print(f"{'FAILED' if failures else 'OK'}: {len(failures)} failed checks")
    if failures:
        return 1
    if inconclusive:
        print("SKIP: performance comparison inconclusive on this machine (safety checks passed)")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
