#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgovd on real cgroups of this kernel (root; v2 or hybrid).

Side by side in one run, from the same 0.5-CPU baseline, a bursty workload
whose mean demand is 90 % of the quota runs under the static quota, under
static + burst = quota, and with bwgovd in elastic mode, whose quota rests at
CPUQuotaMax= while the credit pays for it. A warm-up at three times the
baseline then runs at CPUQuotaMax= from its first moment; sustained overload
(three times the baseline) must stay inside the contract and be back at
exactly the baseline before the credit is overdrawn, and stay there; a steady
load under the quota must cause no writes at all for 60 s. Nested groups: a
child never gets a quota above its limited parent's, the parent's throttling
shows as an ancestor's in cpu.stat.local, and a governed slice with a
governed service in it both keep their contracts. Every write bwgovd makes
is recorded by strace, independently of its own counters, and none may
repeat the value the file already held.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_common import read_metrics  # noqa: E402

BUILD = os.environ.get("BWGOV_BUILD_ROOT", "build")
BWGOVD = os.environ.get("BWGOVD") or os.path.join(BUILD, "src/daemon/bwgovd")
BWGOVCTL = os.environ.get("BWGOVCTL") or os.path.join(BUILD, "src/ctl/bwgovctl")
BURSTY = os.path.join(BUILD, "tests/bench/bwgov-bursty")
WARMUP = os.path.join(BUILD, "tests/bench/bwgov-warmup")
QUOTA, PERIOD = 50000, 100000
QUOTA_MAX_PCT = 150             # CPUQuotaMax=: 1.5 CPU, three times the baseline
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


def read_file(path):
    """A cgroup (or any small) file's content, without its trailing newline."""
    with open(path) as f:
        return f.read().strip()


def write_file(path, value):
    with open(path, "w") as f:
        f.write(str(value))


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
    if v2 and "cpu" in read_file(os.path.join(v2, "cgroup.controllers")).split():
        return "v2", v2, v2
    if cpu:
        return "hybrid", cpu, v2
    return None, None, None


