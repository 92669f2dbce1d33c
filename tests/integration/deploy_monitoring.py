#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""deploy/prometheus and deploy/grafana, offline:

  * promtool check rules on the alerting rules, and promtool test rules on
    their unit tests (each alert fires when it should, and not before);
  * the Grafana dashboard: well-formed (unique panel ids, every query on the
    $datasource variable, only the variables it defines), and each of its
    PromQL queries accepted by promtool (as a recording rule of a generated
    rule file, the Grafana variables filled in);
  * every metric name the rules and the dashboard use is one bwgovd exports
    (in src/daemon/metrics/metrics*.c, and in the metrics.prom of a real bwgovd on a
    fixture tree) and documents (bwgovd(8), METRICS); Prometheus' own "up"
    is the one exception. The name check is first shown to catch a
    misspelt name, so that it cannot pass by finding nothing.

No root. Skips (77) without promtool (Debian: prometheus).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import varlink_common as vc  # noqa: E402

ROOT = vc.SOURCE_ROOT
RULES = os.path.join(ROOT, "deploy", "prometheus", "bwgov-alerts.yaml")
RULES_TEST = os.path.join(ROOT, "deploy", "prometheus", "bwgov-alerts.test.yaml")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "bwgov-dashboard.json")
METRICS_C = [os.path.join(ROOT, "src", "daemon", "metrics", f) for f in ("metrics.c", "metrics-families.c")]
MAN = os.path.join(ROOT, "man", "bwgovd.8.scd")

# Names that are not bwgovd's, and why they may be used.
FOREIGN = {"up": "Prometheus' own health of a scrape target"}
# Grafana's variables, as the dashboard may use them, and what stands in for
# them when promtool checks a query.
VARIABLES = {"$__rate_interval": "5m", "$instance": ".*", "$unit": ".*"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
            "offset", "inf", "nan"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def metric_names(expr):
    """The metric names in a PromQL expression: identifiers that are not
    functions, keywords, label names or parts of numbers and durations."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)            # strings
    s = re.sub(r"\{[^}]*\}", " ", s)                          # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)                         # range selectors
    s = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        if m.start() > 0 and (s[m.start() - 1].isalnum() or s[m.start() - 1] in "._"):
            continue                                          # 1e6, 5m
        if s[m.end():].lstrip().startswith("("):
            continue                                          # a function
        if m.group(0).lower() in KEYWORDS:
            continue
        names.add(m.group(0))
    return names


def rule_exprs():
    """(where, expr) of every rule. The file is YAML; what is needed of it
    (each "expr:" on one line) is read without a YAML library."""
    out = []
    with open(RULES) as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^\s+expr:\s*(.+?)\s*$", line)
            if m:
                out.append((f"{os.path.basename(RULES)}:{n}", m.group(1)))
    return out


def dashboard_exprs(d):
    """(where, expr) of every query of the dashboard, its variables' too."""
    out = []
    for p in d["panels"]:
        for t in p.get("targets", []):
            out.append((f"panel {p['id']} ({p['title']}) {t['refId']}", t["expr"]))
    for v in d["templating"]["list"]:
        if v["type"] == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            m = re.match(r"^label_values\((.*),\s*\w+\)$", q)
            assert m, f"variable {v['name']}: not label_values(SELECTOR, LABEL): {q}"
            out.append((f"variable {v['name']}", m.group(1)))
    return out


def fill(expr):
    for k, v in VARIABLES.items():
        expr = expr.replace(k, v)
    return expr


def promtool(*args):
    return subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=120)


