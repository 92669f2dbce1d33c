#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Golden tests of bwgovctl's daemon commands: human and --json output of
status, show, explain, history, reload, pause and resume against the real
bwgovd on a static fixture tree, the error messages and exit codes, colour
only on a terminal (and never with NO_COLOR), and that every member of the
--json output is documented in docs/bwgovctl-json.md.

Volatile values (pid, uptime, tick counts, times, the temporary directory)
are normalised here, not in the program. Golden files live in
tests/fixtures/ctl/; run with BWGOV_UPDATE_GOLDEN=1 to rewrite them. No root.
"""
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import varlink_common as vc  # noqa: E402

GOLDEN = os.path.join(os.environ.get("BWGOV_FIXTURES") or os.path.join(vc.SOURCE_ROOT, "tests/fixtures"), "ctl")
DOC = os.path.join(vc.SOURCE_ROOT, "docs/bwgovctl-json.md")
UPDATE = os.environ.get("BWGOV_UPDATE_GOLDEN") == "1"

# Keys whose values change from run to run, in --json output.
VOLATILE_JSON = {"pid", "uptime_usec", "ticks", "realtime_usec", "dt_usec", "bandwidth_root",
                 # How many decisions were recorded depends on the timing of
                 # the first ticks (a "reset" entry can appear at startup).
                 "history_entries", "recorded"}


def check_volatile(v, path="$"):
    """The values normalised away must still have their types."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k in VOLATILE_JSON:
                want = str if k == "bandwidth_root" else int
                assert isinstance(x, want) and not isinstance(x, bool), f"{path}.{k}: {x!r}"
                assert want is str or x >= 0, f"{path}.{k}: {x!r}"
            else:
                check_volatile(x, f"{path}.{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            check_volatile(x, f"{path}[{i}]")


def normalise_json(v):
    if isinstance(v, dict):
        return {k: (f"<{k}>" if k in VOLATILE_JSON else normalise_json(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [normalise_json(x) for x in v]
    return v


def normalise_text(text, base):
    text = text.replace(base, "<BASE>")
    rules = [
        (r"pid \d+, up [^,]+, \d+ ticks", "pid <PID>, up <UPTIME>, <N> ticks"),
        (r"(Last rule: [^,]+), \d+ decisions", r"\1, <N> decisions"),
        (r"History: \d+ of", "History: <N> of"),
        (r"(\d+) shown; \d+ held \(room for (\d+)\), \d+ recorded", r"\1 shown; <N> held (room for \2), <N> recorded"),
        (r"\b(steady|prime|unlimited|[a-z-]+), [0-9.]+(ms|s|min \d+s) ago", r"\1, <AGO> ago"),
        (r"over the last [0-9.]+(ms|s):", "over the last <DT>:"),
        (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "<TIME>".ljust(19)),     # keeps the columns aligned
    ]
    for pat, rep in rules:
        text = re.sub(pat, rep, text)
    return text


def json_keys(v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            json_keys(x, out)
    elif isinstance(v, list):
        for x in v:
            json_keys(x, out)
    return out


class CtlGolden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for p in (vc.BWGOVD, vc.BWGOVCTL):
            if not os.path.exists(p):
                vc.skip(f"{p} not built")
        cls.daemon = vc.StaticDaemon().start()
        cls.base = cls.daemon.base
        cls.socket = cls.daemon.socket_path
        cls.failures = []

    @classmethod
    def tearDownClass(cls):
        rc = cls.daemon.stop()
        log = cls.daemon.logtext()
        cls.daemon.cleanup()
        if rc != 0:
            print(log[-4000:], file=sys.stderr)
        assert rc == 0, f"bwgovd exited with {rc}"

    def run_ctl(self, args, env=None, socket=True, unset=()):
        e = dict(os.environ)
        e.pop("BWGOV_SOCKET", None)
        e["NO_COLOR"] = "1"
        e["TZ"] = "UTC"
        e.update(env or {})
        for k in unset:
            e.pop(k, None)
        argv = [vc.BWGOVCTL] + args + ([f"--socket={self.socket}"] if socket else [])
        p = subprocess.run(argv, capture_output=True, text=True, env=e, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def golden(self, name, args, rc=0, socket=True):
        code, out, err = self.run_ctl(args, socket=socket)
        self.assertEqual(code, rc, f"bwgovctl {' '.join(args)}: exit {code}, expected {rc}\n{err}")
        if "--json" in args and rc == 0:
            parsed = json.loads(out)          # must parse
            self.assertEqual(err, "")
            check_volatile(parsed)
            text = json.dumps(normalise_json(parsed), indent=2) + "\n"
        else:
            text = normalise_text(out, self.base)
            if err or rc != 0:
                text += "--- stderr\n" + normalise_text(err, self.base)
            text = f"$ bwgovctl {' '.join(args)}\n--- exit {code}\n" + text
        path = os.path.join(GOLDEN, name)
        if UPDATE:
            os.makedirs(GOLDEN, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            return out
        with open(path) as f:
            expected = f.read()
        self.assertEqual(text, expected, f"{name} differs from {path}")
        return out

    # One test method so the order (pause before status, ...) is fixed.
    def test_golden(self):
        g = self.golden
        g("status.txt", ["status"])
        g("status.json", ["status", "--json"])
        g("status-no-legend.txt", ["status", "--no-legend"])
        g("show-app.txt", ["show", "app.slice"])
        g("show-app.json", ["show", "app.slice", "--json"])
        g("show-db.txt", ["show", "db.slice"])
        g("show-gone.txt", ["show", "gone.slice"])
        g("show-gone.json", ["show", "gone.slice", "--json"])
        g("explain-app.txt", ["explain", "app.slice"])
        g("explain-app.json", ["explain", "app.slice", "--json"])
        g("explain-db.txt", ["explain", "db.slice"])
        g("explain-web.txt", ["explain", "web.slice"])
        g("explain-gone.txt", ["explain", "gone.slice"])
        g("explain-gone.json", ["explain", "gone.slice", "--json"])
        g("history-app.txt", ["history", "app.slice", "-n", "1"])
        g("history-app.json", ["history", "app.slice", "--lines=1", "--json"])
        g("history-web-n1.txt", ["history", "web.slice", "-n", "1", "--no-legend"])
        g("history-gone.txt", ["history", "gone.slice"])
        g("pause-app.txt", ["pause", "app.slice"])
        g("pause-app-again.json", ["pause", "app.slice", "--json"])
        # A paused unit is still observed: its next decisions say what the
        # law would do from the baseline the pause restored.
        self.daemon.d.wait_ticks("app.slice", 2)
        g("status-paused.txt", ["status", "--no-legend"])
        g("explain-paused.txt", ["explain", "app.slice"])
        g("resume-app.txt", ["resume", "app.slice"])
        g("resume-app-again.txt", ["resume", "app.slice"])
        g("reload.txt", ["reload"])
        g("reload.json", ["reload", "--json"])
        # Errors: exit codes and messages.
        g("error-no-unit.txt", ["show", "nope.slice"], rc=4)
        g("error-no-unit-json.txt", ["explain", "nope.slice", "--json"], rc=4)
        g("error-pause-no-unit.txt", ["pause", "nope.slice"], rc=4)
        g("error-not-running.txt", ["status", "--socket=/nonexistent/io.bwgov.Governor"], rc=3, socket=False)
        g("error-usage-extra.txt", ["status", "extra"], rc=2)
        g("error-usage-no-unit.txt", ["show"], rc=2)
        g("error-usage-two-units.txt", ["show", "a", "b"], rc=2)
        g("error-usage-lines.txt", ["history", "app.slice", "-n", "0"], rc=2)
        g("error-usage-option.txt", ["status", "--bogus"], rc=2)
        g("error-usage-lines-elsewhere.txt", ["show", "app.slice", "-n", "3"], rc=2)

    def test_history_whole(self):
        # Oldest first, from the first sample to the steady state; the same
        # entries in both formats.
        code, out, err = self.run_ctl(["history", "app.slice", "--json"])
        self.assertEqual(code, 0, err)
        h = json.loads(out)
        rules = [e["rule"] for e in h["entries"]]
        self.assertEqual(rules[0], "prime")
        # The first ticks may come close together ("too-soon", "reset"); a
        # pause restores the baseline and the resume raises the headroom again.
        self.assertLessEqual(set(rules), {"prime", "reset", "too-soon", "steady", "headroom-raise"})
        self.assertIn(rules[-1], {"steady", "headroom-raise"})
        self.assertEqual(len(rules), min(h["recorded"], h["capacity"]))
        times = [e["realtime_usec"] for e in h["entries"]]
        self.assertEqual(times, sorted(times))
        code, out, err = self.run_ctl(["history", "app.slice", "--no-legend"])
        self.assertEqual(code, 0, err)
        # The daemon keeps ticking: a decision may be recorded between the
        # calls, so later calls see at least the same entries.
        self.assertEqual([line.split()[2] for line in out.splitlines()][:len(rules)], rules)
        code, out, err = self.run_ctl(["history", "app.slice"])
        m = re.search(r"\n(\d+) shown; \1 held \(room for 256\), \1 recorded", out)
        self.assertIsNotNone(m, out)
        self.assertGreaterEqual(int(m.group(1)), len(rules))

    def test_reload_failure(self):
        bad = os.path.join(self.base, "conf", "app.slice.d", "20-bad.conf")
        with open(bad, "w") as f:
            f.write("[Bandwidth]\nCPUQuotaMax=lots\n")
        try:
            code, out, err = self.run_ctl(["reload"])
            self.assertEqual(code, 1, err)
            self.assertEqual(out, "")
            # Where and why, not "see the daemon's log" (issue 17, finding 7).
            self.assertEqual(err, f"bwgovctl: reload failed: {bad}:2: CPUQuotaMax: expected a CPU percentage "
                             "like 400%; the previous configuration stays\n")
            self.assertRegex(self.daemon.logtext(), re.escape(bad) + r":2\b")
            code, out, err = self.run_ctl(["reload", "--json"])
            self.assertEqual(code, 1, err)
            self.assertEqual(json.loads(out), {"error": "io.bwgov.Governor.ReloadFailed",
                                               "reason": f"{bad}:2: CPUQuotaMax: expected a CPU percentage like 400%",
                                               "file": bad, "line": 2, "key": "CPUQuotaMax",
                                               "message": "expected a CPU percentage like 400%"})
        finally:
            os.unlink(bad)
        code, out, err = self.run_ctl(["reload", "--json"])
        self.assertEqual(code, 0, err)
        self.assertEqual(set(json.loads(out)), {"reloads", "units"})

    def test_help_and_version(self):
        code, out, _ = self.run_ctl(["--help"], socket=False)
        self.assertEqual(code, 0)
        for verb in ("status", "show", "explain", "history", "latency", "check-kernel", "reload", "pause", "resume"):
            self.assertRegex(out, rf"(?m)^  {verb}\b")
        self.assertIn("3 bwgovd not running", out)
        for verb in ("status", "show", "explain", "history", "latency", "reload", "pause", "resume"):
            code, out, _ = self.run_ctl([verb, "--help"], socket=False)
            self.assertEqual(code, 0)
            self.assertIn(f"Usage: bwgovctl {verb}", out)
            self.assertIn("--json", out)
            self.assertIn("--socket=PATH", out)
            self.assertIn("Exit status", out)
        code, out, _ = self.run_ctl(["--version"], socket=False)
        self.assertEqual(code, 0)
        self.assertRegex(out, r"^bwgovctl \d+\.\d+")

    def test_socket_from_environment(self):
        code, out, err = self.run_ctl(["status", "--no-legend"], env={"BWGOV_SOCKET": self.socket}, socket=False)
        self.assertEqual(code, 0, err)
        self.assertIn("app.slice", out)
        code, out, err = self.run_ctl(["status"], env={"BWGOV_SOCKET": "/nonexistent/x"}, socket=False)
        self.assertEqual(code, 3)
        self.assertEqual(err, "bwgovd is not running (cannot connect to /nonexistent/x: No such file or directory)\n")

    def run_on_tty(self, args, env):
        """Run bwgovctl with stdout on a pseudo-terminal; returns its output."""
        master, slave = pty.openpty()
        e = dict(os.environ)
        e.pop("NO_COLOR", None)
        e["TERM"] = "xterm"
        e.update(env)
        p = subprocess.Popen([vc.BWGOVCTL] + args + [f"--socket={self.socket}"], stdout=slave,
                             stderr=subprocess.DEVNULL, env=e)
        os.close(slave)
        out = b""
        while True:
            r, _, _ = select.select([master], [], [], 10)
            if not r:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        self.assertEqual(p.wait(10), 0)
        return out.decode()

    def test_colour_only_on_a_terminal(self):
        for args in (["status"], ["show", "app.slice"], ["history", "app.slice"]):
            self.assertIn("\033[", self.run_on_tty(args, {}), f"{args}: no colour on a terminal")
            self.assertNotIn("\033[", self.run_on_tty(args, {"NO_COLOR": "1"}), f"{args}: colour with NO_COLOR")
            self.assertNotIn("\033[", self.run_on_tty(args, {"TERM": "dumb"}), f"{args}: colour with TERM=dumb")
            code, out, _ = self.run_ctl(args, env={"TERM": "xterm"}, unset=("NO_COLOR",))
            self.assertNotIn("\033[", out, f"{args}: colour into a pipe")
        # --json never has colour, even on a terminal.
        self.assertNotIn("\033[", self.run_on_tty(["status", "--json"], {}))

    def test_json_members_are_documented(self):
        with open(DOC) as f:
            doc = f.read()
        keys = set()
        for args in (["status"], ["show", "app.slice"], ["show", "gone.slice"], ["explain", "app.slice"],
                     ["history", "app.slice"], ["pause", "db.slice"], ["resume", "db.slice"], ["reload"]):
            code, out, err = self.run_ctl(args + ["--json"])
            self.assertEqual(code, 0, err)
            keys |= json_keys(json.loads(out), set())
        missing = sorted(k for k in keys if not re.search(rf"\b{re.escape(k)}\b", doc))
        self.assertEqual(missing, [], f"members of --json output not in {DOC}")


class CtlLive(vc.df.DaemonTest):
    """What the golden tree cannot show: credit spent and the headroom
    stepping down in the history, an observed decision that is not written.
    Uses daemon_fixture's simulated kernel; checks the human output by
    pattern."""
    units = {
        "app.slice": dict(quota=50000, burst=50000, conf="CreditMax=1s\nCPUQuotaMax=150%\n"),
        "obs.slice": dict(quota=50000, burst=50000, conf="Mode=observe\n"),
    }

    def ctl(self, *args):
        sock = os.path.join(self.base, "run", vc.INTERFACE)
        p = subprocess.run([vc.BWGOVCTL, *args, f"--socket={sock}"], capture_output=True, text=True,
                           env=dict(os.environ, NO_COLOR="1", TZ="UTC"), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_credit_explained(self):
        if not os.path.exists(vc.BWGOVCTL):
            self.skipTest("bwgovctl not built")
        self.d.wait_for(lambda: self.quota("app.slice") == 150000, 20, "the resting headroom")
        self.d.wait_ticks("app.slice", 3)
        self.d.wait_ticks("obs.slice", 3)
        out = self.ctl("status", "--no-legend")
        self.assertRegex(out, r"(?m)^app\.slice\s+resting\s+elastic\s+1\.50 CPU \(150%\)\s+0\.50 CPU \(50%\)")
        show = self.ctl("show", "app.slice")
        self.assertRegex(show, r"State: resting, mode elastic")
        self.assertRegex(show, r"Headroom: 1\.00 CPU above the baseline \(level 4 of 4; up to 1\.00 CPU now\), idle")

        # Spend the credit: three times the baseline.
        self.demand("app.slice", 1.5)
        self.d.wait_for(lambda: self.quota("app.slice") == 50000, 30, "the credit spent")
        hist = json.loads(self.ctl("history", "app.slice", "--json"))
        lowered = [e for e in hist["entries"] if e["applied"] and (e["new"]["quota_usec"] or 0) < e["old"]["quota_usec"]]
        self.assertTrue(lowered, hist)
        self.assertEqual(lowered[-1]["rule"], "credit-exhausted")
        e = lowered[-1]
        out = self.ctl("history", "app.slice", "--no-legend")
        self.assertRegex(out, rf"(?m){re.escape(e['rule'])}\s+\d\.\d\d CPU \(\d+(\.\d)?%\) -> 0\.50 CPU \(50%\).*\byes$")
        out = self.ctl("status", "--no-legend")
        self.assertRegex(out, r"(?m)^app\.slice\s+exhausted\s+elastic\s+0\.50 CPU \(50%\)")
        ex = self.ctl("explain", "app.slice")
        self.assertRegex(ex, r"spending \d\.\d\d CPU \(active\)")
        show = json.loads(self.ctl("show", "app.slice", "--json"))
        self.assertTrue(show["credit"]["exhausted"])
        self.assertEqual(show["headroom"]["level"], 0)

        # The observed unit: the resting headroom decided, never written.
        hist = json.loads(self.ctl("history", "obs.slice", "--json"))
        self.assertTrue(any(x["new"]["quota_usec"] != x["old"]["quota_usec"] for x in hist["entries"]),
                        "observe never decided a change of quota")
        self.assertFalse(any(x["applied"] for x in hist["entries"]))
        self.assertEqual(self.quota("obs.slice"), 50000)
        ex = json.loads(self.ctl("explain", "obs.slice", "--json"))
        self.assertTrue(ex["decision"]["would_change"])
        self.assertFalse(ex["decision"]["applied"])
        self.assertIn("(not written: mode observe)", self.ctl("explain", "obs.slice"))


class CtlRestingBurstIsNoBoost(unittest.TestCase):
    """Issue 17, finding 9: a unit bwgov never raised, with only the resting
    burst in place (Mode=burst), is not called boosted; issue 30, finding 9:
    nor is an idle unit resting at its headroom (boosted means it uses the
    headroom: fault_matrix.py Boosted)."""

    def test_boosted(self):
        if not os.path.exists(vc.BWGOVD) or not os.path.exists(vc.BWGOVCTL):
            vc.skip("bwgovd or bwgovctl not built")
        units = {"b.slice": dict(quota=50000, burst=0, conf="Mode=burst\n"),
                 "e.slice": dict(quota=50000, burst=0, conf="")}
        with vc.StaticDaemon(units=units) as d:
            with open(os.path.join(d.base, "cg", "b.slice", "cpu.max.burst")) as f:
                self.assertNotEqual(f.read().strip(), "0", "no resting burst: the test shows nothing")
            p = subprocess.run([vc.BWGOVCTL, "status", "--json", f"--socket={d.socket_path}"],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            j = json.loads(p.stdout)
            boosted = {u["name"]: u["boosted"] for u in j["units"]}
            self.assertEqual(boosted, {"b.slice": False, "e.slice": False})
            self.assertEqual(j["n_boosted"], 0)


class CtlStateError(unittest.TestCase):
    """Issue 17, finding 4: with the state directory gone, status says that
    state cannot be saved (nothing is raised then) instead of looking
    normal, and a pause still puts the baseline back."""

    def test_state_error(self):
        if not os.path.exists(vc.BWGOVD) or not os.path.exists(vc.BWGOVCTL):
            vc.skip("bwgovd or bwgovctl not built")
        if os.geteuid() != 0:
            self.skipTest("pause needs root")
        units = {"e.slice": dict(quota=50000, burst=0, conf="")}
        with vc.StaticDaemon(units=units) as d:
            ctl = lambda *a: subprocess.run([vc.BWGOVCTL, *a, f"--socket={d.socket_path}"], capture_output=True,
                                            text=True, timeout=60, env=dict(os.environ, NO_COLOR="1"))
            self.assertIsNone(json.loads(ctl("status", "--json").stdout)["state_error"])
            shutil.rmtree(os.path.join(d.base, "state"))
            p = ctl("pause", "e.slice")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(d.base, "cg", "e.slice", "cpu.max")) as f:
                self.assertEqual(f.read().split()[0], "50000")
            j = json.loads(ctl("status", "--json").stdout)
            self.assertEqual(j["state_error"], "No such file or directory")
            self.assertIn("State:    cannot be saved (No such file or directory): no unit is raised",
                          ctl("status").stdout)


class CtlStatusLimit(unittest.TestCase):
    """More units than status lists without --all: the units doing something
    (here: absent) are listed whatever their names, the rest by name, and the
    legend and --json say how many were left out."""
    AT_REST, GONE = 100, 3

    @classmethod
    def setUpClass(cls):
        for p in (vc.BWGOVD, vc.BWGOVCTL):
            if not os.path.exists(p):
                vc.skip(f"{p} not built")
        units = {f"a{i:03d}.slice": dict(quota=50000, burst=50000, conf="") for i in range(cls.AT_REST)}
        units.update({f"zz{i}.slice": dict(quota=None, burst=0, conf="") for i in range(cls.GONE)})
        cls.daemon = vc.StaticDaemon(units=units).start()

    @classmethod
    def tearDownClass(cls):
        cls.daemon.cleanup()

    def ctl(self, *args, rc=0):
        p = subprocess.run([vc.BWGOVCTL, *args, f"--socket={self.daemon.socket_path}"], capture_output=True,
                           text=True, env=dict(os.environ, NO_COLOR="1"), timeout=60)
        self.assertEqual(p.returncode, rc, p.stderr)
        return p.stdout + p.stderr

    def test_limit(self):
        total = self.AT_REST + self.GONE
        rows = [ln.split()[0] for ln in self.ctl("status", "--no-legend").splitlines()]
        self.assertEqual(len(rows), 100)
        self.assertEqual(rows, sorted(rows))
        self.assertEqual(rows[-self.GONE:], [f"zz{i}.slice" for i in range(self.GONE)])
        self.assertEqual(rows[0], "a000.slice")
        self.assertIn(f"100 of {total} units listed", self.ctl("status"))

        j = json.loads(self.ctl("status", "--json"))
        self.assertEqual((len(j["units"]), j["units_total"]), (100, total))
        self.assertEqual([u["name"] for u in j["units"]], rows)

        for flag in ("--all", "-a"):
            rows = [ln.split()[0] for ln in self.ctl("status", "--no-legend", flag).splitlines()]
            self.assertEqual(len(rows), total)
        out = self.ctl("status", "--all")
        self.assertNotIn("units listed", out)
        j = json.loads(self.ctl("status", "--json", "--all"))
        self.assertEqual((len(j["units"]), j["units_total"]), (total, total))
        self.assertIn("history takes no --all", self.ctl("history", "a000.slice", "--all", rc=2))


if __name__ == "__main__":
    unittest.main(verbosity=2)
