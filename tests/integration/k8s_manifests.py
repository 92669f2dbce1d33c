#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""deploy/kubernetes (issue 18), offline:

1. Schema: every manifest validates with kubernetes-validate (from PyPI,
   installed into a venv kept in the build directory; its schemas ship
   with it, nothing is fetched) against Kubernetes 1.31 and 1.34, --strict
   (an unknown field is an error).
2. Shape: the DaemonSet mounts the host's cgroup tree read-write, is not
   privileged, escalates nothing, drops every capability but SYS_RESOURCE
   and SYS_NICE (and BPF/PERFMON for the telemetry), runs bwgovd with the directories
   it mounts, probes liveness with bwgovctl on the socket it mounts; every
   ConfigMap key is rendered by the volume's items to the drop-in path its
   name spells, and no item names a missing key; Prometheus' annotations
   name the sidecar's port.
3. Behaviour: the ConfigMap rendered as the volume renders it is bwgovd's
   --config-dir on a simulated kubelet layout (kubepods.slice/
   kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/
   cri-containerd-<id>.scope, a best-effort pod, a guaranteed one): the
   burstable and best-effort pods and the containers are governed, the
   guaranteed pod and the QoS slices are not; the liveness probe's command
   answers 0 against that daemon's socket.

Skips (77) only when PyPI cannot be reached. No root.
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import varlink_common as vc  # noqa: E402

SOURCE = os.environ.get("BWGOV_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", ".."))
DEPLOY = os.path.join(SOURCE, "deploy", "kubernetes")
MANIFESTS = ["namespace.yaml", "configmap.yaml", "metrics-httpd.yaml", "daemonset.yaml"]
VALIDATOR = "kubernetes-validate==1.37.0"
K8S_VERSIONS = ["1.31.0", "1.34.0"]


def venv_python():
    venv = os.path.join(os.environ.get("BWGOV_BUILD_ROOT", "/tmp"), "k8s-venv")
    return vc.pypi_venv(venv, VALIDATOR, "import kubernetes_validate, yaml",
                        "https://pypi.org/simple/kubernetes-validate/")


failed = []


def check(ok, what, detail=""):
    print(("PASS: " if ok else "FAIL: ") + what + (f"\n{detail}" if detail and not ok else ""))
    if not ok:
        failed.append(what)


def schema(py):
    for v in K8S_VERSIONS:
        cmd = [py, "-m", "kubernetes_validate", "--strict", "--kubernetes-version", v] + \
              [os.path.join(DEPLOY, m) for m in MANIFESTS]
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode == 0, f"kubernetes-validate --strict, Kubernetes {v}: every manifest",
              f"{shlex.join(cmd)}\n{r.stdout}{r.stderr}")


def load():
    import yaml
    docs = {}
    for m in MANIFESTS:
        with open(os.path.join(DEPLOY, m)) as f:
            for d in yaml.safe_load_all(f):
                docs[(d["kind"], d["metadata"]["name"])] = d
    return docs


def shape(docs):
    ds = docs[("DaemonSet", "bwgovd")]
    cm = docs[("ConfigMap", "bwgov-config")]
    pod = ds["spec"]["template"]
    spec = pod["spec"]
    c = {x["name"]: x for x in spec["containers"]}["bwgovd"]
    sc = c["securityContext"]
    check(not sc.get("privileged", False), "bwgovd is not privileged")
    check(sc.get("allowPrivilegeEscalation") is False, "no privilege escalation")
    check(sc.get("readOnlyRootFilesystem") is True, "read-only root file system")
    check(sc["capabilities"]["drop"] == ["ALL"] and
          {"SYS_RESOURCE", "SYS_NICE"} <= set(sc["capabilities"]["add"]) <=
          {"SYS_RESOURCE", "SYS_NICE", "BPF", "PERFMON"},
          "every capability dropped but SYS_RESOURCE, SYS_NICE (its own SCHED_DEADLINE budget), BPF, PERFMON",
          str(sc["capabilities"]))
    vols = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    cg = mounts.get("/sys/fs/cgroup")
    check(cg is not None and not cg.get("readOnly", False) and
          vols[cg["name"]].get("hostPath", {}).get("path") == "/sys/fs/cgroup",
          "the host's /sys/fs/cgroup mounted read-write at /sys/fs/cgroup")
    args = c.get("args", [])
    for opt, path in (("--config-dir", "/etc/bwgov"), ("--state-dir", "/var/lib/bwgov"),
                      ("--runtime-dir", "/run/bwgov")):
        check(f"{opt}={path}" in args and path in mounts, f"bwgovd {opt}={path}, a mounted directory")
    check(vols[mounts["/var/lib/bwgov"]["name"]].get("hostPath") is not None,
          "the state on the host (a restarted pod finds what bwgovd wrote)")
    probe = c["livenessProbe"]["exec"]["command"]
    check(probe[0].endswith("bwgovctl") and "--socket=/run/bwgov/io.bwgov.Governor" in probe and "status" in probe,
          "liveness: bwgovctl status on the mounted socket", str(probe))
    items = vols[mounts["/etc/bwgov"]["name"]]["configMap"]["items"]
    keys = set(cm["data"])
    check({i["key"] for i in items} == keys, "the volume renders every ConfigMap key, and only those",
          f"keys {sorted(keys)}, items {sorted(i['key'] for i in items)}")
    check(all(i["path"] == i["key"].replace("_", "/", 1) for i in items),
          "each key <directory>_<file> renders to <directory>/<file>")
    ann = pod["metadata"]["annotations"]
    ports = [p["containerPort"] for x in spec["containers"] for p in x.get("ports", [])]
    check(ann.get("prometheus.io/scrape") == "true" and int(ann["prometheus.io/port"]) in ports,
          "Prometheus' annotations name the metrics sidecar's port")
    return cm, items, probe


