# SPDX-License-Identifier: LGPL-2.1-or-later
"""A full run in parts. The full run takes about three and a quarter hours
of a quiet host; it can be run as several `--only` parts (on different
days) and joined with
`tests/bench/apps/run --merge DIR --merge DIR ... --out DIR`. A part records
what it measured with: two digests of the working tree, one of the daemon's
sources (what bwgovd and bwgovctl are built from) and one of the benchmark's
protocol (the scenarios, the runner, the servers' set-up, the clients, the
comparator). merge() joins parts only when both digests are the same in
every part, none was interrupted, none is a quick run of a different kind
than the others, and no scenario is in two parts; the report is then made
from the joined records exactly as from one run."""

import hashlib
import json
import lzma
import os
import subprocess

# Relative to the repository. The report (report.py) and this file are left
# out: they only read records, and the report is made again at the merge.
DAEMON_PATHS = ("src", "include", "meson.build", "meson_options.txt")
PROTOCOL_PATHS = ("tests/bench/apps/bench.py", "tests/bench/apps/clients.py", "tests/bench/apps/cron.py",
                  "tests/bench/apps/runner.py",
                  "tests/bench/apps/scenarios.py", "tests/bench/apps/servers.py", "tests/bench/koordinator.py",
                  "tests/bench/harness", "tests/bench/bwgov-httpload.c", "tests/bench/httpload-parse.c",
                  "tests/bench/httpload-parse.h", "tests/bench/bwgov-reqserver.c", "tests/bench/bench-util.c",
                  "tests/bench/bench-util.h", "tests/bench/meson.build")


class MergeError(Exception):
    pass


def _files(repo, paths):
    out = []
    for p in paths:
        full = os.path.join(repo, p)
        if os.path.isdir(full):
            for d, dirs, names in os.walk(full):
                dirs[:] = sorted(x for x in dirs if x != "__pycache__")
                out += [os.path.relpath(os.path.join(d, n), repo) for n in names if not n.endswith(".pyc")]
        elif os.path.exists(full):
            out.append(p)
    return sorted(out)


def digest(repo, paths):
    """sha256 over the named files and directories' contents, by path."""
    h = hashlib.sha256()
    for rel in _files(repo, paths):
        with open(os.path.join(repo, rel), "rb") as f:
            data = f.read()
        h.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def git_head(repo, short=False):
    """(commit, dirty) of repo's work tree: (None, None) without git or a
    repository. tests/bench/run's results name their commit with it too."""
    try:
        commit = subprocess.run(["git", "-C", repo, "rev-parse"] + (["--short"] if short else []) + ["HEAD"],
                                capture_output=True, text=True).stdout.strip() or None
        if commit is None:
            return None, None
        dirty = bool(subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True).stdout.strip())
    except OSError:
        return None, None
    return commit, dirty


def provenance(repo):
    """What a run measured with; None without a repository."""
    if not repo or not os.path.isdir(repo):
        return None
    commit, dirty = git_head(repo)
    return {"commit": commit, "dirty": dirty, "daemon_sha256": digest(repo, DAEMON_PATHS),
            "protocol_sha256": digest(repo, PROTOCOL_PATHS)}


def load(path):
    """A part's result: path is a directory holding apps.json (what a run
    writes) or apps.json.xz, or one such file (a part kept in the
    repository, tests/bench/apps/results/). Raises OSError, ValueError
    (not JSON), or lzma.LZMAError and EOFError (not xz, or cut short)."""
    if os.path.isdir(path):
        plain = os.path.join(path, "apps.json")
        path = plain if os.path.exists(plain) or not os.path.exists(plain + ".xz") else plain + ".xz"
    if path.endswith(".xz"):
        with lzma.open(path, "rt") as f:
            return json.load(f)
    with open(path) as f:
        return json.load(f)


def merge(parts):
    """parts: [(name, result dict)] as apps.json holds them. Returns the
    joined result before summarise(); raises MergeError."""
    if len(parts) < 2:
        raise MergeError("--merge needs at least two parts")
    first_name, first = parts[0]
    src0 = first["meta"].get("source")
    seen = {}
    for name, res in parts:
        meta = res.get("meta", {})
        src = meta.get("source")
        if not src:
            raise MergeError(f"{name}: the part does not say what it measured with (run before parts were "
                             f"recorded); run it again")
        if meta.get("interrupted"):
            raise MergeError(f"{name}: the part was interrupted")
        for key, what in (("daemon_sha256", "the daemon's sources"), ("protocol_sha256", "the benchmark's protocol")):
            if src[key] != src0[key]:
                raise MergeError(f"{name}: {what} differ from {first_name}'s ({src[key][:12]} against "
                                 f"{src0[key][:12]}): parts must measure the same build with the same protocol")
        for key in ("quick", "bwgovd_config", "koordinator", "client_cpu", "shares", "outside_cron", "load_share"):
            if meta.get(key) != first["meta"].get(key):
                raise MergeError(f"{name}: {key} is {meta.get(key)!r}, {first_name}'s is "
                                 f"{first['meta'].get(key)!r}")
        for sc in res.get("scenarios", []):
            if sc["name"] in seen:
                raise MergeError(f"{name}: scenario {sc['name']} is also in {seen[sc['name']]}")
            seen[sc["name"]] = name
    meta = {k: v for k, v in first["meta"].items() if k not in ("elapsed_min", "prepare", "source")}
    meta["elapsed_min"] = round(sum(r["meta"].get("elapsed_min", 0) for _, r in parts), 2)
    meta["prepare"] = [n for _, r in parts for n in (r["meta"].get("prepare") or [])]
    meta["source"] = dict(src0, dirty=any(r["meta"]["source"].get("dirty") for _, r in parts),
                          commits=sorted({r["meta"]["source"].get("commit") or "unknown" for _, r in parts}))
    meta["parts"] = [{"part": n, "started": r["meta"].get("started"), "elapsed_min": r["meta"].get("elapsed_min"),
                      "commit": r["meta"]["source"].get("commit"), "loadavg_start": r["meta"].get("loadavg_start"),
                      "scenarios": [s["name"] for s in r["scenarios"]]} for n, r in parts]
    return {"meta": meta, "scenarios": [s for _, r in parts for s in r["scenarios"]],
            "records": [x for _, r in parts for x in r["records"]]}
