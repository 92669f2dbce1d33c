#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""scripts/check-lib-tests on small trees built here: a clean one passes;
a module with neither a test of its name nor a row in tests/README.md, and
each kind of stale row, must be reported."""
import os
import shutil
import subprocess
import sys
import tempfile

CHECK = sys.argv[1]

MESON = "unit_tests = [\n        'fileio',\n        'config',\n]\n" \
        "test('governor-varlink', executable('test-governor-varlink', 'test-governor-varlink.c'))\n"
README = """# Tests

| Module | Covered by | How |
|---|---|---|
| `config-ini.c` | `unit/lib/test-config.c`, `fuzz/fuzz-config.c` | `bw_ini_parse_file()` through `bw_config_load()` |
"""
CLEAN = {
    "src/lib/util/fileio.c": "int bw_read_small_at(void) { return 0; }\n",
    "src/lib/config/config.c": "int bw_config_load(void) { return bw_ini_parse_file(); }\n",
    "src/lib/config/config-ini.c": "int bw_ini_parse_file(void) { return 0; }\n",
    "tests/unit/lib/meson.build": MESON,
    "tests/unit/lib/test-fileio.c": "int main(void) { return bw_read_small_at(); }\n",
    "tests/unit/lib/test-config.c": "int main(void) { return bw_config_load(); }\n",
    "tests/unit/daemon/test-governor-varlink.c": "int main(void) { return 0; }\n",
    "tests/fuzz/fuzz-config.c": "int f(void) { return bw_config_load(); }\n",
    "tests/README.md": README,
}


def run(files):
    d = tempfile.mkdtemp(prefix="bwgov-test-lib-tests-")
    try:
        for path, text in files.items():
            if text is None:
                continue
            p = os.path.join(d, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        p = subprocess.run([CHECK, d], capture_output=True, text=True)
    finally:
        shutil.rmtree(d)
    return p.returncode, p.stdout + p.stderr


failures = []
trees = 0


def expect(what, changes, needle):
    global trees
    trees += 1
    rc, out = run({**CLEAN, **changes})
    ok = rc == 0 and out == "" if needle is None else rc == 1 and needle in out
    if not ok:
        failures.append(f"{what}: exit {rc}, expected {'0' if needle is None else needle!r}\n{out}")


def row(text):
    return {"tests/README.md": README.replace(
        "| `config-ini.c` | `unit/lib/test-config.c`, `fuzz/fuzz-config.c` | `bw_ini_parse_file()` through `bw_config_load()` |",
        text)}


expect("clean tree", {}, None)
expect("a module with no test and no row", {"src/lib/law/rule.c": "int bw_rule(void) { return 0; }\n"},
       "src/lib/law/rule.c: no tests/unit/lib/test-rule.c and no row in tests/README.md's table")
expect("no tests/README.md", {"tests/README.md": None},
       "src/lib/config/config-ini.c: no tests/unit/lib/test-config-ini.c and no row")
expect("a test of its name that meson does not build", {"tests/unit/lib/meson.build": "unit_tests = []\n"},
       "src/lib/util/fileio.c: tests/unit/lib/test-fileio.c is not built by tests/unit/lib/meson.build")
expect("a row for a module that is gone", row("| `config-old.c` | `unit/lib/test-config.c` | |"),
       "tests/README.md:5: config-old.c is not a module of src/lib")
expect("a row naming a test that is gone", row("| `config-ini.c` | `unit/lib/test-ini.c` | |"),
       "tests/README.md:5: tests/unit/lib/test-ini.c does not exist")
expect("a row naming no test", row("| `config-ini.c` | the config tests | |"),
       "tests/README.md:5: the row of config-ini.c names no test file")
expect("a row naming a function that is gone",
       row("| `config-ini.c` | `unit/lib/test-config.c` | `bw_ini_parse()` through `bw_config_load()` |"),
       "tests/README.md:5: bw_ini_parse() is neither in src/lib/config/config-ini.c nor in the tests the row names")
expect("two rows for one module",
       row("| `config-ini.c` | `unit/lib/test-config.c` | |\n| `config-ini.c` | `unit/lib/test-config.c` | |"),
       "tests/README.md:6: a second row for config-ini.c (the first is line 5)")
expect("a row for a module with a test of its name", row("| `config-ini.c` | `unit/lib/test-config.c` | |\n"
                                                         "| `fileio.c` | `unit/lib/test-fileio.c` | |"), None)

for f in failures:
    print("FAIL:", f)
print(f"{trees - len(failures)} of {trees} trees as expected")
sys.exit(1 if failures else 0)
