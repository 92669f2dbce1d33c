#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A varlink client this project did not write, against the real bwgovd:
the Python `varlink` package from PyPI, installed into a venv (cached in
$BWGOV_VENV, default <build dir>/varlink-venv). It calls GetInfo,
GetInterfaceDescription and every read method; the description must be the
source file byte for byte and parse with the package's own parser, and
every reply (and error) must match the parsed interface exactly: each field
present with its declared type, no undeclared field, enums within their
values. Also starts bwgovd through the package's socket activation.

Prints SKIP and exits 77 only when pip cannot reach PyPI. No root needed.
"""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import varlink_common as vc  # noqa: E402

G = vc.INTERFACE


def venv_python():
    venv = os.environ.get("BWGOV_VENV") or os.path.join(os.environ.get("BWGOV_BUILD_ROOT", "/tmp"), "varlink-venv")
    return vc.pypi_venv(venv, "varlink", "import varlink", "https://pypi.org/simple/varlink/")


def outer():
    if not os.path.exists(vc.BWGOVD):
        vc.skip(f"bwgovd not built at {vc.BWGOVD}")
    py = venv_python()
    env = dict(os.environ, BWGOV_VARLINK_INNER="1")
    sys.exit(subprocess.run([py, os.path.abspath(__file__)] + sys.argv[1:], env=env).returncode)


# ---- inside the venv ----------------------------------------------------

def inner():
    import varlink
    from varlink.scanner import _Alias, _Array, _CustomType, _Dict, _Enum, _Maybe, _Object, _Struct

    def check(iface, t, v, path):
        """v must be of varlink type t, exactly."""
        if isinstance(t, _Maybe):
            if v is None:
                return
            t = t.element_type
        elif v is None:
            raise AssertionError(f"{path}: null for a non-optional field")
        while isinstance(t, (_CustomType, _Alias)):
            t = iface.members[t.name] if isinstance(t, _CustomType) else t.type
        if isinstance(t, bool):                 # before int: bool is an int
            assert isinstance(v, bool), f"{path}: {v!r} is not a bool"
        elif isinstance(t, int):
            assert isinstance(v, int) and not isinstance(v, bool), f"{path}: {v!r} is not an int"
        elif isinstance(t, float):
            assert isinstance(v, (int, float)) and not isinstance(v, bool), f"{path}: {v!r} is not a float"
        elif isinstance(t, str):
            assert isinstance(v, str), f"{path}: {v!r} is not a string"
        elif isinstance(t, _Enum):
            assert v in list(t.fields), f"{path}: {v!r} not one of {list(t.fields)}"
        elif isinstance(t, _Array):
            assert isinstance(v, list), f"{path}: not an array"
            for i, x in enumerate(v):
                check(iface, t.element_type, x, f"{path}[{i}]")
        elif isinstance(t, _Dict):
            assert isinstance(v, dict), f"{path}: not a map"
            for k, x in v.items():
                check(iface, t.element_type, x, f"{path}[{k}]")
        elif isinstance(t, _Object):
            pass
        elif isinstance(t, _Struct):
            assert isinstance(v, dict), f"{path}: not an object"
            extra = set(v) - set(t.fields)
            assert not extra, f"{path}: undeclared fields {sorted(extra)}"
            for name, ft in t.fields.items():
                # The daemon always sends every field, null when empty.
                assert name in v, f"{path}: field {name} missing"
                check(iface, ft, v[name], f"{path}.{name}")
        else:
            raise AssertionError(f"{path}: unexpected type {t!r}")

    class ClientTest(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            cls.daemon = vc.StaticDaemon().start()
            cls.address = "unix:" + cls.daemon.socket_path
            with open(vc.INTERFACE_FILE) as f:
                cls.source = f.read()

        @classmethod
        def tearDownClass(cls):
            rc = cls.daemon.stop()
            log = cls.daemon.logtext()
            cls.daemon.cleanup()
            if rc != 0:
                print(log[-4000:], file=sys.stderr)
            assert rc == 0, f"bwgovd exited with {rc}"

        def setUp(self):
            self.client = varlink.Client(address=self.address)
            self.addCleanup(self.client.cleanup)
            self.iface = self.client.get_interface(G)       # GetInterfaceDescription

        def raw_reply(self, method, params):
            """The reply as sent, through the package's own connection
            machinery (its proxies drop undeclared fields)."""
            conn = self.client.open(G)
            self.addCleanup(conn.close)
            import json
            conn._send_message(json.dumps({"method": f"{G}.{method}", "parameters": params}).encode())
            return json.loads(next(conn._next_message()))

        def check_method(self, method, params):
            m = self.iface.get_method(method)
            # 1. Through the package's proxy: it encodes the call from the
            #    signature and filters the reply through the out type.
            with self.client.open(G) as g:
                filtered = getattr(g, method)(**params)
            # 2. The raw reply, checked exactly against the out type.
            raw = self.raw_reply(method, params)
            self.assertNotIn("error", raw)
            check(self.iface, m.out_type, raw["parameters"], f"{method}()")
            # The proxy drops null fields, nothing else.
            self.assertEqual(set(filtered), {k for k, v in raw["parameters"].items() if v is not None})
            return raw["parameters"]

        def test_get_info(self):
            interfaces = self.client.get_interfaces()        # GetInfo
            self.assertEqual(interfaces, ["org.varlink.service", G])
            info = self.client.info
            service = self.client._interfaces["org.varlink.service"]     # the package's own copy
            check(service, service.get_method("GetInfo").out_type, dict(info), "GetInfo()")
            self.assertEqual(info["product"], "bwgovd")
            self.assertRegex(info["version"], r"^\d+\.\d+")

        def test_get_interface_description(self):
            self.assertEqual(self.iface.description, self.source, "served description differs from the source file")
            self.assertEqual(self.iface.name, G)
            methods = {n for n, m in self.iface.members.items() if type(m).__name__ == "_Method"}
            self.assertEqual(methods, {"GetStatus", "ListUnits", "GetUnit", "Explain", "GetHistory",
                                       "GetLatency", "CheckKernel", "Reload", "Pause", "Resume"})
            errors = {n for n, m in self.iface.members.items() if type(m).__name__ == "_Error"}
            self.assertLessEqual({"UnitNotFound", "PermissionDenied", "InvalidParameter"}, errors)
            # Our org.varlink.service description matches the package's.
            ours = varlink.Interface(self.client.get_interface("org.varlink.service").description)
            with open(os.path.join(os.path.dirname(varlink.__file__), "org.varlink.service.varlink")) as f:
                theirs = varlink.Interface(f.read())
            for name in ("GetInfo", "GetInterfaceDescription"):
                self.assertEqual(list(ours.get_method(name).in_type.fields), list(theirs.get_method(name).in_type.fields))
                self.assertEqual(list(ours.get_method(name).out_type.fields),
                                 list(theirs.get_method(name).out_type.fields))

        def test_read_methods(self):
            st = self.check_method("GetStatus", {})
            self.assertEqual(st["n_units"], len(vc.UNITS))
            self.assertGreater(st["ticks"], 0)
            units = self.check_method("ListUnits", {})["units"]
            self.assertEqual([u["name"] for u in units], sorted(vc.UNITS))
            for name in vc.UNITS:
                u = self.check_method("GetUnit", {"unit": name})
                self.assertEqual(u["unit"]["name"], name)
                e = self.check_method("Explain", {"unit": name})
                self.assertEqual(e["decision"] is None, vc.UNITS[name]["quota"] is None)
                # The newest entry first: the daemon keeps ticking, and an
                # entry made between the two calls must not fail the test.
                h1 = self.check_method("GetHistory", {"unit": name, "limit": 1})
                h = self.check_method("GetHistory", {"unit": name})
                self.assertEqual(len(h["entries"]) == 0, vc.UNITS[name]["quota"] is None)
                self.assertEqual(len(h1["entries"]), min(1, len(h["entries"])))
                for entry in h1["entries"]:
                    self.assertIn(entry, h["entries"][-2:])
            k = self.check_method("CheckKernel", {})
            self.assertIn(k["verdict"], ("ok", "required-missing", "could-not-check"))

        def test_errors_match_the_interface(self):
            with self.client.open(G) as g:
                with self.assertRaises(varlink.VarlinkError) as cm:
                    g.GetUnit(unit="no-such.slice")
            err = cm.exception
            self.assertEqual(err.error(), G + ".UnitNotFound")
            check(self.iface, self.iface.members["UnitNotFound"].type, err.parameters(), "UnitNotFound")
            raw = self.raw_reply("GetHistory", {"unit": "app.slice", "limit": 0})
            self.assertEqual(raw["error"], G + ".InvalidParameter")
            check(self.iface, self.iface.members["InvalidParameter"].type, raw["parameters"], "InvalidParameter")
            with self.client.open(G) as g:
                with self.assertRaises(varlink.InvalidParameter):
                    g._call("GetUnit", unit=5)

    class ActivationTest(unittest.TestCase):
        def test_socket_activation(self):
            # The package binds a socket, forks and execs bwgovd with
            # LISTEN_FDS=1: the daemon must serve that socket, not bind its own.
            d = vc.StaticDaemon().prepare()
            try:
                base = d.base
                log = os.path.join(base, "bwgovd.log")
                # Through sh only to send the daemon's log to a file: exec
                # keeps the pid that LISTEN_PID names.
                argv = ["/bin/sh", "-c", f'exec "$@" 2>>"{log}"', "sh",
                        vc.BWGOVD, "--config-dir", os.path.join(base, "conf"),
                        "--state-dir", os.path.join(base, "state"), "--runtime-dir", os.path.join(base, "run"),
                        "--cgroup-root", os.path.join(base, "cg"),
                        "--host-pressure", os.path.join(base, "host-pressure")]
                with varlink.Client.new_with_activate(argv) as client:
                    import time
                    deadline = time.monotonic() + 20
                    while True:
                        try:
                            with client.open(G) as g:
                                st = g.GetStatus()
                            if st["ticks"] > 0:
                                break
                        except (ConnectionError, OSError, BrokenPipeError):
                            pass
                        self.assertLess(time.monotonic(), deadline, "activated bwgovd never answered")
                        time.sleep(0.1)
                    self.assertEqual(st["n_units"], len(vc.UNITS))
                    self.assertFalse(os.path.exists(os.path.join(base, "run", G)), "bound its own socket too")
                with open(log) as f:
                    self.assertIn("on the socket from systemd", f.read())
            finally:
                d.cleanup()

    globals().update(ClientTest=ClientTest, ActivationTest=ActivationTest)
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)


if __name__ == "__main__":
    if os.environ.get("BWGOV_VARLINK_INNER") == "1":
        inner()
    else:
        outer()
