#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgovd's varlink server against hostile and broken clients, on raw
sockets: invalid JSON, messages over the size limit, unknown methods and
interfaces, wrong parameter types, deeply nested JSON, a client that never
reads, 500 clients at once, idle clients, and rounds of all of it with the
daemon's resident memory measured. Each gets a varlink error or a closed connection,
the daemon keeps answering others, and its tick counter keeps advancing
(GetStatus and bwgov_ticks_total in metrics.prom). No root needed.
"""
import json
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import varlink_common as vc  # noqa: E402

G = vc.INTERFACE
LIMIT = 65536


class Malformed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(vc.BWGOVD):
            vc.skip(f"bwgovd not built at {vc.BWGOVD}")
        cls.daemon = vc.StaticDaemon().start()
        cls.path = cls.daemon.socket_path

    @classmethod
    def tearDownClass(cls):
        rc = cls.daemon.stop()
        log = cls.daemon.logtext()
        cls.daemon.cleanup()
        if rc != 0:
            print(log[-4000:], file=sys.stderr)
        assert rc == 0, f"bwgovd exited with {rc}"

    def setUp(self):
        self.assertTrue(self.daemon.alive())
        self.ticks0 = vc.ticks(self.path)
        self.metric0 = self.daemon.metric_ticks()

    def tearDown(self):
        # The daemon still governs: both counters move on, and a fresh
        # client gets an answer.
        self.assertTrue(self.daemon.alive(), "bwgovd died")
        vc.wait_ticks_advance(self.path, self.ticks0, 3)
        self.daemon.d.wait_for(lambda: self.daemon.metric_ticks() > self.metric0, 10, "bwgov_ticks_total to grow")

    def client(self):
        c = vc.RawClient(self.path)
        self.addCleanup(c.close)
        return c

    def assertError(self, reply, error, params=None):
        self.assertIsNotNone(reply, f"connection closed instead of {error}")
        self.assertEqual(reply.get("error"), error, reply)
        if params is not None:
            self.assertEqual(reply.get("parameters"), params)

    # ---- messages that are not varlink calls: error, then closed ----------

    def test_invalid_json(self):
        for raw in (b"{not json", b"{\"method\": \"io.bwgov.Governor.GetStatus\"", b"\xff\xfe",
                    b"", b"   "):
            c = self.client()
            c.send(raw + b"\0")
            r = c.recv()
            self.assertError(r, G + ".InvalidMessage")
            self.assertIn("not JSON", r["parameters"]["reason"])
            self.assertTrue(c.closed(), f"{raw!r}: connection left open")

    def test_not_a_call(self):
        cases = [
            b"[1, 2]",
            b"\"a string\"",
            json.dumps({"parameters": {}}).encode(),
            json.dumps({"method": 42}).encode(),
            json.dumps({"method": G + ".GetStatus", "oneway": "yes"}).encode(),
            json.dumps({"method": G + ".GetStatus", "more": 1}).encode(),
            b'{"method": "io.bwgov.Governor.GetStatus", "method": "io.bwgov.Governor.GetStatus"}',
            b'{"method": "io.bwgov.Governor.GetUnit", "parameters": {"unit": "a\\u0000b"}}',
        ]
        for raw in cases:
            c = self.client()
            c.send(raw + b"\0")
            self.assertError(c.recv(), G + ".InvalidMessage")
            self.assertTrue(c.closed(), f"{raw!r}: connection left open")

    def test_message_over_the_limit(self):
        # Exactly the limit without a NUL: too large (the limit counts the NUL).
        c = self.client()
        c.send(b"{" + b" " * (LIMIT - 1))
        self.assertError(c.recv(), G + ".MessageTooLarge", {"limit": LIMIT})
        self.assertTrue(c.closed())

        # Far over it: the daemon answers after the first 64 KiB and closes;
        # the rest of our send may fail.
        c = self.client()
        big = json.dumps({"method": G + ".GetUnit", "parameters": {"unit": "x" * (4 * LIMIT)}}).encode() + b"\0"
        t = threading.Thread(target=lambda: self._send_ignoring_errors(c, big))
        t.start()
        r = c.recv()
        t.join()
        self.assertError(r, G + ".MessageTooLarge")
        self.assertTrue(c.closed())

        # One byte under: answered (an unknown unit), connection stays.
        c = self.client()
        head = json.dumps({"method": G + ".GetUnit", "parameters": {"unit": ""}}).encode()
        pad = LIMIT - 1 - len(head)
        msg = json.dumps({"method": G + ".GetUnit", "parameters": {"unit": "y" * pad}}).encode()
        self.assertEqual(len(msg), LIMIT - 1)
        c.send(msg + b"\0")
        self.assertError(c.recv(), G + ".UnitNotFound")
        self.assertEqual(c.call(G + ".GetStatus")["parameters"]["version"], self.status()["version"])

    @staticmethod
    def _send_ignoring_errors(c, data):
        try:
            c.s.sendall(data)
        except OSError:
            pass

    # ---- well-formed calls the daemon refuses: error, connection stays ---

    def test_unknown_method_and_interface(self):
        c = self.client()
        self.assertError(c.call(G + ".NoSuchMethod"), "org.varlink.service.MethodNotFound",
                         {"method": G + ".NoSuchMethod"})
        self.assertError(c.call("org.varlink.service.NoSuchMethod"), "org.varlink.service.MethodNotFound")
        self.assertError(c.call("org.example.Nothing.Ping"), "org.varlink.service.InterfaceNotFound",
                         {"interface": "org.example.Nothing"})
        self.assertError(c.call("NoDots"), "org.varlink.service.InterfaceNotFound")
        self.assertError(c.call("org.varlink.service.GetInterfaceDescription", {"interface": "org.example.x"}),
                         "org.varlink.service.InterfaceNotFound", {"interface": "org.example.x"})
        self.assertError(c.call(G + ".GetStatus", upgrade=True), "org.varlink.service.MethodNotImplemented")
        # Still usable.
        self.assertIn("ticks", c.call(G + ".GetStatus")["parameters"])

    def test_wrong_parameter_types(self):
        c = self.client()
        bad = "org.varlink.service.InvalidParameter"
        cases = [
            (G + ".GetUnit", {"unit": 3}, "unit"),
            (G + ".GetUnit", {"unit": None}, "unit"),
            (G + ".GetUnit", {"unit": ["app.slice"]}, "unit"),
            (G + ".GetUnit", {}, "unit"),
            (G + ".GetUnit", None, "unit"),
            (G + ".GetUnit", {"unit": "app.slice", "extra": 1}, "extra"),
            (G + ".Explain", {"unit": {"name": "app.slice"}}, "unit"),
            (G + ".GetHistory", {"unit": "app.slice", "limit": "5"}, "limit"),
            (G + ".GetHistory", {"unit": "app.slice", "limit": 1.5}, "limit"),
            (G + ".GetHistory", {"unit": "app.slice", "limit": True}, "limit"),
            (G + ".GetStatus", {"verbose": True}, "verbose"),
            (G + ".Pause", {"unit": 1}, "unit"),
            ("org.varlink.service.GetInterfaceDescription", {"interface": 1}, "interface"),
            ("org.varlink.service.GetInterfaceDescription", {}, "interface"),
        ]
        for method, params, name in cases:
            self.assertError(c.call(method, params), bad, {"parameter": name})
        self.assertError(c.call(G + ".GetStatus", []), bad, {"parameter": "parameters"})
        self.assertError(c.call(G + ".GetStatus", "x"), bad, {"parameter": "parameters"})
        # Well typed, refused by value: the interface's own error.
        r = c.call(G + ".GetHistory", {"unit": "app.slice", "limit": 0})
        self.assertError(r, G + ".InvalidParameter")
        self.assertEqual(r["parameters"]["parameter"], "limit")
        self.assertError(c.call(G + ".GetHistory", {"unit": "app.slice", "limit": -3}), G + ".InvalidParameter")
        self.assertError(c.call(G + ".GetUnit", {"unit": "nope.slice"}), G + ".UnitNotFound", {"unit": "nope.slice"})
        self.assertError(c.call(G + ".Pause", {"unit": "nope.slice"}), G + ".UnitNotFound")
        # null parameters and an explicit null optional are fine.
        self.assertIn("ticks", c.call(G + ".GetStatus", None)["parameters"])
        r = c.call(G + ".GetHistory", {"unit": "app.slice", "limit": None})
        self.assertIn("entries", r["parameters"])
        # Unknown top-level keys are ignored (forward compatibility).
        self.assertIn("ticks", c.call(G + ".GetStatus", future_field={"x": 1})["parameters"])

    def test_oneway_more_and_pipelining(self):
        c = self.client()
        # Three calls in one write, a oneway one in the middle: two replies,
        # in order.
        c.send(json.dumps({"method": G + ".GetUnit", "parameters": {"unit": "app.slice"}}).encode() + b"\0" +
               json.dumps({"method": G + ".GetStatus", "oneway": True}).encode() + b"\0" +
               json.dumps({"method": G + ".GetUnit", "parameters": {"unit": "db.slice"}}).encode() + b"\0")
        self.assertEqual(c.recv()["parameters"]["unit"]["name"], "app.slice")
        self.assertEqual(c.recv()["parameters"]["unit"]["name"], "db.slice")
        # A oneway error is not answered either.
        c.send({"method": G + ".Nope", "oneway": True})
        r = c.call(G + ".GetStatus", more=True)
        self.assertIn("ticks", r["parameters"])
        self.assertNotIn("continues", r)

    def test_partial_message_then_close(self):
        # Half a message and EOF: nothing to answer, the connection goes.
        c = self.client()
        c.send(b'{"method": "io.bwgov.Governor.GetSt')
        c.s.shutdown(socket.SHUT_WR)
        self.assertTrue(c.closed())
        # A complete call then EOF (shutdown of our side only): answered.
        c = self.client()
        c.send({"method": G + ".GetStatus"})
        c.s.shutdown(socket.SHUT_WR)
        self.assertIn("ticks", c.recv()["parameters"])
        self.assertTrue(c.closed())

    # ---- resource abuse ---------------------------------------------------

    def status(self, timeout=10):
        # Right after a flood the daemon may still be at its connection
        # limit (closes not yet seen): a refused connection is retried.
        deadline = time.monotonic() + timeout
        while True:
            r = vc.call(self.path, G + ".GetStatus")
            if r is not None or time.monotonic() >= deadline:
                self.assertIsNotNone(r, "GetStatus got no reply")
                return r["parameters"]
            time.sleep(0.1)

    def wait_connections(self, n, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.status()["connections"] > n:
            time.sleep(0.1)
        self.assertEqual(self.status()["connections"], n)

    def test_client_that_never_reads(self):
        # Fill the socket with calls whose replies we never read, until the
        # kernel buffers are full and our sends would block.
        stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(stuck.close)
        stuck.connect(self.path)
        stuck.setblocking(False)
        msg = json.dumps({"method": G + ".GetHistory", "parameters": {"unit": "app.slice"}}).encode() + b"\0"
        sent = 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                sent += stuck.send(msg * 64)
            except BlockingIOError:
                # Give the daemon a moment to drain what it can, then confirm.
                time.sleep(0.2)
                try:
                    sent += stuck.send(msg * 64)
                except BlockingIOError:
                    break
        self.assertGreater(sent, 0)

        # Others are served at once while it is stuck, and the loop ticks.
        t0 = vc.ticks(self.path)
        for _ in range(20):
            start = time.monotonic()
            st = self.status()
            self.assertLess(time.monotonic() - start, 1.0, "a reply took over a second")
            self.assertGreaterEqual(st["connections"], 2)
        vc.wait_ticks_advance(self.path, t0, 5)

        # The daemon drops the stuck client within its 10 s stall timeout
        # (plus slack): the connection count comes back to one (ours).
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and self.status()["connections"] > 1:
            time.sleep(0.2)
        self.assertEqual(self.status()["connections"], 1, "stuck client never dropped")
        self.assertIn("read none of", self.daemon.logtext())
        # Its socket sees the end after the data the daemon had sent.
        stuck.setblocking(True)
        stuck.settimeout(5)
        try:
            while stuck.recv(1 << 20):
                pass
        except (ConnectionResetError, BrokenPipeError):
            pass

    def test_deeply_nested(self):
        # Nesting past what the parser follows: not JSON to us, closed.
        c = self.client()
        c.send(b"[" * 30000 + b"]" * 30000 + b"\0")
        r = c.recv()
        self.assertError(r, G + ".InvalidMessage")
        self.assertTrue(c.closed())
        c = self.client()
        c.send(b'{"method": "io.bwgov.Governor.GetStatus", "parameters": {"x": ' + b'{"a":' * 8000 + b'1' +
               b'}' * 8000 + b'}}\0')
        self.assertError(c.recv(), G + ".InvalidMessage")
        self.assertTrue(c.closed())
        # Nesting the parser follows, where a string is wanted: the
        # parameter named, the connection kept.
        c = self.client()
        deep = json.loads("[" * 500 + "]" * 500)
        self.assertError(c.call(G + ".GetUnit", {"unit": deep}), "org.varlink.service.InvalidParameter",
                         {"parameter": "unit"})
        self.assertIn("ticks", c.call(G + ".GetStatus")["parameters"])

    def test_many_clients(self):
        n = 500
        socks = []
        try:
            for _ in range(n):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(10)
                s.connect(self.path)
                socks.append(s)
            msg = json.dumps({"method": G + ".GetStatus"}).encode() + b"\0"
            for s in socks:
                try:
                    s.sendall(msg)
                except (BrokenPipeError, ConnectionResetError):
                    pass
            answered = closed = 0
            for s in socks:
                buf = b""
                try:
                    while b"\0" not in buf:
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        buf += chunk
                except (ConnectionResetError, BrokenPipeError):
                    pass
                if b"\0" in buf:
                    r = json.loads(buf.split(b"\0")[0])
                    self.assertIn("ticks", r["parameters"])
                    answered += 1
                else:
                    closed += 1
            self.assertEqual(answered + closed, n)
            # The limit is 256: the first ones in are served, the rest closed.
            self.assertGreaterEqual(answered, 200)
            self.assertLessEqual(answered, 256)
            self.assertGreaterEqual(closed, n - 256)
        finally:
            for s in socks:
                s.close()
        self.wait_connections(1)

    def test_idle_connections_time_out(self):
        # Issue 17, finding 3: held idle, connections kept others out for
        # good. One that completes no call for 60 s is closed, silent or
        # dribbling a call that never ends; one that calls every 20 s stays.
        silent, partial, busy = self.client(), self.client(), self.client()
        t0 = time.monotonic()
        next_call = t0
        while time.monotonic() - t0 < 50:
            if time.monotonic() >= next_call:
                self.assertIn("ticks", busy.call(G + ".GetStatus")["parameters"])
                next_call += 20
            partial.send(b" ")                  # whitespace without a NUL: never a call
            time.sleep(5)
        self.assertFalse(silent.closed(timeout=0.5), "closed before 60 s")
        self.assertTrue(silent.closed(timeout=20), "an idle connection still open after 75 s")
        self.assertLess(time.monotonic() - t0, 65)
        self.assertTrue(partial.closed(timeout=5), "a connection that never completes a call still open")
        self.assertIn("ticks", busy.call(G + ".GetStatus")["parameters"])
        self.assertRegex(self.daemon.logtext(),
                         r"Varlink: connection of pid \d+ \(uid \d+\) made no call for 60s, closing")

    def test_second_daemon_refused(self):
        # Another bwgovd on the same runtime directory must not take the
        # live socket away.
        import subprocess
        b = self.daemon.base
        p = subprocess.run([vc.BWGOVD, "--config-dir", os.path.join(b, "conf"),
                            "--state-dir", os.path.join(b, "state-second"), "--runtime-dir", os.path.join(b, "run"),
                            "--cgroup-root", os.path.join(b, "cg"), "--host-pressure", os.path.join(b, "host-pressure")],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("another process listens on", p.stderr)
        self.assertIn("ticks", vc.call(self.path, G + ".GetStatus")["parameters"])

    def test_connection_churn(self):
        # Connect, call, disconnect, quickly and many times; plus clients
        # that vanish mid-reply.
        for i in range(200):
            c = vc.RawClient(self.path)
            if i % 2:
                c.send({"method": G + ".CheckKernel"})
            else:
                self.assertIn("verdict", c.call(G + ".CheckKernel")["parameters"])
            c.close()
        self.wait_connections(1)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def storm(path):
    """One round of everything hostile: 300 clients sending just under the
    message limit, garbage, nesting, oversized messages; then all gone."""
    socks = []
    near = json.dumps({"method": G + ".GetUnit", "parameters": {"unit": "z" * (LIMIT - 200)}}).encode() + b"\0"
    bad = [b"{not json\0", b"[" * 30000 + b"\0", b"{" + b" " * LIMIT, near]
    for i in range(300):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(path)
            s.sendall(bad[i % len(bad)])
        except OSError:
            pass
        socks.append(s)
    for s in socks:
        try:
            s.recv(1 << 16)
        except OSError:
            pass
        s.close()


class MemoryBounded(unittest.TestCase):
    """Rounds of hostile clients leave the daemon's resident memory where
    the first round left it: nothing a client sends is kept. ASan's
    quarantine (which holds freed memory on purpose) is turned off for this
    daemon so that what is measured is the daemon's."""

    def test_rounds_of_hostile_clients(self):
        if not os.path.exists(vc.BWGOVD):
            vc.skip(f"bwgovd not built at {vc.BWGOVD}")
        asan = os.environ.get("ASAN_OPTIONS", "")
        env = {"ASAN_OPTIONS": (asan + ":" if asan else "") + "quarantine_size_mb=0"}
        with vc.StaticDaemon(env=env) as d:
            pid = d.d.proc.pid
            path = d.socket_path
            rss = []
            for _ in range(6):
                storm(path)
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and vc.call(path, G + ".GetStatus")["parameters"]["connections"] > 1:
                    time.sleep(0.1)
                time.sleep(0.5)
                rss.append(rss_kib(pid))
            t0 = vc.ticks(path)
            vc.wait_ticks_advance(path, t0, 3)
            print(f"RSS after each round (KiB): {rss}", file=sys.stderr)
            self.assertLessEqual(max(rss[2:]) - rss[1], 2048, f"RSS grew round after round: {rss}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
