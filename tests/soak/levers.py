# SPDX-License-Identifier: LGPL-2.1-or-later
"""The levers of the churn soak (issue 30), beside its churn:

- in the soak's bwgovd (the one whose heap, RSS and fds are judged): a
  Class=latency unit with a waking thread and a Class=best-effort hog (the
  ladder up to cpu.idle and down again), two busy Class=throughput groups,
  and Contention= switched between gang and pin by a reload every
  --contention-every seconds; at its stop every lever file is back;
- a second bwgovd on groups of its own (the same kinds of levers, and a
  unit resting at a raised quota), SIGKILLed at a random moment every
  --kill-every seconds and then, in turn, started again at once, started
  with a configuration that does not load (it refuses and must leave
  nothing behind), or put back by `bwgovd --restore` (nothing left) and
  started again. At the end it is stopped, and nothing of it is left.

Every group's lever files (cgroup.freeze, cpu.idle, the weight, cpuset.cpus),
its quota and the slices of its threads are compared with what they were
before the soak.
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from kill_matrix import Group, short_slices, wait_for  # noqa: E402
from live_governor import Cgroup  # noqa: E402
from live_governor import write_file as wr  # noqa: E402


class Levers:
    def __init__(self, soak, prefix, layout):
        self.s = soak
        self.a = soak.a
        self.rnd = random.Random(self.a.seed + 30)
        self.prefix = prefix
        self.layout = layout
        self.groups = {}                # name -> Group: "a-*" the soak daemon's, "b-*" the second's
        self.children = []              # Cgroups below a latency group (their waking thread)
        self.base = os.path.join(soak.base, "second")
        self.proc = None
        self.contention = "gang"
        self.counts = dict(kills=0, restarts=0, broken=0, restores=0, toggles=0)
        self.failures = []
        self.logs = []

    # ---- the groups -----------------------------------------------------------

    def group(self, key, quota=None, weight=None, cpuset=True):
        g = Group(f"{self.prefix}{key}", self.layout, quota, weight, cpuset)
        self.groups[key] = g
        return g

    def latency_pair(self, side):
        odd = lambda v2, v1: v2 if self.layout == "v2" else v1
        lat = self.group(f"{side}-lat", weight=odd("137", "1403"), cpuset=False)
        be = self.group(f"{side}-be", weight=odd("43", "443"))
        work = Cgroup(f"{lat.name}/work")
        self.children.append(work)
        targets = [os.path.join(work.bw, "cgroup.procs")] + \
            ([os.path.join(work.v2, "cgroup.procs")] if work.v2 != work.bw else [])

        def enter():
            for t in targets:
                wr(t, os.getpid())
        lat.procs.append(subprocess.Popen(["sh", "-c", "while :; do sleep 0.001; done"], preexec_fn=enter,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        be.spawn("while :; do :; done", 1)

    def setup(self):
        odd = lambda v2, v1: v2 if self.layout == "v2" else v1
        # Below the default weight: busy, starved (so they contend), and
        # never in the way of the daemons and the soak's own clients.
        for side in ("a", "b"):
            for k in ("ga", "gb"):
                self.group(f"{side}-{k}", 90000, odd("50", "512")).spawn("while :; do :; done", 1)
            self.latency_pair(side)
        self.group("b-q", 50000, odd("77", "789"))
        self.orig = {k: g.orig for k, g in self.groups.items()}

    def conf_units(self, side):
        """{unit: [Bandwidth] lines} of one daemon's lever units."""
        g = self.groups
        return {f"{side}-ga": f"Cgroup={g[side + '-ga'].name}\nClass=throughput\n",
                f"{side}-gb": f"Cgroup={g[side + '-gb'].name}\nClass=throughput\n",
                f"{side}-lat": f"Cgroup={g[side + '-lat'].name}\nLatencyTarget=300us\n",
                f"{side}-be": f"Cgroup={g[side + '-be'].name}\nClass=best-effort\n",
                **({"b-q": f"Cgroup={g['b-q'].name}\nCreditMax=10s\n"} if side == "b" else {})}

    def governor_lines(self):
        return f"Contention={self.contention}\nContentionInterval=500ms\n"

    # ---- the soak daemon's contention --------------------------------------------

    def toggle(self):
        """A reload with Contention= switched between gang and pin."""
        self.contention = "pin" if self.contention == "gang" else "gang"
        with self.s.conf_lock:
            self.s.write_global()
            p = self.s.ctl("reload")
        self.counts["toggles"] += 1
        if p.returncode != 0:
            self.failures.append(f"reload to Contention={self.contention} failed: {p.stderr.strip()}")

    # ---- the second daemon ---------------------------------------------------------

    def write_second(self, broken=False):
        conf = os.path.join(self.base, "conf")
        shutil.rmtree(conf, ignore_errors=True)
        os.makedirs(conf)
        wr(os.path.join(conf, "bwgov.conf"), "[Governor]\nHostPressureLimit=0%\nContention=gang\n"
           "ContentionInterval=300ms\nMetricsInterval=5s\n")
        for n, body in self.conf_units("b").items():
            os.makedirs(os.path.join(conf, n + ".d"))
            wr(os.path.join(conf, n + ".d", "10-soak.conf"), "[Bandwidth]\n" + body)
        if broken:
            wr(os.path.join(conf, "b-q.d", "20-broken.conf"), "[Bandwidth]\nCreditMax=soon\n")

    def start_second(self, *extra):
        for d in ("state", "run"):
            os.makedirs(os.path.join(self.base, d), exist_ok=True)
        log = os.path.join(self.base, f"bwgovd-{len(self.logs)}.log")
        self.logs.append(log)
        with open(log, "w") as out:
            return subprocess.Popen([self.a.bwgovd, "--config-dir", os.path.join(self.base, "conf"), "--state-dir",
                                     os.path.join(self.base, "state"), "--runtime-dir",
                                     os.path.join(self.base, "run"), "--log-level", "info", *extra],
                                    stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=self.s.daemon_env())

    def start(self):
        os.makedirs(self.base, exist_ok=True)
        self.write_second()
        self.proc = self.start_second()

    def leftovers(self, side):
        bad = []
        for k, g in self.groups.items():
            if not k.startswith(side + "-"):
                continue
            v, o = g.values(), self.orig[k]
            for f in ("freeze", "idle", "weight", "cpus", "max"):
                if f in v and v[f] != o.get(f):
                    bad.append(f"{k}.{f}={v[f]} (was {o.get(f)})")
        for k in (f"{side}-lat",):
            if short_slices(self.groups[k]):
                bad.append(f"{k}: a thread at bwgovd's slice")
        return bad

    def kill_round(self):
        """SIGKILL the second bwgovd at a random moment of its life, then
        one of: start again; start broken (refused, nothing left), then
        start; --restore (nothing left), then start."""
        time.sleep(self.rnd.uniform(0, 3))
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.counts["kills"] += 1
        what = self.rnd.choice(("restart", "broken", "restore"))
        if what == "broken":
            self.write_second(broken=True)
            p = self.start_second()
            try:
                rc = p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = "still running"
            self.counts["broken"] += 1
            if rc in (0, "still running"):
                self.failures.append(f"a broken configuration: the second bwgovd did not refuse ({rc})")
            self.check_nothing_left("a start with a broken configuration")
            self.write_second()
        elif what == "restore":
            rc = self.start_second("--restore").wait(60)
            self.counts["restores"] += 1
            if rc != 0:
                self.failures.append(f"bwgovd --restore exited {rc}")
            self.check_nothing_left("bwgovd --restore")
        self.proc = self.start_second()
        self.counts["restarts"] += 1

    def check_nothing_left(self, after):
        bad = self.leftovers("b")
        if bad:
            self.failures.append(f"after {after}: {', '.join(bad[:4])}")
            for k, g in self.groups.items():
                if k.startswith("b-"):
                    g.reset()

    # ---- the end ----------------------------------------------------------------------

    def finish(self, res):
        """After the soak daemon's stop: its levers, then the second's."""
        left = self.leftovers("a")
        if left:
            self.failures.append(f"after the soak daemon's stop: {', '.join(left[:6])}")
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = "SIGTERM ignored"
            if rc != 0:
                self.failures.append(f"the second bwgovd's stop exited {rc}")
            self.check_nothing_left("the second bwgovd's stop")
        text = ""
        for log in self.logs:
            with open(log, errors="replace") as f:
                text += f.read()
        res["levers"] = dict(self.counts, failures=self.failures[:20],
                             sanitizer_reports=len(self.s.sanitizer_re.findall(text)))

    def cleanup(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for g in self.groups.values():
            g.reset()
            for p in g.procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
        for c in self.children:
            for d in (c.bw, c.v2):
                wait_for(lambda: self.rmdir(d), 5)
        for g in self.groups.values():
            g.remove()

    @staticmethod
    def rmdir(d):
        try:
            os.rmdir(d)
        except FileNotFoundError:
            pass
        except OSError:
            return False
        return True


def failures(res):
    lv = res.get("levers")
    if not lv:
        return []
    out = [f"levers: {f}" for f in lv["failures"]]
    if lv["sanitizer_reports"]:
        out.append(f"{lv['sanitizer_reports']} sanitizer reports in the second bwgovd's logs")
    if lv["kills"] == 0:
        out.append("levers: no SIGKILL round ran")
    return out
