#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every command in the documentation is run by a test or marked as needing
a real host (issue 33). In README.md, docs/*.md and deploy/README.md:

  * every fenced block says what it is: ```sh (run here), ```sh host or
    ```python host (needs root, systemd, podman or Kubernetes: only checked
    for its syntax), ```ini (a configuration file, its first line
    "# /etc/bwgov/PATH"), or one of text, json, yaml;
  * the ini snippets are installed where their first line says, in the
    configuration directory of a real bwgovd on a simulated cgroup tree
    that has the cgroups of the units they name; the daemon must take them
    (a snippet with a bad key fails its start) and govern those units;
  * each ```sh block then runs under bash -e -o pipefail against that
    daemon (bwgovctl of this build first on PATH, $BWGOV_SOCKET set, sudo
    a no-op) and must exit 0;
  * relative links between these pages name files (and headings) that exist;
  * README.md is a landing page: at most 250 lines, no dated diary, a Quick
    start and a short Performance section pointing to docs/performance.md.

No root.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_fixture as df  # noqa: E402
import varlink_common as vc  # noqa: E402

ROOT = vc.SOURCE_ROOT
PAGES = ["README.md", "deploy/README.md"] + sorted(
    "docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
KINDS = {"sh", "sh host", "python host", "ini", "text", "json", "yaml"}
CONF_PREFIX = "/etc/bwgov/"
README_MAX_LINES = 250


def blocks(page):
    """(line, info, text) of each fenced block of PAGE."""
    out = []
    with open(os.path.join(ROOT, page)) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(```+)([^`]*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(1), m.group(2).strip(), i + 1
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        out.append((start, info, "\n".join(body) + "\n"))
        i += 1
    return out


def all_blocks():
    return [(page, line, info, text) for page in PAGES for line, info, text in blocks(page)]


def github_slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def unit_cgroup(unit):
    """Where systemd would put the unit's cgroup, on the simulated tree."""
    if unit.endswith(".slice"):
        parts = unit[:-len(".slice")].split("-")
        return "/".join("-".join(parts[:k + 1]) + ".slice" for k in range(len(parts)))
    return "system.slice/" + unit


class Docs(unittest.TestCase):
    def test_every_block_is_marked(self):
        bad = [f"{page}:{line}: ```{info}" for page, line, info, _ in all_blocks() if info not in KINDS]
        self.assertEqual(bad, [], "fenced blocks must be one of " + ", ".join(sorted(KINDS)))
        kinds = {info for _, _, info, _ in all_blocks()}
        self.assertTrue({"sh", "sh host", "ini"} <= kinds, kinds)

    def test_host_blocks_parse(self):
        for page, line, info, text in all_blocks():
            if info == "sh host":
                p = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, f"{page}:{line}: {p.stderr}")
            elif info == "python host":
                try:
                    compile(text, f"{page}:{line}", "exec")
                except SyntaxError as e:
                    self.fail(f"{page}:{line}: {e}")

    def test_links(self):
        for page in PAGES:
            with open(os.path.join(ROOT, page)) as f:
                text = f.read()
            text = re.sub(r"```.*?```", "", text, flags=re.S)
            for target in re.findall(r"\]\(([^)\s]+)\)", text):
                if re.match(r"^[a-z]+:", target):
                    continue
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), path)) if path else \
                    os.path.join(ROOT, page)
                self.assertTrue(os.path.exists(full), f"{page}: link to {target}: no such file")
                if anchor and full.endswith(".md"):
                    with open(full) as f:
                        slugs = {github_slug(h) for h in re.findall(r"^#+ (.+)$", f.read(), re.M)}
                    self.assertIn(anchor, slugs, f"{page}: link to {target}: no such heading")

    def test_readme_is_a_landing_page(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
        n = readme.count("\n")
        self.assertLessEqual(n, README_MAX_LINES, f"README.md has {n} lines")
        self.assertIsNone(re.search(r"\b20\d\d-\d\d-\d\d\b", readme), "a dated diary entry in README.md")
        self.assertIn("\n## Quick start\n", readme)
        perf = readme.split("\n## Performance\n", 1)[1].split("\n## ", 1)[0]
        self.assertLessEqual(perf.strip().count("\n"), 12, "README's Performance section is a summary")
        self.assertIn("docs/performance.md", perf)
        for page in ("guide", "troubleshooting", "performance", "ARCHITECTURE"):
            self.assertTrue(os.path.exists(os.path.join(ROOT, "docs", page + ".md")), page)

    def test_commands(self):
        snippets = {}
        for page, line, info, text in all_blocks():
            if info != "ini":
                continue
            first = text.split("\n", 1)[0]
            m = re.match(r"^# (/\S+\.conf)$", first)
            self.assertTrue(m and m.group(1).startswith(CONF_PREFIX),
                            f"{page}:{line}: an ini snippet's first line is '# {CONF_PREFIX}PATH.conf'")
            rel = m.group(1)[len(CONF_PREFIX):]
            if rel in snippets:
                self.assertEqual(snippets[rel][1], text, f"{page}:{line}: {rel} differs from {snippets[rel][0]}")
            snippets[rel] = (f"{page}:{line}", text)
        units = sorted({rel.split("/")[0][:-2] for rel in snippets
                        if rel.split("/")[0].endswith(".d") and rel.split("/")[0] != "bwgov.conf.d"
                        and "-." not in rel.split("/")[0]})
        self.assertIn("web.service", units)
        with DocsDaemon(snippets, units) as d:
            for page, line, info, text in all_blocks():
                if info != "sh":
                    continue
                p = d.run(text)
                self.assertEqual(p.returncode, 0,
                                 f"{page}:{line}: exit {p.returncode}\n{text}--- stdout\n{p.stdout}--- stderr\n{p.stderr}")


class DocsDaemon(vc.StaticDaemon):
    """bwgovd with the documentation's drop-ins, on a tree with their units'
    cgroups (static counters)."""

    def __init__(self, snippets, units):
        super().__init__(units={})
        self.snippets = snippets
        self.doc_units = units

    def prepare(self):
        super().prepare()
        conf = os.path.join(self.base, "conf")
        for rel, (_, text) in self.snippets.items():
            os.makedirs(os.path.dirname(os.path.join(conf, rel)), exist_ok=True)
            with open(os.path.join(conf, rel), "w") as f:
                f.write(text)
        for u in self.doc_units:
            df.SimCgroup(os.path.join(self.base, "cg"), unit_cgroup(u), 100000, 100000)
        return self

    def start(self, wait=True):
        super().start(wait=True)
        want = set(self.doc_units)
        deadline = time.monotonic() + 30
        r = None
        while time.monotonic() < deadline:
            try:
                r = vc.call(self.socket_path, vc.INTERFACE + ".ListUnits")["parameters"]["units"]
            except (ConnectionRefusedError, FileNotFoundError):
                r = None                # the socket's file is there before it listens
            if r and want <= {u["name"] for u in r if u["adopted"] and u["ticks"] >= 2}:
                return self
            time.sleep(0.1)
        raise AssertionError(f"the documentation's units {sorted(want)} were not all governed:\n{r}\n"
                             + self.logtext()[-3000:])

    def run(self, script):
        env = dict(os.environ, BWGOV_SOCKET=self.socket_path, NO_COLOR="1",
                   PATH=os.path.dirname(os.path.abspath(vc.BWGOVCTL)) + ":" + os.environ.get("PATH", ""))
        prelude = "set -e -o pipefail\nsudo() { \"$@\"; }\n"
        with tempfile.TemporaryDirectory(prefix="bwgov-test-docs-") as cwd:
            return subprocess.run(["bash", "-c", prelude + script], capture_output=True, text=True, env=env,
                                  cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)


if __name__ == "__main__":
    if not os.path.exists(vc.BWGOVD) or not os.path.exists(vc.BWGOVCTL):
        vc.skip("bwgovd or bwgovctl not built")
    if not shutil.which("bash"):
        vc.skip("no bash")
    unittest.main(verbosity=2)
