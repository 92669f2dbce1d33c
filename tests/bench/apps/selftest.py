#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Self-test of the application benchmark's pure parts (no root, no server):
percentiles with failures counted as the worst, pgbench's per-transaction log
(skipped transactions), sysbench's report, bwgov-httpload's log by window, the contract's
allowance and limits per configuration, the interleaved plan, and the targets on
synthetic aggregates (met, not met, and not applicable when unlimited uses
more than 60 % of the quota)."""

import json
import lzma
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from apps import bench, clients, cron, parts, report, runner, scenarios  # noqa: E402


class Clients(unittest.TestCase):
    def test_percentiles_count_failures_as_worst(self):
        s = clients.latency_summary([float(i) for i in range(1, 101)])
        self.assertEqual((s["p50"], s["p99"], s["max"], s["n"], s["failed"]), (50.0, 99.0, 100.0, 100, 0))
        # 2 failures among 100: the p99 is a failure, so there is no number for it.
        s = clients.latency_summary([float(i) for i in range(1, 99)], failed=2)
        self.assertIsNone(s["p99"])
        self.assertIsNone(s["max"])
        self.assertEqual(s["p50"], 50.0)
        self.assertAlmostEqual(s["mean"], 49.5)
        self.assertIsNone(clients.latency_summary([]))
        self.assertIsNone(clients.latency_summary([], failed=3)["p50"])

    def test_pgbench_log(self):
        lines = ["0 1 1200 0 1700000000 100",
                 "1 1 skipped 0 1700000000 200 5000",
                 "2 1 800 0 1700000001 0 50",
                 "garbage", "3 1 x 0 1 2"]
        lat, skipped, (t0, t1) = clients.parse_pgbench_log_lines(lines)
        self.assertEqual(lat, [1.2, 0.8])
        self.assertEqual(skipped, 1)
        self.assertEqual((t0, t1), (1700000000.0001, 1700000001.0))
        self.assertEqual(clients.pgbench_summary_field(
            "number of transactions above the 1000.0 ms latency limit: 12/3000 (0.400 %)",
            "number of transactions above the"), 12.0)
        self.assertIsNone(clients.pgbench_summary_field("", "tps = "))

    def test_sysbench_report(self):
        out = ("SQL statistics:\n    transactions:                        57     (11.38 per sec.)\n"
               "    ignored errors:                      2      (0.00 per sec.)\n"
               "Latency histogram (values are in milliseconds)\n"
               "       value  ------------- distribution ------------- count\n"
               "      23.948 |*****                                    1\n"
               "      26.681 |******************************           6\n"
               "      56.240 |*                                        50\n"
               "\nGeneral statistics:\n    total number of events:              57\n"
               "      99.000 |*                                        9\n")
        n, errors, lat = clients.parse_sysbench(out)
        self.assertEqual((n, errors), (57, 2))
        # Each transaction at its bucket's value; nothing after the histogram's end.
        self.assertEqual(lat, [23.948] + [26.681] * 6 + [56.24] * 50)
        res, _ = clients.sysbench_result(out)
        self.assertEqual((res["completed"], res["errors_total"], res["latency"]["p50"]), (57, 2, 56.24))
        with self.assertRaises(RuntimeError):
            clients.sysbench_result("FATAL: unable to connect")
        argv = clients.sysbench_argv("oltp_read_only", ["--mysql-db=sbtest"], 7.4, 20, 3, extra=["--range_size=9"])
        self.assertEqual(argv[:4], ["taskset", "-c", str(clients.client_cpu()), "sysbench"])
        for a in ("--rate=7", "--time=20", "--rand-seed=3", "--range_size=9", "--histogram=on", "--threads=8"):
            self.assertIn(a, argv)
        self.assertIn("--rate=1", clients.sysbench_argv("t", [], 0.2, 20, 1))

    def test_httpload_log_windows(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("0.5 10.0 200 100\n1.5 20.0 200 100\n2.5 30.0 0 0\n3.5 40.0 503 10\n")
        try:
            self.assertEqual(clients.read_httpload_log(f.name), ([10.0, 20.0], 2))
            self.assertEqual(clients.read_httpload_log(f.name, 1.0, 3.0), ([20.0], 1))
            self.assertEqual(clients.read_httpload_log(f.name, 3.0), ([], 1))
        finally:
            os.unlink(f.name)

    def test_cdf_is_monotone(self):
        pts = clients.cdf_points([float(x) for x in range(1000)], 50)
        self.assertEqual(pts[-1], (999.0, 1.0))
        self.assertTrue(all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(pts, pts[1:])))

    def test_pinned_to_the_last_cpu(self):
        argv = clients.pinned(["x"])
        self.assertEqual(argv[:3], ["taskset", "-c", str((os.cpu_count() or 1) - 1)])


class Cron(unittest.TestCase):
    """--outside-cron: its argument, its log, each run's bursts, the report's
    line, and the generator itself, briefly."""

    def test_parse(self):
        self.assertEqual(cron.parse("8,0.15,4"), (8, 0.15, 4.0))
        for bad in ("8,0.15", "x,1,2", "0,0.1,1", "65,0.1,1", "8,0,4", "8,5,4", "8,0.1,0.1", "8,0.1,601"):
            with self.assertRaises(ValueError, msg=bad):
                cron.parse(bad)

    def test_log_and_windows(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cron.log")
            self.assertEqual(cron.read_log(path), [])
            with open(path, "w") as f:
                f.write("10.000 0.61\n14.000 0.84\n18.0\n22.000 0.70\n")
            log = cron.read_log(path)
        self.assertEqual(log, [(10.0, 0.61), (14.0, 0.84), (22.0, 0.70)])
        self.assertEqual(cron.bursts_in(log, 10.0, 22.0), [0.61, 0.84])
        self.assertEqual(cron.bursts_in(log, 10.5, 30.0), [0.84, 0.70])

    def test_report_line(self):
        sc = {"name": "web-0.5", "configs": ["static", "bwgovd-elastic", "unlimited"]}
        recs = [{"scenario": "web-0.5", "config": "static", "ok": True, "outside_cron_walls_s": [0.7, 0.9]},
                {"scenario": "web-0.5", "config": "static", "ok": True, "outside_cron_walls_s": [0.8]},
                {"scenario": "web-0.5", "config": "bwgovd-elastic", "ok": False, "outside_cron_walls_s": [9.0]},
                {"scenario": "web-0.5", "config": "bwgovd-elastic", "ok": True, "outside_cron_walls_s": [0.6]},
                {"scenario": "web-1", "config": "unlimited", "ok": True, "outside_cron_walls_s": [5.0]}]
        line = report.cron_line({"processes": 8, "spin_s": 0.15, "period_s": 4.0}, sc, recs)
        self.assertIn("every 4 s, 8 processes use 0.15 s of CPU each", line)
        self.assertIn("static quota 0.800 [0.700–0.900] (3)", line)
        self.assertIn("bwgovd Mode=elastic 0.600 [0.600–0.600] (1)", line)
        self.assertNotIn("unlimited", line)

    def test_generator(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cron.log")
            p = subprocess.Popen([sys.executable, cron.__file__, "2", "0.01", "0.1", path])
            deadline = time.monotonic() + 20
            while len(cron.read_log(path)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(20), 0)
            log = cron.read_log(path)
        self.assertGreaterEqual(len(log), 2)
        self.assertTrue(all(0.005 <= w < 20 for _, w in log), log)
        self.assertTrue(all(b[0] - a[0] >= 0.09 for a, b in zip(log, log[1:])), log)


class Contract(unittest.TestCase):
    def test_allowance(self):
        q = 0.05
        self.assertEqual(runner.contract_extra_s("static", q), 0.0)
        self.assertEqual(runner.contract_extra_s("static+burst", q), q)
        self.assertEqual(runner.contract_extra_s("bwgovd-elastic", q), runner.DEFAULT_CREDIT_MAX_S + q)
        self.assertIsNone(runner.contract_extra_s("unlimited", q))
        self.assertIsNone(runner.contract_extra_s("koordinator", q))
        self.assertIsNone(runner.contract_extra_s(scenarios.CEILING, q))

    def test_allowance_follows_bwgovd_set(self):
        """--bwgovd-set CreditMax= and CPUBurstMax= move bwgovd's contract,
        and only bwgovd's."""
        q = 0.05
        self.assertAlmostEqual(runner.contract_extra_s("bwgovd-elastic", q, {"CreditMax": "2s"}), 2.0 + q)
        self.assertAlmostEqual(runner.contract_extra_s("bwgovd-burst", q, {"CreditMax": "1min 30s",
                                                                           "CPUBurstMax": "20ms"}), 90.02)
        self.assertAlmostEqual(runner.contract_extra_s("bwgovd-elastic", q, {"CPUBurstMax": "0"}),
                               runner.DEFAULT_CREDIT_MAX_S)
        self.assertAlmostEqual(runner.contract_extra_s("bwgovd-elastic", q, {"Interval": "2s"}),
                               runner.DEFAULT_CREDIT_MAX_S + q)
        self.assertEqual(runner.contract_extra_s("static", q, {"CreditMax": "2s"}), 0.0)
        self.assertEqual(runner.contract_extra_s("static+burst", q, {"CPUBurstMax": "0"}), q)

    def test_timespan(self):
        for text, want in [("2s", 2.0), ("500ms", 0.5), ("1min 30s", 90.0), ("30", 30.0), ("1.5s", 1.5),
                           ("250us", 0.00025), ("1h", 3600.0)]:
            self.assertAlmostEqual(runner.timespan_s(text), want, msg=text)
        for text in ["", "x", "2q", "-1s", "1mins", "s"]:
            with self.assertRaises(ValueError, msg=text):
                runner.timespan_s(text)

    def test_limits(self):
        p = 100000
        self.assertEqual(runner.limits("unlimited", 50000, p, 2), (None, 0))
        self.assertEqual(runner.limits("static", 50000, p, 2), (50000, 0))
        self.assertEqual(runner.limits("static+burst", 50000, p, 2), (50000, 50000))
        self.assertEqual(runner.limits(scenarios.NOTEL, 50000, p, 2), (50000, 0))
        # bwgovd's ceiling: four times the baseline, at most the host's CPUs.
        self.assertEqual(runner.limits(scenarios.CEILING, 50000, p, 2), (200000, 50000))
        self.assertEqual(runner.limits(scenarios.CEILING, 100000, p, 2), (200000, 100000))
        self.assertEqual(runner.limits(scenarios.CEILING, 100000, p, 8), (400000, 100000))
        for c in (scenarios.CEILING, scenarios.NOTEL):
            self.assertIn(c, scenarios.CONFIG_TITLES)

    def test_bare_row_is_not_watched(self):
        """The bare row: bwgovd elastic with its defaults, not traced and not
        sampled; every other governor row is both."""
        from harness.governor import NoTrace, WriteTrace
        self.assertIsNone(runner.governor_globals(scenarios.BARE))
        self.assertEqual(runner.limits(scenarios.BARE, 50000, 100000, 2), (50000, 0))
        self.assertEqual(runner.contract_extra_s(scenarios.BARE, 0.05), runner.DEFAULT_CREDIT_MAX_S + 0.05)
        self.assertIn(scenarios.BARE, scenarios.CONFIG_TITLES)
        self.assertIsInstance(runner.instruments(scenarios.BARE, "/nonexistent"), NoTrace)
        for c in ("bwgovd-elastic", "bwgovd-burst", scenarios.NOTEL, "koordinator"):
            t = runner.instruments(c, "/nonexistent")
            self.assertIsInstance(t, WriteTrace)
            self.assertNotIsInstance(t, NoTrace)
        gov = object.__new__(runner.Bwgovd)
        self.assertFalse(runner.sampled(scenarios.BARE, gov))
        self.assertTrue(runner.sampled("bwgovd-elastic", gov))
        self.assertFalse(runner.sampled("koordinator", object()))

    def test_governor_globals(self):
        self.assertIsNone(runner.governor_globals("bwgovd-elastic"))
        self.assertIsNone(runner.governor_globals("bwgovd-burst"))
        self.assertEqual(runner.governor_globals(scenarios.NOHOST), {"HostPressureLimit": "0%"})
        self.assertEqual(runner.governor_globals(scenarios.NOTEL), {"Telemetry": "no"})

    def test_host_cpu_busy_without_steal(self):
        """Busy is user + nice + system + irq + softirq; steal is its own
        figure, not CPU the host's processes used (it was counted in busy,
        and so in "others CPU")."""
        tck = os.sysconf("SC_CLK_TCK")
        busy, steal = runner.host_cpu_s("cpu  100 10 50 9000 70 5 3 400 0 0\n")
        self.assertAlmostEqual(busy, 168 / tck)
        self.assertAlmostEqual(steal, 400 / tck)
        self.assertIsNone(runner.host_cpu_s("cpu  1 2 3\n"))
        self.assertIsNone(runner.host_cpu_s("cpu  a b c d e f g h\n"))
        self.assertEqual(len(runner.host_cpu_s()), 2)


