#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `bwgovctl check-kernel --probe --json` on this host's real kernel and
# cgroups (root only): the behaviour probes run in a scratch cgroup named
# bwgov-test-probe-<pid> that must be gone afterwards, and the picture must
# match what the host shows by itself. Uses the package's manifest when the
# source tree has one, else the test fixture manifest.
# Set BWGOV_PATCHED_KERNEL=1 when the running kernel carries the bwgov patches.
set -u

BWGOVCTL=$1
FIXTURES=$2
SOURCE_ROOT=$3

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
[ -r /proc/version ] || { echo "SKIP: no /proc/version"; exit 77; }

MANIFEST="$SOURCE_ROOT/subprojects/kernel-patches/manifest.json"
[ -f "$MANIFEST" ] || MANIFEST="$FIXTURES/kcheck/manifest/manifest.json"

OUT=$(mktemp /tmp/bwgov-test-check-kernel-host-XXXXXX) || exit 1
trap 'rm -f "$OUT"' EXIT

"$BWGOVCTL" check-kernel --manifest="$MANIFEST" --json --probe --scratch-prefix=bwgov-test-probe >"$OUT"
rc=$?
echo "manifest: $MANIFEST, exit code $rc"
case $rc in
        0|1|2) ;;
        *) echo "FAIL: exit code $rc"; cat "$OUT"; exit 1 ;;
esac

python3 - "$OUT" "$rc" "${BWGOV_PATCHED_KERNEL:-0}" "$MANIFEST" <<'PY'
import glob, json, os, sys

out, rc, patched = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
d = json.load(open(out))
m = json.load(open(sys.argv[4]))
# The series' own changes have a patch in every branch: mainline lacks them
# everywhere. An out-of-tree item patched in some branches only fixes a fault
# of those (7.2's nested-sibling-throttle): other kernels may not have it.
branches = set(m.get("branches", {}))
everywhere = {i["id"] for i in m["items"]
              if i["kind"] == "out-of-tree" and branches and
              branches <= {p.split("/")[0] for p in i["patches"]}}
failed = []

def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failed.append(what)

check(d["items"] is not None, "manifest loaded")
for it in d["items"] or []:
    print("  %-32s %-8s %s" % (it["id"], it["status"], it["detected_by"]))

check(d["manifest"]["valid"] and d["manifest"]["files_verified"], "manifest valid, files verified")
check(d["probes"]["behaviour"], "behaviour probes ran")
check({"ok": 0, "required-missing": 1, "could-not-check": 2}[d["verdict"]] == rc, "exit code matches the verdict")

bw_root = d["cgroup"]["bandwidth_root"]
v1 = d["cgroup"]["layout"] != "v2"
dirs = [bw_root] + ([] if v1 else sorted(p for p in glob.glob(bw_root + "/*/") if os.path.exists(p + "cpu.max")))[:1]
def has_file(*names):
    return any(os.path.exists(os.path.join(x, n)) for x in dirs for n in names)

k = d["kernel"]
ver = (k["major"], k["minor"])
for it in d["items"] or []:
    e, s = it["effect"], it["status"]
    if e == "no-burst":
        check(s == ("present" if has_file("cpu.max.burst", "cpu.cfs_burst_us") else "absent"),
              "%s matches the burst file" % it["id"])
    if e == "burst-repair" and ver >= (6, 10):
        check(s == "present", "%s present on %s" % (it["id"], k["version"]))
    if e == "no-psi":
        check(s == ("present" if os.path.exists("/proc/pressure/cpu") else "absent"),
              "%s matches /proc/pressure/cpu" % it["id"])
    if it["id"] == "cpu-stat-local" or "cpu.stat.local" in it["detected_by"]:
        check(s == ("present" if has_file("cpu.stat.local") else "absent"), "%s matches cpu.stat.local" % it["id"])
    if it["kind"] == "out-of-tree" and it["id"] not in everywhere:
        b = it.get("behaviour")
        check(s != "absent" or not patched, "%s %s on an %s kernel (the fault of a branch's kernel only)"
              % (it["id"], s, "patched" if patched else "unpatched"))
        check(b in ("unknown", None) or b == s, "%s: the behaviour probe (%s) decided it (%s)" % (it["id"], b, s))
    elif it["kind"] == "out-of-tree":
        check(s != ("absent" if patched else "present"),
              "%s %s on an %s kernel" % (it["id"], s, "patched" if patched else "unpatched"))
        b = it.get("behaviour")
        check(b != ("absent" if patched else "present"),
              "%s: the behaviour probe saw %s on an %s kernel" % (it["id"], b, "patched" if patched else "unpatched"))

caps = d["capabilities"]
check(caps["has_burst"] == has_file("cpu.max.burst", "cpu.cfs_burst_us"), "capability has_burst")
check(caps["has_psi"] == os.path.exists("/proc/pressure/cpu"), "capability has_psi")
if ver >= (6, 10):
    check(not caps["burst_bug"], "no burst bug on %s" % k["version"])

left = [p for r in {bw_root, d["cgroup"].get("v2_root") or bw_root} for p in glob.glob(r + "/bwgov-test-probe-*")]
check(not left, "no scratch cgroup left behind %s" % left)
sys.exit(1 if failed else 0)
PY