def behaviour(cm, items, probe):
    import daemon_fixture as df
    base = tempfile.mkdtemp(prefix="bwgov-test-k8s-")
    try:
        conf = os.path.join(base, "conf")
        for i in items:
            p = os.path.join(conf, i["path"])
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(cm["data"][i["key"]])
        # The node's interval is the ConfigMap's; metrics each 250 ms here.
        os.makedirs(os.path.join(conf, "bwgov.conf.d"), exist_ok=True)
        with open(os.path.join(conf, "bwgov.conf.d", "90-test.conf"), "w") as f:
            f.write("[Governor]\nMetricsInterval=250ms\n")
        for d in ("cg", "state", "run"):
            os.makedirs(os.path.join(base, d))
        cgroot = os.path.join(base, "cg")
        with open(os.path.join(cgroot, "cgroup.controllers"), "w") as f:
            f.write("cpuset cpu io memory pids\n")
        with open(os.path.join(base, "host-pressure"), "w") as f:
            f.write("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        with open(os.path.join(base, "host-stat"), "w") as f:
            f.write("cpu  0 0 0 100000 0 0 0 0 0 0\n")
        kp = "kubepods.slice"
        bu = f"{kp}/kubepods-burstable.slice"
        be = f"{kp}/kubepods-besteffort.slice"
        cgs = {
            kp: 400000, bu: 300000, be: 200000,
            f"{bu}/kubepods-burstable-pod11_22.slice": 100000,
            f"{bu}/kubepods-burstable-pod11_22.slice/cri-containerd-aa.scope": 50000,
            f"{be}/kubepods-besteffort-pod33_44.slice": 100000,
            f"{be}/kubepods-besteffort-pod33_44.slice/cri-containerd-bb.scope": 50000,
            f"{kp}/kubepods-pod55_66.slice": 100000,
        }
        for path, q in cgs.items():
            df.SimCgroup(cgroot, path, q, 0)
        d = df.Daemon(base)
        d.start()
        try:
            governed = ["kubepods-burstable-pod11_22.slice", "cri-containerd-aa.scope",
                        "kubepods-besteffort-pod33_44.slice", "cri-containerd-bb.scope"]
            d.wait_for(lambda: all(d.metric("bwgov_unit_present", n) == 1 for n in governed), 20,
                       "the pods and containers governed")
            check(True, "the ConfigMap's drop-ins govern the burstable and best-effort pods and their containers")
            for n in ("kubepods.slice", "kubepods-burstable.slice", "kubepods-besteffort.slice",
                      "kubepods-pod55_66.slice"):
                check(d.metric("bwgov_unit_present", n) is None, f"{n} is not governed")
            sock = os.path.join(base, "run", vc.INTERFACE)
            cmd = [vc.BWGOVCTL if a.endswith("bwgovctl") else
                   (f"--socket={sock}" if a.startswith("--socket=") else a) for a in probe]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            check(r.returncode == 0, "the liveness probe's command answers 0", f"{cmd}: {r.stdout}{r.stderr}")
            d.signal(15)
            check(d.wait(20) == 0, "bwgovd stops cleanly")
            back = {}
            for p in cgs:
                with open(os.path.join(cgroot, p, "cpu.max")) as f:
                    back[p] = int(f.read().split()[0])
            check(back == cgs, "every baseline back after the stop", str(back))
        finally:
            if d.proc.poll() is None:
                d.proc.kill()
                d.wait()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def inner():
    schema(sys.executable)
    cm, items, probe = shape(load())
    behaviour(cm, items, probe)
    print(f"{'FAILED' if failed else 'OK'}: {len(failed)} failed checks")
    sys.exit(1 if failed else 0)


def outer():
    if not os.path.exists(vc.BWGOVD):
        vc.skip(f"bwgovd not built at {vc.BWGOVD}")
    py = venv_python()
    env = dict(os.environ, BWGOV_K8S_INNER="1")
    sys.exit(subprocess.run([py, os.path.abspath(__file__)] + sys.argv[1:], env=env).returncode)


if __name__ == "__main__":
    if os.environ.get("BWGOV_K8S_INNER"):
        inner()
    else:
        outer()