class Plan(unittest.TestCase):
    def test_interleaved_and_rotated(self):
        suite = scenarios.suite(True, ["web"])
        for s in suite:
            s.reps = 2
        plan = bench.planned(suite)
        self.assertEqual(len(plan), sum(len(s.configs) * 2 for s in suite))
        first = [c for s, c, r in plan if s.name == "web-0.5" and r == 0]
        second = [c for s, c, r in plan if s.name == "web-0.5" and r == 1]
        self.assertEqual(sorted(first), sorted(second))
        self.assertNotEqual(first[0], second[0])
        # Every repetition of every scenario runs before the next repetition starts.
        reps = [r for _, _, r in plan]
        self.assertEqual(reps, sorted(reps))

    def test_quick_run_rotates_by_scenario(self):
        """One repetition: bwgovd is not the last of every scenario, and the
        scenarios' orders are rotations of their own lists."""
        suite = scenarios.suite(True)
        plan = bench.planned(suite)
        order = {}
        for s, c, _ in plan:
            order.setdefault(s.name, []).append(c)
        lasts = {o[-1] for o in order.values()}
        self.assertGreater(len(lasts), 1)
        self.assertIn("bwgovd-elastic", lasts)
        for s in suite:
            o = order[s.name]
            k = s.configs.index(o[0])
            self.assertEqual(o, s.configs[k:] + s.configs[:k], s.name)

    def test_each_position_once(self):
        """As many repetitions as configurations: each configuration runs in
        each place of its scenario once, whatever the scenario's place."""
        suite = scenarios.suite(False, ["web", "db"])
        plan = bench.planned(suite)
        for s in suite:
            n = len(s.configs)
            self.assertEqual(s.reps, 5)
            if n != s.reps:
                continue
            places = {c: set() for c in s.configs}
            for r in range(s.reps):
                o = [c for x, c, rr in plan if x is s and rr == r]
                for i, c in enumerate(o):
                    places[c].add(i)
            self.assertEqual(places, {c: set(range(n)) for c in s.configs}, s.name)

    def test_suites(self):
        quick = {s.name for s in scenarios.suite(True)}
        full = {s.name for s in scenarios.suite(False)}
        self.assertTrue({"web-0.5", "web-1", "db-tpcb-0.5", "db-select-1", "jvm-g1-2cpu-full", "jvm-g1-2cpu-empty",
                         "build", "neighbour-0.5", "web-nginx-0.5"} <= quick)
        self.assertTrue(quick < full)
        self.assertTrue({"web-nginx-1", "web-caddy-0.5", "web-caddy-1", "web-lighttpd-0.5", "web-lighttpd-1",
                         "job-xz-0.5", "job-xz-1", "job-gzip-0.5", "job-zstd-0.5", "job-xz-long-0.5",
                         "job-xz-empty-0.5"} <= full)
        empty = [s for s in scenarios.suite(False, ["job"]) if s.empty_credit]
        self.assertEqual([(s.name, s.configs) for s in empty],
                         [("job-xz-empty-0.5", ["unlimited", "static", "static+burst", "bwgovd-elastic"])])
        self.assertFalse({n for n in quick if n.startswith(("web-caddy", "web-lighttpd", "job-"))})
        # A second web server is measured against its own CPU per request.
        self.assertIn("neighbour-build-0.5", full)
        self.assertNotIn("neighbour-build-0.5", quick)
        self.assertEqual({s.name: s.calibration_key for s in scenarios.suite(False, ["web", "neighbour"])
                          if s.kind != "build"},
                         {"web-0.5": "web", "web-1": "web", "web-nginx-0.5": "web-nginx", "web-nginx-1": "web-nginx",
                          "web-caddy-0.5": "web-caddy", "web-caddy-1": "web-caddy",
                          "web-lighttpd-0.5": "web-lighttpd", "web-lighttpd-1": "web-lighttpd",
                          "web-poisson-0.5": "web", "web-poisson-1": "web", "neighbour-0.5": "web"})
        self.assertTrue(all(s.reps >= 5 for s in scenarios.suite(False)))

    def test_load_sets_the_share(self):
        """--load: the job's interval and the recorded target follow the
        share asked for; a share outside the issue's 30–60 % is refused
        before anything runs."""
        class Ctx:
            shared = {("cal", "job", "xz"): {"cpu_per_request_ms": 500.0, "wall_unlimited_ms": 300.0}}
            target_share = scenarios.TARGET_SHARE

        job = scenarios.Job(0.5, 1, 10, 1)
        runner.calibrate_job(Ctx, job)
        self.assertAlmostEqual(job.rate, 0.45)
        Ctx.target_share = 0.6
        runner.calibrate_job(Ctx, job)
        self.assertAlmostEqual(job.rate, 0.6)
        self.assertEqual(job.calibration["target_share"], 0.6)
        for bad in (0.2, 0.61):
            with self.assertRaisesRegex(ValueError, "outside 0.3–0.6"):
                bench.run(None, None, True, print, only=["job-xz"], load=bad)

    def test_calibration_counts_its_own_log(self):
        """The probe and each step of a calibration share a log prefix:
        pgbench's logs of an earlier one must not count again."""
        with tempfile.TemporaryDirectory() as d:
            prefix = os.path.join(d, "calibrate-db-tpcb-0.5")
            lines = "".join(f"0 {i} 500 0 1700000000 {i} 0\n" for i in range(5))
            for pid in (101, 202):
                with open(f"{prefix}.{pid}", "w") as f:
                    f.write(lines)
            self.assertEqual(clients.pgbench_result("", prefix)[0]["completed"], 10)
            with open(os.path.join(d, "calibrate-db-tpcb-0.5x.1"), "w") as f:
                f.write(lines)
            self.assertEqual(runner.fresh_log_prefix(prefix), prefix)
            self.assertEqual(clients.pgbench_result("", prefix)[0]["completed"], 0)
            with open(f"{prefix}.303", "w") as f:
                f.write(lines)
            self.assertEqual(clients.pgbench_result("", prefix)[0]["completed"], 5)
            self.assertTrue(os.path.exists(os.path.join(d, "calibrate-db-tpcb-0.5x.1")))

    def test_job_is_open_loop(self):
        """Jobs start when due, also while the last one still runs, and each
        counts from the time it was due: 5 jobs of 0.3 s due every 0.1 s end
        within 0.3 s (and a bit) of their time. One after another, the fifth
        would end 1.1 s after its time."""
        class Cg:
            procs = []

            def spawn(self, argv, **kw):
                return subprocess.Popen(argv, **kw)

        class R:
            cg, latencies, measure_start = Cg(), None, None

            def mark_measure_start(self):
                self.measure_start = time.monotonic()

        job = scenarios.Job(0.5, 1, 0.45, 0.0)
        job.argv, job.rate = ["sleep", "0.3"], 10.0
        with tempfile.TemporaryDirectory() as d:
            job.input = os.path.join(d, "input")
            open(job.input, "w").close()
            res = job.drive(R())
            self.assertEqual(res["jobs"], 5)
            self.assertGreaterEqual(res["latency"]["p50"], 300)
            self.assertLess(res["latency"]["max"], 900)
            self.assertEqual(res["latency"]["max"], res["latency"]["p99"])
            job.argv = ["false"]
            with self.assertRaises(RuntimeError):
                job.drive(R())

    def test_database_variants(self):
        full = {s.name: s for s in scenarios.suite(False, ["db"]) if s.engine == "postgres"}
        self.assertEqual(set(full), {f"db-{v}-{q}" for v in ("tpcb", "select", "report") for q in ("0.5", "1")})
        self.assertIn("db-report-0.5", {s.name for s in scenarios.suite(True, ["db"])})
        self.assertNotIn("db-report-1", {s.name for s in scenarios.suite(True, ["db"])})
        # Each variant has its own CPU per transaction.
        self.assertEqual({s.calibration_key for s in full.values()}, {"db-tpcb", "db-select", "db-report"})
        with tempfile.TemporaryDirectory() as d:
            for name, sc in full.items():
                sc.write_script(d)
                argv = sc._argv(5432, 10.0, 20, 1, os.path.join(d, "log"))
                self.assertEqual("-S" in argv, name.startswith("db-select"))
                self.assertEqual("-f" in argv, name.startswith("db-report"))
            argv = full["db-report-1"]._argv(5432, 10.0, 20, 1, os.path.join(d, "log"))
            self.assertEqual(argv[argv.index("-f") + 1], os.path.join(d, "report.sql"))
            with open(os.path.join(d, "report.sql")) as f:
                text = f.read()
            self.assertTrue(text.startswith("\\set a random(1, "), text)
            self.assertIn("WHERE aid BETWEEN :a AND :a + 99999", text)

    def test_mariadb(self):
        """MariaDB in the full run only, kind "db" (the database's targets),
        each variant calibrated alone, one template for all."""
        full = {s.name: s for s in scenarios.suite(False, ["mariadb"])}
        self.assertEqual(set(full), {"mariadb-ro-0.5", "mariadb-rw-0.5", "mariadb-ranges-0.5", "mariadb-ranges-1"})
        self.assertFalse([s for s in scenarios.suite(True) if s.name.startswith("mariadb")])
        self.assertEqual({s.kind for s in full.values()}, {"db"})
        self.assertEqual({s.name for s in scenarios.suite(False, ["db"]) if s.engine == "mariadb"}, set(full))
        self.assertEqual({s.calibration_key for s in full.values()}, {"mariadb-ro", "mariadb-rw", "mariadb-ranges"})
        self.assertTrue(all(k in runner.PROBE for k in ("mariadb-ro", "mariadb-rw", "mariadb-ranges")))
        srv = scenarios.servers.MariaDb("/nonexistent")
        argv = full["mariadb-ranges-1"]._argv(srv, 14.2, 20, 2)
        self.assertEqual(argv[3:5], ["sysbench", "oltp_read_only"])
        self.assertIn("--range_size=10000", argv)
        self.assertIn("--mysql-socket=/nonexistent/mysqld.sock", argv)
        # The rate recorded is the rate sent: sysbench takes whole ones.
        self.assertEqual((full["mariadb-ranges-1"].sendable_rate(7.5), full["mariadb-ro-0.5"].sendable_rate(0.2)),
                         (8.0, 1.0))
        self.assertEqual(scenarios.suite(False, ["db-tpcb-0.5"])[0].sendable_rate(7.5), 7.5)
        argv = full["mariadb-rw-0.5"]._argv(srv, 164.1, 20, 2)
        self.assertEqual((argv[4], "--rate=164" in argv), ("oltp_read_write", True))
        self.assertFalse([a for a in argv if a.startswith("--range_size")])