class Cgroup:
    def __init__(self, name):
        """name may be nested ("parent/child"); the parent must exist."""
        self.layout, self.bw_root, self.v2_root = mounts()
        self.name = name
        self.bw = os.path.join(self.bw_root, name)
        self.v2 = os.path.join(self.v2_root, name) if self.v2_root else None
        if self.layout == "v2":
            sc = os.path.join(os.path.dirname(self.bw), "cgroup.subtree_control")
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
        try:
            for line in open(os.path.join(self.bw, "cpu.stat.local")):
                k, v = line.split()
                s["local_throttled_usec"] = int(v) // 1000 if k == "throttled_time" else int(v)
        except OSError:
            pass
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
    def __init__(self, base, units, trace=True):
        """units: {cgroup path: [Bandwidth] lines}; each governed through
        Cgroup=, under a unit name without slashes. trace: under strace
        when it is installed (its writes counted); a test that runs in the
        ASan+UBSan variant says False, as LeakSanitizer cannot run under
        ptrace and would make bwgovd's exit fail."""
        self.base = base
        self.units = {cg: cg.replace("/", "-") for cg in units}
        for d in ("conf", "state", "run"):
            os.makedirs(os.path.join(base, d), exist_ok=True)
        # This test compares the law against static limits; host protection
        # is tested on fixtures and in the benchmark. Another tenant of a
        # shared CI machine must not brake the headroom under test. The
        # test reads adoption, writes and credit from metrics.prom: every
        # second, not every MetricsInterval= (10 s).
        with open(os.path.join(base, "conf", "bwgov.conf"), "w") as f:
            f.write("[Governor]\nHostPressureLimit=0%\nMetricsInterval=1s\n")
        for cg, conf in units.items():
            d = os.path.join(base, "conf", self.units[cg] + ".d")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "10-live.conf"), "w") as f:
                f.write(f"[Bandwidth]\nCgroup={cg}\n" + conf)
        self.unit = next(iter(self.units.values()))
        self.trace = os.path.join(base, "strace.log")
        self.log = open(os.path.join(base, "bwgovd.log"), "w")
        argv = [BWGOVD, "--config-dir", os.path.join(base, "conf"), "--state-dir", os.path.join(base, "state"),
                "--runtime-dir", os.path.join(base, "run"), "--log-level", "info"]
        if trace and shutil.which("strace"):
            argv = ["strace", "-f", "-qq", "-s", "64", "-e", "trace=write", "-e", "signal=none",
                    "-y", "-o", self.trace] + argv
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)

    def metrics(self):
        return read_metrics(self.base)

    def wait_adopted(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.metrics()
            if all(("bwgov_baseline_quota_usec", u) in m for u in self.units.values()):
                return True
            time.sleep(0.1)
        return False

    def writes(self, unit=None):
        return self.metrics().get(("bwgov_writes_total", unit or self.unit), 0)

    def explain(self, unit):
        p = subprocess.run([BWGOVCTL, "explain", unit, "--json", "--socket",
                            os.path.join(self.base, "run", "io.bwgov.Governor")],
                           capture_output=True, text=True, timeout=30)
        return json.loads(p.stdout) if p.returncode == 0 else None

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


class Sampler(threading.Thread):
    """Quota and usage of a cgroup every 50 ms, for the timing checks."""

    def __init__(self, cg):
        super().__init__(daemon=True)
        self.cg = cg
        self.rows = []
        self.halt = threading.Event()

    def run(self):
        t0 = time.monotonic()
        while not self.halt.wait(0.05):
            try:
                q = self.cg.get()[0]
                u = self.cg.stat()["usage_usec"]
            except (OSError, KeyError, ValueError):
                continue
            self.rows.append((time.monotonic() - t0, None if q == "max" else int(q), u))

    def stop(self):
        self.halt.set()
        self.join(2)


def overload_check(rows, credit0, credit_max, quota, period, burst):
    """The credit a bookkeeper would compute from the usage (capped at
    CreditMax=, no lower clamp), and when the quota came back to exactly the
    baseline after having been above it."""
    rate = quota / period
    credit, low = credit0, credit0
    t_base = c_base = None
    above = False
    rose_again = False
    for i in range(1, len(rows)):
        t, q, u = rows[i]
        dt = t - rows[i - 1][0]
        credit = min(credit_max, credit + rate * dt * 1e6 - (u - rows[i - 1][2]))
        low = min(low, credit)
        if q is not None and q > quota:
            above = True
            if t_base is not None:
                rose_again = True
        elif q == quota and above and t_base is None:
            t_base, c_base = t, credit
    return dict(t_base=t_base, credit_at_base=c_base, lowest=low, rose_again=rose_again, burst=burst)


def main():
    if os.geteuid() != 0:
        skip("needs root to create cgroups")
    layout, bw, v2 = mounts()
    if not layout:
        skip("no cgroup CPU bandwidth controller")
    if layout == "hybrid" and not v2:
        skip("hybrid host without a cgroup2 tree for usage")
    for b in (BWGOVD, BWGOVCTL, BURSTY, WARMUP):
        if not os.access(b, os.X_OK):
            print(f"FAIL: {b} not built")
            return 1

    base = tempfile.mkdtemp(prefix="bwgov-test-live-")
    cg = Cgroup(f"bwgov-test-live-{os.getpid()}")
    nested = []
    daemon = daemon2 = None
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
        conf = f"Mode=elastic\nCreditMax={CREDIT_S}s\nCPUQuotaMax={QUOTA_MAX_PCT}%\n"
        daemon = Daemon(base, {cg.name: conf})
        check(daemon.wait_adopted(), "bwgovd adopted the cgroup")
        # The headroom is in place before any load: full credit pays for it.
        q = cg.get()
        check(q == (str(QUOTA * 3), PERIOD, QUOTA),
              f"full credit: the quota rests at CPUQuotaMax= with burst = quota before any load ({q})")
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
            check(elastic["throttled_pct"] <= 2.0,
                  f"elastic: at most 2 % of periods throttled ({elastic['throttled_pct']:.2f} %, static {static['throttled_pct']:.1f} %)")
            check(elastic["throttled_pct"] < burst["throttled_pct"] or elastic["throttled_pct"] == 0.0,
                  f"elastic ends below static + burst ({elastic['throttled_pct']:.2f} % vs {burst['throttled_pct']:.2f} %)")

        # A warm-up at three times the baseline: the credit pays for all of
        # it, so it runs at CPUQuotaMax= from the start (ideal: 3 CPU-s at
        # 1.5 CPU = 2 s). Wait for the credit the bursty run left behind to
        # pay for the top level again (it spent none: mean under baseline).
        time.sleep(1)
        warm = run_load(cg, [WARMUP, "--warm-cpus", "1.5", "--warm-work-cpu-s", "3", "--steady-cpus", "0",
                             "--duration", "0.1"], 10)
        ws = warm["result"].get("warmup_s")
        print(f"  warm-up: {ws} s for 3 CPU-s at 1.5 CPU (ideal 2.0 s)")
        if ws is None:
            check(False, "warm-up finished")
        elif ws <= 2.2:
            check(True, f"warm-up at full credit within 1.1x of work / CPUQuotaMax= ({ws:.2f} s <= 2.2 s)")
        else:
            inconclusive.append(f"warm-up took {ws:.2f} s (ideal 2.0 s): host busy?")

        # Sustained overload: three times the baseline, past the credit.
        secs = CREDIT_S * 3
        credit0 = daemon.metrics().get(("bwgov_credit_usec", daemon.unit), CREDIT_S * 1000000)
        sampler = Sampler(cg)
        u0 = cg.stat()["usage_usec"]
        t0 = time.monotonic()
        sampler.start()
        hog = [BURSTY, "--threads", "2", "--mean-demand", "1.5", "--burst-ms", "50", "--duration", str(secs), "--seed", "3"]
        over = run_load(cg, hog, secs)
        sampler.stop()
        t = time.monotonic() - t0
        used = cg.stat()["usage_usec"] - u0
        q, p, b = cg.get()
        budget = QUOTA / PERIOD * t * 1e6 + CREDIT_S * 1e6 + QUOTA
        print(f"  overload: {used / 1e6:.2f} CPU-s in {t:.1f} s, budget {budget / 1e6:.2f} CPU-s (achieved {over['result'].get('achieved_demand_cpus')})")
        check(used <= budget, f"overload stays within baseline x time + CreditMax + burst ({used / 1e6:.2f} <= {budget / 1e6:.2f} CPU-s)")
        # The bursty run earned, the warm-up spent: the bookkeeping starts
        # from the credit bwgovd reported just before (at most a second old).
        oc = overload_check(sampler.rows, credit0, CREDIT_S * 1e6, QUOTA, PERIOD, QUOTA)
        # The load asks for three times the baseline: unless the host is too
        # busy to give it that, it spends its credit down to the reserve the
        # law keeps for its horizon (about 80 % of it here: measured 7.2 of
        # 9.0 s), and the quota goes back to the baseline. Half of it spent
        # shows the host let the group run well above its baseline.
        if used >= QUOTA / PERIOD * t * 1e6 + 0.5 * credit0:
            check(q == str(QUOTA), f"credit exhausted: quota back at the baseline ({q})")
            check(oc["t_base"] is not None, "the quota went back to exactly the baseline during the overload")
            if oc["t_base"] is not None:
                print(f"  back at the baseline at {oc['t_base']:.2f} s; credit then (from the usage) "
                      f"{oc['credit_at_base'] / 1e6:.3f} CPU-s, lowest {oc['lowest'] / 1e6:.3f} CPU-s")
                check(oc["lowest"] >= -QUOTA, f"never overdrawn beyond one burst ({oc['lowest'] / 1e6:.3f} CPU-s)")
                check(not oc["rose_again"], "no headroom again while the overload lasted")
        else:
            inconclusive.append(f"overload used only {used / 1e6:.2f} CPU-s in {t:.1f} s with {credit0 / 1e6:.2f} s "
                                "of credit: exhaustion not reached")

        # Steady load under the quota: after settling, no writes for 60 s.
        steady = [WARMUP, "--warm-work-cpu-s", "0", "--steady-cpus", "0.25", "--duration", "95"]
        with open(os.devnull, "w") as null:
            p = cg.spawn(steady, null)
            try:
                # Settle: the credit refills (0.25 CPU-s/s) to where the
                # headroom comes back, then nothing moves.
                time.sleep(30)
                w0 = daemon.writes()
                time.sleep(60)
                w1 = daemon.writes()
            finally:
                p.kill()
                p.wait()
        check(w1 == w0, f"steady load: no writes in 60 s ({w1 - w0} writes)")
        check(cg.get()[0] == str(QUOTA * 3), f"steady load under the baseline rests at CPUQuotaMax= ({cg.get()[0]})")

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
        daemon = None

        # Nested: a limited parent that bwgovd does not govern, a governed
        # child whose CPUQuotaMax= is above the parent's quota.
        parent = Cgroup(f"bwgov-test-live-{os.getpid()}-p")
        nested.append(parent)
        child = Cgroup(parent.name + "/c")
        nested.append(child)
        parent.set(40000, PERIOD, 0)
        child.set(20000, PERIOD, 0)
        base2 = os.path.join(base, "nested")
        daemon2 = Daemon(base2, {child.name: "Mode=elastic\nCreditMax=5s\nCPUQuotaMax=60%\n"})
        check(daemon2.wait_adopted(), "bwgovd adopted the child")
        time.sleep(1.5)
        cq = child.get()[0]
        check(cq == "40000", f"the child's headroom stops at its limited parent's quota (quota {cq}, parent 40000, CPUQuotaMax 60000)")
        hog = [BURSTY, "--threads", "2", "--mean-demand", "1.0", "--burst-ms", "50", "--duration", "4", "--seed", "5"]
        s0 = child.stat()
        run_load(child, hog, 4)
        s1 = child.stat()
        cq = child.get()[0]
        check(cq in ("40000", "20000"), f"throttled by the parent, the child's quota did not rise above it ({cq})")
        if "local_throttled_usec" in s1:
            own = s1["throttled_usec"] - s0["throttled_usec"]
            local = s1["local_throttled_usec"] - s0["local_throttled_usec"]
            print(f"  child: own throttled {own / 1e3:.0f} ms, by own or ancestor {local / 1e3:.0f} ms")
            check(local > own, "cpu.stat.local shows the parent's throttling beyond the child's own")
            ex = daemon2.explain(daemon2.unit)
            anc = ex and ex["decision"] and ex["decision"]["inputs"]["ancestor_throttle_rate"]
            print(f"  explain: ancestor_throttle_rate {anc}")
        else:
            print("note: no cpu.stat.local on this kernel (6.6+): ancestor throttling not shown")
        rc = daemon2.stop()
        daemon2 = None
        check(rc == 0 and child.get() == ("20000", PERIOD, 0), f"the child restored on stop ({child.get()})")

        # A governed slice with a governed service in it: both keep their
        # contracts while the service runs far over both baselines.
        parent.set(40000, PERIOD, 0)
        child.set(20000, PERIOD, 0)
        base3 = os.path.join(base, "both")
        # The service may use all its slice gives it: the slice's credit
        # runs out first and its quota comes down under the service's (on
        # cgroup v1 the kernel refuses a parent below its child: bwgovd
        # lowers the service first).
        daemon2 = Daemon(base3, {parent.name: "Mode=elastic\nCreditMax=2s\nCPUQuotaMax=80%\n",
                                 child.name: "Mode=elastic\nCreditMax=10s\nCPUQuotaMax=80%\n"})
        check(daemon2.wait_adopted(), "bwgovd adopted the slice and its service")
        time.sleep(1.5)
        pq, cq = int(parent.get()[0]), int(child.get()[0])
        check(cq <= pq, f"the service's quota is not above its slice's ({cq} <= {pq})")
        pu0, cu0, t0 = parent.stat()["usage_usec"], child.stat()["usage_usec"], time.monotonic()
        hog = [WARMUP, "--warm-cpus", "2", "--warm-work-cpu-s", "24", "--warm-timeout", "12", "--steady-cpus", "0",
               "--duration", "0.1"]
        run_load(child, hog, 12)
        t = time.monotonic() - t0
        pu, cu = parent.stat()["usage_usec"] - pu0, child.stat()["usage_usec"] - cu0
        pb = 0.4 * t * 1e6 + 2e6 + 40000
        cb = 0.2 * t * 1e6 + 10e6 + 20000
        print(f"  slice used {pu / 1e6:.2f} CPU-s (budget {pb / 1e6:.2f}), service {cu / 1e6:.2f} (budget {cb / 1e6:.2f}) in {t:.1f} s")
        check(pu <= pb, "the slice kept its contract")
        check(cu <= cb, "the service kept its contract")
        check(parent.get()[0] == "40000", f"the slice's credit spent: its quota is its baseline ({parent.get()[0]})")
        check(int(child.get()[0]) <= 40000, f"the service's quota is not above its slice's ({child.get()[0]})")
        rc = daemon2.stop()
        daemon2 = None
        check(rc == 0 and parent.get() == ("40000", PERIOD, 0) and child.get() == ("20000", PERIOD, 0),
              "both restored on stop")
    finally:
        for d in (daemon, daemon2):
            if d:
                d.stop()
        # Only our own processes are in the cgroups; they have exited.
        for c in reversed(nested):
            c.remove()
        cg.remove()
        if failures:
            for log in ("bwgovd.log", "nested/bwgovd.log", "both/bwgovd.log"):
                try:
                    print(f"--- {log}")
                    print(open(os.path.join(base, log)).read()[-3000:])
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
