#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The command lines as a newcomer meets them (issue 17, finding 10):
bwgovd --help names the paths this build uses (config.h), as its rendered
man pages do; every bwgovctl option that takes a value takes it as
--opt=VALUE and as --opt VALUE, before or after the verb, even a value
spelled like a verb; check-kernel's human output on this host fits 100
columns. No root.
"""
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import varlink_common as vc  # noqa: E402

BUILD_ROOT = os.environ.get("BWGOV_BUILD_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(vc.BWGOVD)))
FIXTURES = os.environ.get("BWGOV_FIXTURES") or os.path.join(vc.SOURCE_ROOT, "tests/fixtures")


def build_config():
    """The quoted #defines of the build's config.h."""
    with open(os.path.join(BUILD_ROOT, "config.h")) as f:
        return dict(re.findall(r'^#define (\w+) "([^"]*)"$', f.read(), re.M))


def run(argv, **kw):
    env = dict(os.environ, NO_COLOR="1", LC_ALL="C")
    env.pop("BWGOV_SOCKET", None)
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, **kw)


class Paths(unittest.TestCase):
    def test_bwgovd_help_names_this_builds_paths(self):
        conf = build_config()
        p = run([vc.BWGOVD, "--help"])
        self.assertEqual(p.returncode, 0, p.stderr)
        help_text = re.sub(r"\s+", " ", p.stdout)
        dirs = f"{conf['BWGOV_LIBDIR_CONF']}, {conf['BWGOV_RUNTIMEDIR']}, {conf['BWGOV_SYSCONFDIR']}"
        self.assertIn(f"(instead of {dirs})", help_text)
        self.assertIn(f"$STATE_DIRECTORY or {conf['BWGOV_STATEDIR']})", help_text)
        self.assertIn(f"$RUNTIME_DIRECTORY or {conf['BWGOV_RUNTIMEDIR']})", help_text)
        # The manifest it names is the one the kernel check uses.
        ck = run([vc.BWGOVCTL, "check-kernel", "--no-probe", "--json"])
        import json
        manifest = json.loads(ck.stdout)["manifest"]["path"]
        self.assertIn(f"Kernel patch manifest (default: {manifest})", help_text)
        ck = run([vc.BWGOVCTL, "check-kernel", "--help"])
        self.assertIn(f"(default: {manifest})", re.sub(r"\s+", " ", ck.stdout))
        # No other directory of bwgov's: nothing the build does not use.
        named = set(re.findall(r"(/[\w./-]*bwgov)\b", p.stdout))
        self.assertLessEqual(named, {conf["BWGOV_LIBDIR_CONF"], conf["BWGOV_RUNTIMEDIR"], conf["BWGOV_SYSCONFDIR"],
                                     conf["BWGOV_STATEDIR"]}, p.stdout)

    def test_rendered_man_pages_name_the_same_paths(self):
        conf = build_config()
        page = os.path.join(BUILD_ROOT, "man", "bwgov.conf.5")
        if not os.path.exists(page):
            self.skipTest(f"{page} not built (no scdoc)")
        with open(page) as f:
            text = f.read().replace("\\-", "-").replace("\\&", "")
        for key in ("BWGOV_SYSCONFDIR", "BWGOV_LIBDIR_CONF", "BWGOV_RUNTIMEDIR"):
            self.assertIn(conf[key] + "/bwgov.conf", text, key)


