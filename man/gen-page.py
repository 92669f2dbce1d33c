#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Expand a man page template (scdoc source) for scdoc.

  gen-page.py [--set NAME=VALUE]... [--manifest FILE] INPUT OUTPUT

Replaces every @NAME@ given with --set. With --manifest, also expands the
markers that come from the kernel patch-set manifest, so that
bwgov-kernel-patches(7) never drifts from it:

  @PATCHSET_VERSION@    the manifest's patchset_version
  @MANIFEST_BRANCHES@   one entry per branch: base tree and series
  @MANIFEST_ITEMS@      one subsection per item: kind, importance, upstream
                        and stable releases, patches, detection, fallback

Fails when a @NAME@ marker is left over, so a page never ships with one.
Only the standard library: it runs at build time.
"""

import argparse
import json
import re
import sys

# How each detection method reads in a sentence; tests/integration/man-pages.py
# checks that every method and probe the manifest uses is described in the
# page's DETECTION section too.
def describe_detect(d):
    m = d.get("method")
    if m == "version":
        return "the kernel version"
    if m == "file":
        return "the file " + " or ".join(code(x) for x in d.get("any", []))
    if m == "proc-file":
        return "the file " + code(d.get("path", "?"))
    if m == "cpustat-field":
        return "the cpu.stat field " + " or ".join(code(x) for x in d.get("any", []))
    if m == "psi-full":
        return "a \"full\" line in cpu.pressure"
    if m == "kconfig":
        return "the kernel option " + code(d.get("option", "?"))
    if m == "btf-member":
        return "the BTF member " + code("%s.%s" % (d.get("struct", "?"), d.get("member", "?")))
    if m == "behaviour":
        return "the behaviour probe " + code(d.get("probe", "?"))
    return "the method " + code(str(m))


def esc(s):
    """Plain text for scdoc: escape its markup characters, one line."""
    s = " ".join(str(s).split())
    s = s.replace("\\", "\\\\")
    for c in "*_":
        s = s.replace(c, "\\" + c)
    # "++" at the end of a line is a line break in scdoc.
    return s.replace("++", "+\\+")


def code(s):
    return "*" + esc(s) + "*"


def version_key(v):
    return [int(x) if x.isdigit() else x for x in re.split(r"[.-]", v)]


def sentence(s):
    s = esc(s)
    return s if s.endswith((".", "!", "?")) else s + "."


def branches(manifest):
    out = []
    for name, b in sorted(manifest.get("branches", {}).items(), key=lambda kv: version_key(kv[0])):
        out.append("*%s/series*" % esc(name))
        out.append("\tAgainst %s:" % esc(b.get("base", "?")))
        out.append("")
        for p in b.get("series", []):
            out.append("\t- " + esc(p.split("/", 1)[-1]))
        out.append("")
    return "\n".join(out).rstrip("\n")


def items(manifest):
    out = []
    for it in manifest.get("items", []):
        out.append("## " + esc(it["id"]))
        out.append("")
        out.append(sentence(it.get("title", "")))
        out.append("")
        lines = []
        lines.append("*Kind:* %s. *Importance:* %s." % (esc(it.get("kind", "?")), esc(it.get("importance", "?"))))
        up = it.get("upstream")
        if up:
            text = "commit %s, Linux %s" % (esc(up.get("commit", "?")), esc(up.get("release", "?")))
        elif it.get("kind") == "out-of-tree":
            text = "none, only this package carries it"
        else:
            text = "none"
        stable = it.get("stable") or {}
        if stable:
            text += "; stable: " + ", ".join(esc(stable[k]) for k in sorted(stable, key=version_key))
        lines.append("*Upstream:* " + text + ".")
        if it.get("patches"):
            lines.append("*Patches:* " + ", ".join(esc(p) for p in it["patches"]) + ".")
        dets = [describe_detect(d) for d in it.get("detect", [])]
        if dets:
            lines.append("*Detected by:* " + (", then ".join(dets)) + ".")
        lines.append("*Without it:* %s (effect: %s)" % (sentence(it.get("fallback", "")), esc(it.get("effect", "?"))))
        if it.get("note"):
            lines.append("*Note:* " + ("" if it.get("verified") else "not fully verified. ") + sentence(it["note"]))
        elif not it.get("verified"):
            lines.append("*Note:* not fully verified.")
        out.append("++\n".join(lines))
        out.append("")
    return "\n".join(out).rstrip("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--manifest")
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args()

    with open(a.input, encoding="utf-8") as f:
        text = f.read()

    values = {}
    for s in a.set:
        name, sep, value = s.partition("=")
        if not sep or not re.fullmatch(r"[A-Z_]+", name):
            ap.error("--set wants NAME=VALUE, got %r" % s)
        values[name] = value

    if a.manifest:
        with open(a.manifest, encoding="utf-8") as f:
            manifest = json.load(f)
        values["PATCHSET_VERSION"] = esc(manifest.get("patchset_version", "?"))
        values["MANIFEST_BRANCHES"] = branches(manifest)
        values["MANIFEST_ITEMS"] = items(manifest)

    text = re.sub(r"@([A-Z_]+)@", lambda m: values.get(m.group(1), m.group(0)), text)

    left = sorted(set(re.findall(r"@[A-Z_]+@", text)))
    if left:
        print("%s: unexpanded %s" % (a.input, ", ".join(left)), file=sys.stderr)
        return 1

    with open(a.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