def _agg(values):
    """aggregates for one scenario from {config: {path: median}}."""
    out = {}
    for cfg, figs in values.items():
        a = {p: {"median": v, "min": v, "max": v, "n": 1} for p, v in figs.items() if p != "contract"}
        a["contract"] = figs.get("contract")
        out[cfg] = a
    return out


class Targets(unittest.TestCase):
    SC = {"name": "web-0.5", "kind": "web", "configs": ["unlimited", "static", "static+burst", "bwgovd-elastic"],
          "empty_credit": False}

    def rows(self, share=0.45, e=100.0, u=90.0, s=300.0, th=0.0, ce=0.25, cs=0.25, contract=(True,), sc=None):
        sc = sc or self.SC
        agg = {sc["name"]: _agg({
            "unlimited": {"usage_share_of_quota": share, "result.latency.p99": u},
            "static": {"result.latency.p99": s},
            "static+burst": {"usage_cpus": cs},
            "bwgovd-elastic": {"result.latency.p99": e, "throttled_pct": th, "usage_cpus": ce,
                               "contract": list(contract)}})}
        return {r["target"].split(": ", 1)[1].split(" (")[0]: r["met"] for r in report.evaluate([sc], agg, [])}

    def test_met(self):
        self.assertTrue(all(self.rows().values()))

    def test_each_can_fail(self):
        self.assertFalse(self.rows(e=120.0)["bwgovd elastic p99 ≤ 1.2× unlimited"])
        self.assertFalse(self.rows(s=150.0)["bwgovd elastic p99 ≤ 0.5× static"])
        self.assertFalse(self.rows(th=1.5)["bwgovd elastic throttled periods ≤ 1 %"])
        self.assertFalse(self.rows(ce=0.27)["bwgovd elastic mean CPU within 5 % of static + burst's"])
        self.assertFalse(self.rows(contract=(True, False))["bwgovd elastic within its contract"])

    def test_bound_below_unlimited_is_said(self):
        agg = {"web-0.5": _agg({
            "unlimited": {"usage_share_of_quota": 0.45, "result.latency.p99": 90.0},
            "static": {"result.latency.p99": 150.0},
            "bwgovd-elastic": {"result.latency.p99": 95.0}})}
        figs = {r["target"]: r["figure"] for r in report.evaluate([self.SC], agg, [])}
        self.assertIn("the bound is below unlimited", figs["web-0.5: bwgovd elastic p99 ≤ 0.5× static"])
        agg["web-0.5"]["static"]["result.latency.p99"]["median"] = 300.0
        figs = {r["target"]: r["figure"] for r in report.evaluate([self.SC], agg, [])}
        self.assertNotIn("below unlimited", figs["web-0.5: bwgovd elastic p99 ≤ 0.5× static"])

    def test_cpu_row_gives_unlimited_beside(self):
        agg = {"web-0.5": _agg({
            "unlimited": {"usage_share_of_quota": 0.45, "result.latency.p99": 90.0, "usage_cpus": 0.2},
            "static+burst": {"usage_cpus": 0.25},
            "bwgovd-elastic": {"usage_cpus": 0.26}})}
        target = "web-0.5: bwgovd elastic mean CPU within 5 % of static + burst's"
        rows = {r["target"]: r for r in report.evaluate([self.SC], agg, [])}
        self.assertEqual(rows[target]["figure"], "0.260 vs 0.250 CPUs: 1.040× (unlimited 0.800×)")
        self.assertTrue(rows[target]["met"])        # the verdict is bwgovd's alone
        del agg["web-0.5"]["unlimited"]["usage_cpus"]
        rows = {r["target"]: r for r in report.evaluate([self.SC], agg, [])}
        self.assertNotIn("unlimited", rows[target]["figure"])

    def test_cpu_row_gives_the_paired_ratio_beside(self):
        # Two repetitions whose loads differ: the medians of bwgovd's and
        # static + burst's CPU come from different ones, the pairs agree.
        recs = [{"scenario": "web-0.5", "config": c, "rep": rep, "ok": True, "usage_cpus": v}
                for rep, vals in enumerate(((0.20, 0.20), (0.30, 0.30), (0.28, 0.21)))
                for c, v in zip(("bwgovd-elastic", "static+burst"), vals)]
        agg = {"web-0.5": _agg({
            "unlimited": {"usage_share_of_quota": 0.45, "result.latency.p99": 90.0},
            "static+burst": {"usage_cpus": 0.21},
            "bwgovd-elastic": {"usage_cpus": 0.28}})}
        target = "web-0.5: bwgovd elastic mean CPU within 5 % of static + burst's"
        rows = {r["target"]: r for r in report.evaluate([self.SC], agg, recs)}
        self.assertEqual(rows[target]["figure"],
                         "0.280 vs 0.210 CPUs: 1.333×; paired by repetition 1.000× [1.000–1.333]")
        self.assertFalse(rows[target]["met"])       # the verdict stays the medians'
        rows = {r["target"]: r for r in report.evaluate([self.SC], agg, recs[:2])}
        self.assertNotIn("paired", rows[target]["figure"])      # one pair is no comparison

    def test_not_applicable_above_60_percent(self):
        rows = self.rows(share=0.65, e=500.0)
        # The contract holds whatever the load; the rest is not judged.
        self.assertTrue(rows.pop("bwgovd elastic within its contract"))
        self.assertTrue(all(v is None for v in rows.values()))

    def test_job_is_judged_as_a_server(self):
        """A job run by a timer is judged by the web server's and the
        database's lines, on the p99 of its jobs' completions, with the
        figures the report aggregates for it."""
        sc = dict(self.SC, name="job-xz-0.5", kind="job")
        self.assertIn("result.latency.p99", [p for p, _ in report.figures(sc)])
        rows = self.rows(e=500.0, u=400.0, s=1200.0, ce=0.22, cs=0.22, sc=sc)
        self.assertEqual(rows, {"bwgovd elastic p99 ≤ 1.2× unlimited": False, "bwgovd elastic p99 ≤ 0.5× static": True,
                                "bwgovd elastic throttled periods ≤ 1 %": True,
                                "bwgovd elastic mean CPU within 5 % of static + burst's": True,
                                "bwgovd elastic within its contract": True})

    def test_jvm_build_neighbour(self):
        scs = [{"name": "jvm-x-full", "kind": "jvm", "empty_credit": False, "configs": []},
               {"name": "jvm-x-empty", "kind": "jvm", "empty_credit": True, "configs": []},
               {"name": "build", "kind": "build", "empty_credit": False, "configs": []},
               {"name": "neighbour-0.5", "kind": "neighbour", "empty_credit": False, "configs": []},
               {"name": "neighbour-build-0.5", "kind": "build", "empty_credit": False, "configs": []}]
        agg = {"jvm-x-full": _agg({"unlimited": {"result.first_200_s": 10.0, "result.startup_reported_ms": 8000,
                                                 "result.first_jsp_s": 2.0},
                                   "bwgovd-elastic": {"result.first_200_s": 11.0, "result.startup_reported_ms": 10000,
                                                      "result.first_jsp_s": 2.0}}),
               "jvm-x-empty": _agg({"static": {"result.first_200_s": 20.0, "result.startup_reported_ms": 16000,
                                               "result.first_jsp_s": 4.0},
                                    "bwgovd-elastic": {"result.first_200_s": 20.2, "result.startup_reported_ms": 17000,
                                                       "result.first_jsp_s": 3.0}}),
               "build": _agg({"static": {"result.build_s": 100.0},
                              "bwgovd-elastic": {"result.build_s": 70.0, "contract": [True, True]}}),
               "neighbour-0.5": _agg({"static+burst": {"result.victim.latency_ms.p99": 10.0},
                                      "bwgovd-elastic": {"result.victim.latency_ms.p99": 11.5}}),
               "neighbour-build-0.5": _agg({"static": {"result.build_s": 12.0},
                                            "static+burst": {"result.victim.latency_ms.p99": 6.0},
                                            "bwgovd-elastic": {"result.victim.latency_ms.p99": 5.5,
                                                               "result.build_s": 3.0, "contract": [True]}})}
        rows = {r["target"]: r["met"] for r in report.evaluate(scs, agg, [])}
        self.assertEqual(rows["jvm-x-full: bwgovd elastic first 200 ≤ 1.2× unlimited (full credit)"], True)
        self.assertEqual(rows["jvm-x-full: bwgovd elastic startup ≤ 1.2× unlimited (full credit)"], False)
        self.assertEqual(rows["jvm-x-empty: bwgovd elastic first 200 not worse than static (empty credit)"], True)
        self.assertEqual(rows["jvm-x-empty: bwgovd elastic startup not worse than static (empty credit)"], False)
        self.assertEqual(rows["build: bwgovd elastic completion ≤ static's"], True)
        self.assertEqual(rows["build: bwgovd elastic within its contract, whole build and worst window"], True)
        self.assertEqual(rows["neighbour-0.5: the victim's p99 beside bwgovd ≤ 1.1× beside static + burst"], False)
        # The victim beside a build: the build's lines and the neighbour's.
        self.assertEqual(rows["neighbour-build-0.5: the victim's p99 beside bwgovd ≤ 1.1× beside static + burst"],
                         True)
        self.assertEqual(rows["neighbour-build-0.5: bwgovd elastic completion ≤ static's"], True)
        self.assertEqual(report.figures(scs[-1])[0][0], "result.victim.latency_ms.p99")

    def test_markdown_renders(self):
        res = {"meta": {"quick": True, "elapsed_min": 1.0}, "scenarios": [dict(self.SC, title="t", reps=1,
                                                                              rate_per_s=5.0, calibration={})],
               "records": [], "aggregates": {}, "targets": []}
        res = bench.summarise(res)
        md = report.markdown(res)
        self.assertIn("Koordinator's published", md)
        self.assertIn("| unlimited |", md)
        self.assertEqual(report.fmt(math.inf), "–")
        # The server cgroups' cpu.shares in the header when the run says them.
        self.assertNotIn("cpu.shares", md)
        res["meta"]["shares"] = 10240
        self.assertIn("the server's cgroup gets cpu.shares=10240", report.markdown(res))


