#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""scripts/check-layout on small trees built here: a clean one passes, and
each rule it enforces is broken once and must be reported."""
import os
import subprocess
import sys
import tempfile

CHECK = sys.argv[1]


def tree(files):
    d = tempfile.mkdtemp(prefix="bwgov-test-layout-")
    for path, text in files.items():
        p = os.path.join(d, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    return d


def with_headers(files):
    """FILES and, for each .c of src/lib or src/daemon (but main.c) with no
    header of its name, an empty one beside it: the trees here test other rules."""
    out = dict(files)
    for path in files:
        stem, ext = os.path.splitext(path)
        public = "include/bwgov/" + stem[len("src/lib/"):] + ".h" if stem.startswith("src/lib/") else None
        if ext == ".c" and path.startswith(("src/lib/", "src/daemon/")) and not path.endswith("/main.c") \
                and stem + ".h" not in files and public not in files:
            out[stem + ".h"] = "#pragma once\n"
    return out


def run(files):
    d = tree(files)
    p = subprocess.run([CHECK, d], capture_output=True, text=True)
    subprocess.run(["rm", "-rf", d], check=True)
    return p.returncode, p.stdout


def function(name, body_lines):
    return f"int {name}(int a,\n                int b) {{\n" + "        a++;\n" * body_lines + "        return a + b;\n}\n"


CLEAN = {
    "include/bwgov/util/util.h": "#pragma once\nint util(void);\n",
    "src/lib/util/util.c": '#include "bwgov/util/util.h"\n' + function("util", 10),
    "src/daemon/a.h": "#pragma once\n",
    "src/daemon/a.c": '#include "a.h"\n#include "b.h"\n#include "bwgov/util/util.h"\n',
    "src/daemon/b.h": "#pragma once\n",
    "src/daemon/b.c": '#include "b.h"\n/* a comment with { and " in it */\nstatic const char *s = "}";\n',
    # the unit module writes its fields; others read them, or write what is not a Unit's
    "src/daemon/unit/unit.h": "#pragma once\ntypedef struct Unit Unit;\n",
    "src/daemon/unit/unit-sample.c": "void f(Unit *u) {\n        u->quiet = 1;\n        u->n++;\n}\n",
    "src/daemon/c.c": "int g(const Unit *u, struct other *o) {\n        o->n = u->n;\n        /* u->n = 2; */\n"
                      "        return u->n == 1 || u->n <= 2 || u->n >= 3 || u->n != 4;\n}\n",
}

failures = []


def expect(what, files, needle, bare=False):
    rc, out = run(files if bare else with_headers(files))
    if needle is None:
        ok = rc == 0
    else:
        ok = rc == 1 and needle in out
    print(f"{'ok' if ok else 'FAIL'}: {what}")
    if not ok:
        print(out)
        failures.append(what)


expect("a clean tree passes", CLEAN, None)
expect("an include cycle of two headers is found", {**CLEAN, "src/daemon/b.h": '#pragma once\n#include "a.h"\n',
                                                   "src/daemon/a.h": '#pragma once\n#include "b.h"\n'},
       "include cycle: src/daemon/a.h -> src/daemon/b.h -> src/daemon/a.h")
expect("an include cycle of three headers is found",
       {**CLEAN, "src/daemon/b.h": '#pragma once\n#include "c.h"\n', "src/daemon/c.h": '#pragma once\n#include "a.h"\n',
        "src/daemon/a.h": '#pragma once\n#include "b.h"\n'}, "include cycle:")
expect("a parent including its split-off file's header, which includes the parent's, passes",
       {**CLEAN, "src/daemon/b.c": '#include "b.h"\n#include "a.h"\n', "src/daemon/a.h": '#pragma once\n#include "b.h"\n'},
       None)
expect("the core including a daemon header is found",
       {**CLEAN, "src/lib/util/util.c": '#include "a.h"\n'}, "the core library includes a.h")
expect("a function of 121 lines is found", {**CLEAN, "src/lib/util/util.c": function("longfn", 117)},
       "function longfn has 121 lines")
expect("a function of 120 lines passes", {**CLEAN, "src/lib/util/util.c": function("okfn", 116)}, None)
expect("a file of 801 lines is found", {**CLEAN, "src/daemon/b.c": "int x;\n" * 801}, "801 lines")
expect("a line of 121 columns is found", {**CLEAN, "include/bwgov/util/util.h": "/*" + "x" * 117 + "*/\n"},
       "121 columns")
expect("a tab counts to the next multiple of 8", {**CLEAN, "src/lib/util/util.c": "\t" * 15 + "x\n"}, "121 columns")

for what, text, field in (
        ("through a Unit * variable", "void k(Unit *u) {\n        u->quota_usec = 1;\n}\n", "quota_usec"),
        ("a nested field", "void k(Unit *const u) {\n        u->lv.cpu_weight.value += 2;\n}\n", "lv"),
        ("an increment", "void k(struct Unit *u) {\n        ++u->ticks;\n}\n", "ticks"),
        ("a post-decrement", "void k(Unit *v) {\n        v->ticks--;\n}\n", "ticks"),
        ("an element of units[]", "void k(Manager *m) {\n        m->units[0]->paused = true;\n}\n", "paused"),
        ("a (Unit *) cast", "void k(void *o) {\n        ((Unit *) o)->outermost = 0;\n}\n", "outermost"),
        ("a Unit ** dereferenced", "void k(Unit **p) {\n        (*p)->paused = 1;\n}\n", "paused"),
        ("a struct's Unit * member", "struct mb { Unit *u; };\nvoid k(struct mb *it) {\n        it->u->paused = 1;\n}\n",
         "paused")):
    expect(f"a Unit's field written outside the unit module is found: {what}",
           {**CLEAN, "src/daemon/c.c": text}, f"assigns the field {field} of a Unit")
expect("a Unit's field written in manager.c is found too",
       {**CLEAN, "src/daemon/manager/manager.c": "void h(Manager *m, size_t i) {\n        m->units[i]->stop.restore_again |= 1;\n}\n"},
       "assigns the field stop of a Unit")


def fn(name, calls=(), static=False):
    """A function NAME at column 0 calling each of CALLS."""
    return ("static " if static else "") + f"int {name}(void) {{\n" + \
        "".join(f"        (void) {c}();\n" for c in calls) + "        return 0;\n}\n"


expect("a call cycle of two files is found",
       {**CLEAN, "src/daemon/p.c": fn("p_one") + fn("p_two", ["q_one"]),
        "src/daemon/q.c": fn("q_one", ["p_one"])},
       "call cycle: src/daemon/p.c -> src/daemon/q.c -> src/daemon/p.c: src/daemon/p.c:5 calls q_one(), "
       "src/daemon/q.c:2 calls p_one()")
expect("a call cycle of three files is found",
       {**CLEAN, "src/lib/util/p.c": fn("p_one", ["q_one"]), "src/lib/util/q.c": fn("q_one", ["r_one"]),
        "src/lib/util/r.c": "/* r */\n" + fn("r_one", ["p_one"])},
       "call cycle: src/lib/util/p.c -> src/lib/util/q.c -> src/lib/util/r.c -> src/lib/util/p.c")
expect("a call cycle through a lib function named like a daemon one is found in the daemon",
       {**CLEAN, "src/daemon/p.c": fn("p_one", ["shared"]), "src/daemon/q.c": fn("shared", ["p_one"]),
        "src/lib/util/shared.c": fn("shared")},
       "call cycle: src/daemon/p.c -> src/daemon/q.c -> src/daemon/p.c")
ONE_WAY = {
    **CLEAN,
    # p calls q; q calls its own functions, one named like a static of p (a header's static inline,
    # say), and through pointers
    "src/daemon/p.c": fn("helper", static=True) + fn("p_hidden", static=True) +
                      fn("p_one", ["q_one", "helper", "p_hidden"]) + fn("p_two") +
                      "_printf_(1, 2) int p_log(const char *fmt, ...) {\n        return q_two();\n}\n",
    "src/daemon/q.c": "static int v(const char *f, ...) _printf_(1, 2);\n" + fn("helper", static=True) +
                      fn("q_one", ["helper"]) + fn("q_two", ["p_hidden"]) +
                      "int q_three(struct ops *o, struct ops s) {\n        /* p_one() */\n"
                      "        const char *t = \"p_one()\";\n        return o->p_one() + s.p_one() + !t;\n}\n",
    # the CLI defines a function named like a daemon one and calls one only the daemon has: two binaries
    "src/ctl/y.c": fn("q_one", ["p_two"]),
}
expect("one-way calls, statics of one name in two files, calls through pointers, another binary pass", ONE_WAY, None)

UNIT_CIRCLE = ["unit.c", "unit-intent.c", "unit-resolve.c", "unit-sample.c", "unit-scope.c"]


def ring(names, extra=None):
    """src/daemon/NAMES, each calling the next and the last the first."""
    files = {}
    for i, n in enumerate(names):
        me, to = n[:-2].replace("-", "_"), names[(i + 1) % len(names)][:-2].replace("-", "_")
        files[f"src/daemon/unit/{n}"] = fn(me + "_fn", [to + "_fn"] if extra is None or i < len(names) - 1 else [extra])
    return files


expect("the unit files' call circle of before is found",
       {**CLEAN, **ring(UNIT_CIRCLE)}, "call cycle: src/daemon/unit/unit-intent.c -> src/daemon/unit/unit-resolve.c")
expect("a call circle through a file of its own is found",
       {**CLEAN, **ring(UNIT_CIRCLE, "c_fn"), "src/daemon/c.c": fn("c_fn", ["unit_fn"])},
       "call cycle: src/daemon/c.c -> src/daemon/unit/unit.c")


def unit_struct(n):
    """src/daemon/unit/unit-types.h with a struct Unit of N top-level fields, two of
    them nested structs with fields of their own, and a comment with a ";"."""
    body = "        struct { int a; int b; } said;\n        union { int c; long d; } u;\n"
    body += "".join(f"        int f{i};      /* x; y */\n" for i in range(n - 2))
    return "#pragma once\ntypedef struct Unit Unit;\nstruct Unit {\n" + body + "};\n"


expect("a struct Unit of 35 top-level fields passes", {**CLEAN, "src/daemon/unit/unit-types.h": unit_struct(35)}, None)
expect("a struct Unit of 36 top-level fields is found", {**CLEAN, "src/daemon/unit/unit-types.h": unit_struct(36)},
       "struct Unit has 36 top-level fields, more than 35")

# The folder rules (docs/ARCHITECTURE.md): each folder includes only what its rule allows.
FOLDERS = {
    **CLEAN,
    "include/bwgov/cgroup/cg.h": "#pragma once\n",
    "include/bwgov/kernel/kp.h": "#pragma once\n",
    "include/bwgov/law/pol.h": '#pragma once\n#include "bwgov/cgroup/cg.h"\n',
    "src/lib/cgroup/cg.c": '#include "bwgov/cgroup/cg.h"\n#include "bwgov/util/util.h"\n#include "cg-private.h"\n',
    "src/lib/cgroup/cg-private.h": "#pragma once\n",
    "src/lib/kernel/kp.c": '#include "bwgov/kernel/kp.h"\n#include "bwgov/cgroup/cg.h"\n',
    "src/lib/law/pol.c": '#include "bwgov/law/pol.h"\n#include "cgroup/cg-private.h"\n',
    "src/daemon/source/src.h": "#pragma once\n",
    "src/daemon/source/src.c": '#include "src.h"\n#include "log.h"\n',
    "src/daemon/log.h": "#pragma once\n",
    "src/daemon/unit/unit.c": '#include "unit.h"\n#include "source/src.h"\n#include "bwgov/law/pol.h"\n',
    "src/daemon/guard/g.h": '#pragma once\n#include "unit/unit.h"\n',
    "src/daemon/manager/manager.h": '#pragma once\n#include "guard/g.h"\n#include "bwgov/kernel/kp.h"\n',
    "src/daemon/varlink/vl.c": '#include "log.h"\n',
    "src/daemon/main.c": '#include "manager/manager.h"\n',
    "src/ctl/ctl.c": '#include "bwgov/kernel/kp.h"\n',
    "src/daemon/io.generated.c": '#include "varlink/io.bwgov.Governor.varlink.h"\n',
}
expect("a tree that keeps every folder rule passes", FOLDERS, None)
for what, path, text, needle in (
        ("util/ using cgroup/", "src/lib/util/util.c", '#include "bwgov/cgroup/cg.h"\n',
         "lib/util/ may not use lib/cgroup/"),
        ("cgroup/ using law/", "include/bwgov/cgroup/cg.h", '#include "bwgov/law/pol.h"\n',
         "lib/cgroup/ may not use lib/law/"),
        ("law/ using kernel/", "src/lib/law/pol.c", '#include "bwgov/kernel/kp.h"\n',
         "lib/law/ may not use lib/kernel/"),
        ("the library using the daemon", "src/lib/law/pol.c", '#include "unit/unit.h"\n',
         "the core library includes unit/unit.h from src/daemon/unit"),
        ("source/ using unit/", "src/daemon/source/src.c", '#include "unit/unit.h"\n',
         "daemon/source/ may not use daemon/unit/"),
        ("unit/ using the kernel check", "src/daemon/unit/unit.c", '#include "bwgov/kernel/kp.h"\n',
         "daemon/unit/ may not use lib/kernel/"),
        ("unit/ using manager/", "src/daemon/unit/unit.c", '#include "manager/manager.h"\n',
         "daemon/unit/ may not use daemon/manager/"),
        ("guard/ using manager/", "src/daemon/guard/g.h", '#include "manager/manager.h"\n',
         "daemon/guard/ may not use daemon/manager/"),
        ("varlink/ using unit/", "src/daemon/varlink/vl.c", '#include "unit/unit.h"\n',
         "daemon/varlink/ may not use daemon/unit/"),
        ("the daemon's top using manager/", "src/daemon/log.h", '#include "manager/manager.h"\n',
         "daemon/ may not use daemon/manager/"),
        ("the CLI using the daemon", "src/ctl/ctl.c", '#include "log.h"\n', "ctl/ may not use daemon/"),
        ("a library file outside the folders", "src/lib/loose.c", "int loose;\n",
         "src/lib/loose.c:1: not in a folder"),
        ("a header outside include/bwgov's folders", "include/bwgov/loose.h", "#pragma once\n",
         "include/bwgov/loose.h:1: not in a folder"),
        ("a daemon folder of no rule", "src/daemon/extra/x.c", "int x;\n", "src/daemon/extra/x.c:1: not in a folder")):
    expect(f"a folder rule broken is found: {what}", {**FOLDERS, path: text}, needle)

expect("a .c file without a header of its name is found", {**CLEAN, "src/daemon/unit/unit-tick.c": "int t;\n"},
       "src/daemon/unit/unit-tick.c:1: no header of its name (src/daemon/unit/unit-tick.h)", bare=True)
expect("a library file with its header in include/bwgov passes, main.c needs none",
       {**with_headers(CLEAN), "src/lib/util/util.c": "int u;\n", "src/daemon/main.c": "int main(void);\n"}, None,
       bare=True)

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
