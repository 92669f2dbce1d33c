# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared by the varlink and bwgovctl tests: the real bwgovd on a static
simulated cgroup tree (daemon_fixture's files, but no simulator thread: the
counters never move, so every decision is the same and output is
repeatable), and a raw varlink client on plain sockets.
"""
import json
import os
import shutil
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_fixture as df  # noqa: E402

BWGOVD = df.BWGOVD
BWGOVCTL = os.environ.get("BWGOVCTL") or os.path.join(os.environ.get("BWGOV_BUILD_ROOT", "build"), "src/ctl/bwgovctl")
SOURCE_ROOT = os.environ.get("BWGOV_SOURCE_ROOT") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
INTERFACE_FILE = os.path.join(SOURCE_ROOT, "src/daemon/varlink/io.bwgov.Governor.varlink")
INTERFACE = "io.bwgov.Governor"

# A unit of every kind: governed (resting at its headroom from adoption on),
# observed, an unlimited one, one whose cgroup does not exist. Bursts equal
# to the quota: the law keeps the burst there, so nothing but the headroom
# is written.
UNITS = {
    "app.slice": dict(quota=50000, burst=50000, conf="CreditMax=30s\n"),
    "db.slice": dict(quota=200000, burst=200000,
                     conf="Mode=observe\nCPUQuotaMax=300%\nPriority=5\nTargetThrottle=2%\n"),
    "web.slice": dict(quota="max", burst=0, conf=""),
    "gone.slice": dict(quota=None, burst=0, conf="CreditMax=10s\n"),
}
GLOBAL_CONF = "[Governor]\nInterval=100ms\nMetricsInterval=100ms\n"


class StaticDaemon:
    """bwgovd on a tree of regular files whose counters never change."""

    def __init__(self, units=None, global_conf=GLOBAL_CONF, env=None):
        self.units = UNITS if units is None else units
        self.global_conf = global_conf
        self.env = env or {}
        self.base = tempfile.mkdtemp(prefix="bwgov-test-varlink-")
        self.d = None

    @property
    def socket_path(self):
        return os.path.join(self.base, "run", INTERFACE)

    def prepare(self):
        """Write the tree and the configuration."""
        for d in ("cg", "conf", "state", "run"):
            os.makedirs(os.path.join(self.base, d), exist_ok=True)
        with open(os.path.join(self.base, "cg", "cgroup.controllers"), "w") as f:
            f.write("cpuset cpu io memory pids\n")
        with open(os.path.join(self.base, "conf", "bwgov.conf"), "w") as f:
            f.write(self.global_conf)
        for name, u in self.units.items():
            if u["quota"] is not None:
                df.SimCgroup(os.path.join(self.base, "cg"), name, u["quota"], u["burst"])
            d = os.path.join(self.base, "conf", name + ".d")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "10-test.conf"), "w") as f:
                f.write("[Bandwidth]\n" + u["conf"])
        with open(os.path.join(self.base, "host-pressure"), "w") as f:
            f.write("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        with open(os.path.join(self.base, "host-stat"), "w") as f:
            f.write("cpu  0 0 0 100000 0 0 0 0 0 0\n")
        return self

    def start(self, wait=True):
        self.prepare()
        saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        try:
            self.d = df.Daemon(self.base)
            self.d.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        if wait:
            self.d.wait_for(lambda: os.path.exists(self.socket_path), 10, "the varlink socket")
            present = [n for n, u in self.units.items() if u["quota"] is not None]
            for n in present:
                self.d.wait_for(lambda n=n: self.d.metric("bwgov_unit_ticks_total", n, 0) >= 3, 20,
                                f"3 ticks of {n}")
        return self

    def stop(self):
        rc = None
        if self.d and self.d.proc and self.d.proc.poll() is None:
            self.d.signal(15)
            try:
                rc = self.d.wait(10)
            except Exception:
                self.d.proc.kill()
                self.d.wait()
        return rc

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def alive(self):
        return self.d.proc.poll() is None

    def logtext(self):
        return self.d.logtext()

    def metric_ticks(self):
        return self.d.metric("bwgov_ticks_total", None, 0)

    def __enter__(self):
        return self.start()

    def __exit__(self, *a):
        self.cleanup()


class RawClient:
    """A varlink connection on a plain socket: send dicts or raw bytes,
    receive NUL-terminated replies."""

    def __init__(self, path, timeout=None):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # BWGOV_VARLINK_TIMEOUT: longer, for a bwgovd under valgrind
        # (scripts/memcheck-daemon).
        self.s.settimeout(timeout or float(os.environ.get("BWGOV_VARLINK_TIMEOUT", 10)))
        self.s.connect(path)
        self.buf = b""

    def send(self, msg):
        if isinstance(msg, dict):
            msg = json.dumps(msg).encode() + b"\0"
        self.s.sendall(msg)

    def recv(self):
        """The next reply as a dict, or None when the daemon closed the
        connection."""
        while b"\0" not in self.buf:
            try:
                chunk = self.s.recv(1 << 20)
            except (ConnectionResetError, BrokenPipeError):
                chunk = b""
            if not chunk:
                return None
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, **extra):
        m = {"method": method}
        if params is not None:
            m["parameters"] = params
        m.update(extra)
        self.send(m)
        return self.recv()

    def closed(self, timeout=5):
        """True when the daemon closes the connection within timeout (any
        pending replies are read and dropped)."""
        self.s.settimeout(timeout)
        try:
            while True:
                chunk = self.s.recv(1 << 20)
                if not chunk:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def close(self):
        self.s.close()


def call(path, method, params=None):
    c = RawClient(path)
    try:
        return c.call(method, params)
    finally:
        c.close()


def ticks(path):
    r = call(path, INTERFACE + ".GetStatus")
    return r["parameters"]["ticks"]


def wait_ticks_advance(path, start, n=5, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        t = ticks(path)
        if t >= start + n:
            return t
        time.sleep(0.05)
    raise AssertionError(f"ticks stuck at {ticks(path)} (started at {start})")


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


def pypi_venv(venv, requirement, probe, index_url):
    """The python of a venv with REQUIREMENT from PyPI, kept at VENV (made
    once; PROBE is the import that says it is whole). Skips (77) only when PyPI does not answer INDEX_URL; a venv
    that cannot be made, or an install that fails while PyPI answers, fails
    (exit 1)."""
    import subprocess
    import urllib.request

    py = os.path.join(venv, "bin", "python")
    if os.path.exists(py) and subprocess.run([py, "-c", probe], capture_output=True).returncode == 0:
        return py
    r = subprocess.run([sys.executable, "-m", "venv", "--clear", venv], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: cannot create a venv (Debian: apt-get install python3-venv):\n{r.stdout}{r.stderr}")
        sys.exit(1)
    r = subprocess.run([py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q", requirement],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        try:
            urllib.request.urlopen(index_url, timeout=20).read(1)
        except Exception as e:
            skip(f"PyPI unreachable ({e}); pip said:\n{r.stderr[-2000:]}")
        print(f"FAIL: pip install {requirement} failed although PyPI answers:\n{r.stdout}{r.stderr}")
        sys.exit(1)
    return py