class Parts(unittest.TestCase):
    SRC = {"commit": "a" * 40, "dirty": False, "daemon_sha256": "d" * 64, "protocol_sha256": "p" * 64}

    def part(self, names, started="t", **src):
        meta = {"quick": False, "elapsed_min": 60.0, "interrupted": False, "bwgovd_config": "defaults",
                "koordinator": "k", "client_cpu": 1, "started": started, "prepare": [f"prep {names[0]}"],
                "source": dict(self.SRC, **src)}
        scs = [dict(Targets.SC, name=n, title=n, reps=5, rate_per_s=5.0, calibration={}) for n in names]
        recs = [{"scenario": n, "config": "static", "rep": r, "ok": True} for n in names for r in range(5)]
        return {"meta": meta, "scenarios": scs, "records": recs}

    def test_digest_follows_contents(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "src", "__pycache__"))
            with open(os.path.join(d, "src", "a.c"), "w") as f:
                f.write("int a;\n")
            with open(os.path.join(d, "src", "__pycache__", "x.pyc"), "w") as f:
                f.write("noise")
            h = parts.digest(d, ("src", "missing.txt"))
            with open(os.path.join(d, "src", "__pycache__", "x.pyc"), "w") as f:
                f.write("other noise")
            self.assertEqual(parts.digest(d, ("src",)), h)
            with open(os.path.join(d, "src", "a.c"), "w") as f:
                f.write("int b;\n")
            self.assertNotEqual(parts.digest(d, ("src",)), h)
            os.rename(os.path.join(d, "src", "a.c"), os.path.join(d, "src", "b.c"))
            self.assertNotEqual(parts.digest(d, ("src",)), h)

    def test_this_tree_has_provenance(self):
        repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        src = parts.provenance(repo)
        self.assertEqual(len(src["daemon_sha256"]), 64)
        self.assertNotEqual(src["daemon_sha256"], src["protocol_sha256"])
        self.assertIsNone(parts.provenance(None))

    def test_merge_joins(self):
        res = parts.merge([("p1", self.part(["web-0.5", "web-1"], started="d1")),
                           ("p2", self.part(["build"], started="d2", commit="b" * 40))])
        self.assertEqual([s["name"] for s in res["scenarios"]], ["web-0.5", "web-1", "build"])
        self.assertEqual(len(res["records"]), 15)
        self.assertEqual(res["meta"]["elapsed_min"], 120.0)
        self.assertEqual([p["started"] for p in res["meta"]["parts"]], ["d1", "d2"])
        self.assertEqual(res["meta"]["source"]["commits"], ["a" * 40, "b" * 40])
        self.assertEqual(res["meta"]["prepare"], ["prep web-0.5", "prep build"])
        md = report.markdown(bench.summarise(res))
        self.assertIn("part p2: build; started d2, 60.0 min", md)
        self.assertIn("Full run, 120.0 min", md)

    def test_load_plain_or_kept(self):
        res = self.part(["jvm-g1-2cpu-full"])
        with tempfile.TemporaryDirectory() as d:
            run_dir, kept_dir = os.path.join(d, "run"), os.path.join(d, "kept")
            os.makedirs(run_dir)
            os.makedirs(kept_dir)
            with open(os.path.join(run_dir, "apps.json"), "w") as f:
                json.dump(res, f)
            kept = os.path.join(kept_dir, "apps.json.xz")
            with lzma.open(kept, "wt") as f:
                json.dump(dict(res, scenarios=[dict(res["scenarios"][0], name="kept")]), f)
            self.assertEqual(parts.load(run_dir), res)
            self.assertEqual(parts.load(os.path.join(run_dir, "apps.json")), res)
            self.assertEqual(parts.load(kept_dir)["scenarios"][0]["name"], "kept")
            self.assertEqual(parts.load(kept)["scenarios"][0]["name"], "kept")
            with open(os.path.join(kept_dir, "apps.json"), "w") as f:
                json.dump(res, f)
            self.assertEqual(parts.load(kept_dir), res, "a run's own apps.json comes first")
            with open(kept, "wb") as f:
                f.write(b"not xz")
            with self.assertRaises(lzma.LZMAError):
                parts.load(kept)
            with self.assertRaises(OSError):
                parts.load(os.path.join(d, "missing"))

    def test_kept_parts_merge(self):
        """The parts kept in results/ measured the same sources with the
        same protocol, and no scenario twice: they join."""
        kept = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
        names = sorted(f for f in os.listdir(kept) if f.endswith(".json.xz")) if os.path.isdir(kept) else []
        if len(names) < 2:
            self.skipTest("fewer than two parts kept in tests/bench/apps/results/")
        loaded = [(n, parts.load(os.path.join(kept, n))) for n in names]
        res = parts.merge(loaded)
        self.assertEqual(len(res["meta"]["parts"]), len(names))
        self.assertEqual(len(res["records"]), sum(len(r["records"]) for _, r in loaded))

    def test_merge_refuses(self):
        ok = self.part(["web-0.5"])
        cases = {
            "the daemon's sources differ": self.part(["db-tpcb-0.5"], daemon_sha256="e" * 64),
            "the benchmark's protocol differ": self.part(["db-tpcb-0.5"], protocol_sha256="q" * 64),
            "is also in p1": self.part(["web-0.5"]),
            "quick is True": dict(self.part(["build"]), meta=dict(self.part(["build"])["meta"], quick=True)),
            "was interrupted": dict(self.part(["build"]), meta=dict(self.part(["build"])["meta"], interrupted=True)),
            "does not say what it measured with": dict(self.part(["build"]),
                                                       meta=dict(self.part(["build"])["meta"], source=None)),
            "shares is 1024": dict(self.part(["build"]), meta=dict(self.part(["build"])["meta"], shares=1024)),
            "load_share is 0.6": dict(self.part(["build"]), meta=dict(self.part(["build"])["meta"], load_share=0.6)),
            "outside_cron is": dict(self.part(["build"]), meta=dict(self.part(["build"])["meta"],
                                                                    outside_cron={"processes": 8})),
        }
        for msg, other in cases.items():
            with self.assertRaises(parts.MergeError) as cm:
                parts.merge([("p1", ok), ("p2", other)])
            self.assertIn(msg, str(cm.exception))
        with self.assertRaises(parts.MergeError):
            parts.merge([("p1", ok)])


if __name__ == "__main__":
    unittest.main(verbosity=2)