class CtlOptions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(vc.BWGOVD) or not os.path.exists(vc.BWGOVCTL):
            raise unittest.SkipTest("bwgovd or bwgovctl not built")
        cls.daemon = vc.StaticDaemon().start()
        cls.sock = cls.daemon.socket_path

    @classmethod
    def tearDownClass(cls):
        cls.daemon.cleanup()

    def ok(self, args, **kw):
        p = run([vc.BWGOVCTL] + args, **kw)
        self.assertEqual(p.returncode, 0, f"bwgovctl {' '.join(args)}: {p.stderr}")
        return p.stdout

    def test_socket_both_forms_both_places(self):
        for args in (["--socket=" + self.sock, "status"], ["--socket", self.sock, "status"],
                     ["status", "--socket=" + self.sock], ["status", "--socket", self.sock],
                     ["show", "app.slice", "--socket", self.sock], ["--socket", self.sock, "show", "app.slice"]):
            self.assertIn("app.slice", self.ok(args), args)

    def test_socket_without_a_daemon_verb(self):
        # Before a verb it is every verb's option: with --help, --version,
        # no verb at all or check-kernel (which ignores it), never
        # "unrecognized option".
        for args, code, text in ((["--socket=" + self.sock, "--help"], 0, "Usage: bwgovctl"),
                                 (["--socket", self.sock, "--version"], 0, "bwgovctl "),
                                 (["--socket=" + self.sock], 2, "bwgovctl: missing command"),
                                 (["--socket=" + self.sock, "check-kernel", "--no-probe"], 0, "Verdict:"),
                                 (["check-kernel", "--socket", self.sock, "--no-probe"], 0, "Verdict:")):
            p = run([vc.BWGOVCTL] + args)
            self.assertNotIn("unrecognized option", p.stderr, args)
            if "check-kernel" in args:
                self.assertIn(p.returncode, (0, 1), f"{args}: {p.stderr}")
            else:
                self.assertEqual(p.returncode, code, f"{args}: {p.stderr}")
            self.assertIn(text, p.stdout + p.stderr, args)

    def test_lines_all_forms(self):
        outs = {tuple(a): self.ok(["history", "app.slice", "--socket", self.sock] + a)
                for a in (["--lines=1"], ["--lines", "1"], ["-n", "1"], ["-n1"])}
        self.assertEqual(len(set(outs.values())), 1, outs)
        self.assertEqual(len(self.ok(["history", "app.slice", "--no-legend", "-n", "1",
                                      "--socket", self.sock]).splitlines()), 1)

    def test_value_spelled_like_a_verb(self):
        # A socket path that is a verb's name ("pause", in the current
        # directory) is the value of --socket, not the verb.
        d = os.path.join(self.daemon.base, "cwd")
        os.makedirs(d, exist_ok=True)
        os.symlink(self.sock, os.path.join(d, "pause"))
        self.assertIn("app.slice", self.ok(["--socket", "pause", "status"], cwd=d))
        self.assertIn("app.slice", self.ok(["--socket", "pause", "show", "app.slice"], cwd=d))

    def test_check_kernel_both_forms(self):
        m = os.path.join(FIXTURES, "kcheck/manifest/manifest.json")
        cg = os.path.join(FIXTURES, "kcheck/hybrid")
        host = os.path.join(FIXTURES, "kcheck/host-debian61")
        outs = set()
        for args in (["--manifest=" + m, "--cgroup-root=" + cg, "--host-root=" + host],
                     ["--manifest", m, "--cgroup-root", cg, "--host-root", host]):
            p = run([vc.BWGOVCTL, "check-kernel", "--no-probe"] + args)
            self.assertEqual(p.returncode, 0, p.stderr)
            outs.add(p.stdout)
            p = run([vc.BWGOVCTL] + args + ["check-kernel", "--no-probe"])
            self.assertEqual(p.returncode, 0, p.stderr)
            outs.add(p.stdout)
        self.assertEqual(len(outs), 1)


class CheckKernelWidth(unittest.TestCase):
    def test_this_host_fits_100_columns(self):
        p = run([vc.BWGOVCTL, "check-kernel", "--no-probe"])
        self.assertIn(p.returncode, (0, 1, 2), p.stderr)
        wide = [line for line in p.stdout.splitlines() if len(line) > 100]
        self.assertEqual(wide, [])
        self.assertIn("ITEM", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