class DeployMonitoring(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(DASHBOARD) as f:
            cls.dashboard = json.load(f)
        cls.source = set()
        for p in METRICS_C:
            with open(p) as f:
                cls.source |= set(re.findall(r'"(bwgov_[a-z0-9_]+)', f.read()))
        with open(MAN) as f:
            man = f.read()
        section = man.split("\n# METRICS\n", 1)[1].split("\n# ", 1)[0].replace("\\_", "_")
        cls.documented = set(re.findall(r"\*(bwgov_[a-z0-9_]+)\*", section))
        cls.exported, cls.telemetry = cls.real_metrics()

    @staticmethod
    def real_metrics():
        """The families of the metrics.prom a real bwgovd writes, and
        whether it had run-queue telemetry (none on a fixture tree)."""
        if not os.path.exists(vc.BWGOVD):
            vc.skip(f"{vc.BWGOVD} not built")
        with vc.StaticDaemon() as d:
            with open(os.path.join(d.base, "run", "metrics.prom")) as f:
                text = f.read()
            status = vc.call(d.socket_path, vc.INTERFACE + ".GetStatus")["parameters"]
        families = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
        return families, status["telemetry"]

    def unknown(self, exprs):
        """Every (where, name) of exprs that is not an exported, documented
        bwgovd metric, nor a name of FOREIGN."""
        bad = []
        for where, expr in exprs:
            for name in sorted(metric_names(expr)):
                if name in FOREIGN:
                    continue
                base = next((name[:-len(s)] for s in HISTOGRAM_SUFFIXES
                             if name.endswith(s) and self.exported.get(name[:-len(s)]) == "histogram"), name)
                if name not in self.source:
                    bad.append((where, name, "not a metric bwgovd writes (src/daemon/metrics/metrics*.c)"))
                elif name not in self.documented:
                    bad.append((where, name, "not documented in bwgovd(8), METRICS"))
                elif base not in self.exported and not (name.startswith("bwgov_runqueue_") and not self.telemetry):
                    bad.append((where, name, "not in the metrics.prom of a running bwgovd"))
        return bad

    def test_name_check_catches_a_misspelt_name(self):
        self.assertEqual(metric_names('sum by (unit) (rate(bwgov_writes_total{unit=~"a.*"}[5m])) / 1e6 > bool 0'),
                         {"bwgov_writes_total"})
        self.assertEqual(metric_names('histogram_quantile(0.99, sum by (le) (rate(x_bucket[$__rate_interval])))'),
                         {"x_bucket"})
        bad = self.unknown([("test", "avg_over_time(bwgov_credit_exausted[30m]) > 0.8"),
                            ("test", "node_load1 > 2"), ("test", "up == 0")])
        self.assertEqual([b[1] for b in bad], ["bwgov_credit_exausted", "node_load1"])

    def test_exported_and_documented(self):
        # The real file and the source agree, so the check below means what it says.
        self.assertIn("bwgov_credit_exhausted", self.exported)
        self.assertIn("bwgov_metrics_timestamp_seconds", self.exported)
        for name in self.exported:
            self.assertIn(name, self.source)
        exprs = rule_exprs() + dashboard_exprs(self.dashboard)
        self.assertGreaterEqual(len(rule_exprs()), 8)
        self.assertEqual(self.unknown(exprs), [])
        used = set().union(*(metric_names(e) for _, e in exprs))
        self.assertGreaterEqual(len(used - set(FOREIGN)), 20, sorted(used))

    def test_promtool_rules(self):
        p = promtool("check", "rules", RULES)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUCCESS", p.stdout)
        # Run where the test file is: it names the rule file relative to it.
        p = subprocess.run(["promtool", "test", "rules", os.path.basename(RULES_TEST)], capture_output=True,
                           text=True, timeout=120, cwd=os.path.dirname(RULES_TEST))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_dashboard_queries_parse(self):
        exprs = dashboard_exprs(self.dashboard)
        with tempfile.TemporaryDirectory(prefix="bwgov-test-dashboard-") as d:
            path = os.path.join(d, "dashboard-queries.yaml")
            with open(path, "w") as f:
                f.write("groups:\n  - name: dashboard\n    rules:\n")
                for i, (where, expr) in enumerate(exprs):
                    f.write(f"      - record: bwgov:dashboard:{i}\n        expr: {json.dumps(fill(expr))}\n")
            p = promtool("check", "rules", path)
            self.assertEqual(p.returncode, 0, "\n".join(f"{i}: {w}" for i, (w, _) in enumerate(exprs)) +
                             "\n" + p.stdout + p.stderr)

    def test_dashboard_shape(self):
        d = self.dashboard
        for key in ("title", "uid", "schemaVersion", "panels", "templating"):
            self.assertIn(key, d)
        names = {v["name"] for v in d["templating"]["list"]}
        self.assertEqual(names, {"datasource", "instance", "unit"})
        ids = [p["id"] for p in d["panels"]]
        self.assertEqual(len(ids), len(set(ids)), "panel ids repeat")
        for p in d["panels"]:
            g = p["gridPos"]
            self.assertLessEqual(g["x"] + g["w"], 24, p["title"])
            if p["type"] == "row":
                continue
            self.assertEqual(p["datasource"], {"type": "prometheus", "uid": "${datasource}"}, p["title"])
            self.assertTrue(p.get("description"), f"{p['title']}: no description")
            self.assertTrue(p["targets"], p["title"])
            for t in p["targets"]:
                self.assertEqual(t["datasource"], p["datasource"])
                for var in re.findall(r"\$\w+", t["expr"]):
                    self.assertIn(var, VARIABLES, f"{p['title']}: {var} is not a variable the dashboard has")


if __name__ == "__main__":
    if not shutil.which("promtool"):
        vc.skip("promtool is not installed (Debian: apt-get install prometheus; scripts/deps.sh lists it)")
    unittest.main(verbosity=2)
