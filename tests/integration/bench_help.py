#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every option of the bench tools says what it does (issue 17, finding 10):
each argparse option of the Python scripts under tests/bench has a help
text, and every long option in a bench program's getopt table appears in
its --help with a description on the same line. No root; nothing is run
beyond argument parsing and --help.
"""
import argparse
import io
import os
import re
import runpy
import subprocess
import sys
import unittest
from contextlib import redirect_stderr, redirect_stdout

SOURCE_ROOT = os.environ.get("BWGOV_SOURCE_ROOT") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD_ROOT = os.environ.get("BWGOV_BUILD_ROOT", os.path.join(SOURCE_ROOT, "build"))
BENCH = os.path.join(SOURCE_ROOT, "tests", "bench")


class Captured(Exception):
    pass


def python_tools():
    """The bench's command-line scripts: those that parse arguments."""
    out = []
    for d, _, files in os.walk(BENCH):
        for f in sorted(files):
            p = os.path.join(d, f)
            if not (f.endswith(".py") or f == "run"):
                continue
            with open(p, encoding="utf-8") as fh:
                text = fh.read()
            if "ArgumentParser(" in text and "__main__" in text:
                out.append(p)
    return out


def parsers_of(script):
    """The parsers script builds, caught at its parse_args() (nothing after
    it runs)."""
    seen = []
    real = argparse.ArgumentParser.parse_known_args

    def catch(self, args=None, namespace=None):
        seen.append(self)
        raise Captured()

    argparse.ArgumentParser.parse_known_args = catch
    saved = sys.argv, list(sys.path)
    try:
        sys.argv = [script]
        sys.path.insert(0, os.path.dirname(script))
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            runpy.run_path(script, run_name="__main__")
    except Captured:
        pass
    finally:
        argparse.ArgumentParser.parse_known_args = real
        sys.argv, sys.path[:] = saved[0], saved[1]
    return seen


def undocumented(parser, prefix=""):
    missing = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                missing += undocumented(sub, f"{prefix}{name} ")
            for c in a._choices_actions:
                if not c.help:
                    missing.append(f"{prefix}{c.dest} (subcommand)")
        elif a.option_strings and not a.help:
            missing.append(prefix + "/".join(a.option_strings))
    return missing


def c_programs():
    """name -> the long options of its getopt table."""
    out = {}
    for f in sorted(os.listdir(BENCH)):
        if not f.endswith(".c") or f == "bench-util.c":
            continue
        with open(os.path.join(BENCH, f), encoding="utf-8") as fh:
            text = fh.read()
        m = re.search(r"struct option options\[\] = \{(.*?)\n\s*\};", text, re.S)
        if m:
            out[f[:-2]] = re.findall(r'\{\s*"([a-z0-9-]+)"', m.group(1))
    return out


class BenchHelp(unittest.TestCase):
    def test_python_options_have_help(self):
        tools = python_tools()
        self.assertGreaterEqual(len(tools), 5, tools)
        for script in tools:
            with self.subTest(script=os.path.relpath(script, SOURCE_ROOT)):
                parsers = parsers_of(script)
                self.assertTrue(parsers, "no parser reached")
                for p in parsers:
                    self.assertEqual(undocumented(p), [])

    def test_c_options_in_help(self):
        progs = c_programs()
        self.assertGreaterEqual(len(progs), 8, progs)
        for name, longs in progs.items():
            with self.subTest(program=name):
                exe = os.path.join(BUILD_ROOT, "tests", "bench", name)
                if not os.path.exists(exe):
                    self.skipTest(f"{exe} not built")
                p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=10)
                self.assertEqual(p.returncode, 0, p.stderr)
                for opt in longs:
                    # "--name" or "--name=ARG" on an option line, then a description.
                    self.assertRegex(p.stdout, rf"(?m)^\s+(-\w )?--{re.escape(opt)}(=\S+)?\s+\S",
                                     f"--{opt} without a description in {name} --help")


if __name__ == "__main__":
    unittest.main(verbosity=2)
