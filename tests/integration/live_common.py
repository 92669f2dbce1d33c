# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the live tests on real cgroups share: checks that count their
failures, bwgovd's metrics file as a dict, waiting for a condition."""
import os
import re
import signal
import time

failures = []


def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def read_metrics(base):
    """BASE/run/metrics.prom as {(family, unit or None): value}, {} while absent."""
    out = {}
    try:
        for line in open(os.path.join(base, "run", "metrics.prom")):
            m = re.match(r'^(\w+)(?:\{unit="([^"]*)"\})? (\d+)$', line.strip())
            if m:
                out[(m.group(1), m.group(2))] = int(m.group(3))
    except FileNotFoundError:
        pass
    return out


def metrics(base):
    """{'name{labels}': value} of BASE/run/metrics.prom ({} while absent)."""
    out = {}
    try:
        with open(os.path.join(base, "run", "metrics.prom")) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
    except OSError:
        pass
    return out


def wait_for(pred, seconds, step=0.1):
    """pred()'s first true value within SECONDS, else None."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None


def finish(base):
    """The exit status; BASE removed when every check passed, else kept
    (and named) for the daemon's log."""
    import shutil

    if not failures:
        shutil.rmtree(base, ignore_errors=True)
    else:
        print(f"kept {base} (the daemon's log is bwgovd.log)")
    return 1 if failures else 0


def end_processes(procs, daemon=None):
    """Kill each of PROCS (ours, by PID) and reap it; then stop DAEMON with
    SIGTERM (its baselines go back), SIGKILL after 20 s, and check that it
    exited 0 (under ASan+UBSan a sanitizer's report, a leak at exit
    included, makes it exit otherwise). A daemon that was gone before it
    fails the check too: these tests never stop it themselves."""
    import subprocess

    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
    if daemon is None:
        return
    if daemon.poll() is None:
        daemon.terminate()
        try:
            daemon.wait(20)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
    check(daemon.returncode == 0, f"bwgovd exited 0 on SIGTERM ({daemon.returncode})")


def remove_cgroups(dirs, tries=100):
    """Kill what is left in each of our cgroup directories DIRS (a killed
    shell's sleep, say) and remove them, trying again for a while; returns
    the directories that could not be removed."""
    dirs = [d for d in dirs if d]
    for _ in range(tries):
        for d in list(dirs):
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    for pid in f.read().split():
                        os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
            try:
                os.rmdir(d)
                dirs.remove(d)
            except FileNotFoundError:
                dirs.remove(d)
            except OSError:
                pass
        if not dirs:
            break
        time.sleep(0.05)
    return dirs
