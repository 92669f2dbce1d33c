#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks of the man pages (man/*.scd, built with scdoc).

  man-pages.py lint PAGE...
      mandoc -Tlint on each built page. Fails on every message of level
      WARNING or above (WARNING, ERROR, UNSUPP), except the empty-paragraph
      warnings that scdoc 1.11 emits after every heading (".P" before and
      after ".SH"/".SS": harmless, and not ours to fix). WARNING is the level
      that means "the output is probably wrong" (a tab in filled text, a
      broken table, a block that is not closed); STYLE messages (source
      lines longer than 80 bytes after scdoc's escapes, a lower-case title,
      which is scdoc's convention) are printed but not enforced.
  man-pages.py render PAGE...
      man -l on each page (man-db, groff): must succeed, print no warning
      (--warnings: lines that cannot be broken, bad escapes...) and show
      NAME.
  man-pages.py config-keys HELPER SCD
      Every "Section.Key" that HELPER (linked with libbwgov) prints from
      bw_config_known_keys() is documented in SCD under "# [Section] SECTION
      OPTIONS" as a "*Key=*" entry with Type:, Default: and Example: lines
      (and Range: unless the type is a list of names or a boolean), and
      every key documented there is one the parser knows.
  man-pages.py bwgovctl BWGOVCTL SCD VARLINK
      Every verb in the command section of "BWGOVCTL --help" is documented
      in the COMMANDS section of SCD; every option of "BWGOVCTL --help" and
      of "BWGOVCTL VERB --help" appears in SCD as *--option*; every field of
      the varlink interface VARLINK (which --json prints unchanged) is in
      the JSON OUTPUT section.
  man-pages.py bwgovd BWGOVD SCD METRICS_C LOG_C POLICY_C DAEMON_C...
      Every option of "BWGOVD --help", every metric of METRICS_C, every
      journal field of LOG_C, every rule name of POLICY_C and every change
      reason in the DAEMON_C files is in SCD.
  man-pages.py kernel-patches MANIFEST TEMPLATE PAGE
      Every manifest item is a subsection of the built PAGE, and every
      detection method and behaviour probe the manifest uses is described in
      the DETECTION section of TEMPLATE.

Exit 0 on success, 1 on failure, 77 (meson's skip) when a needed tool is
missing.
"""

import json
import os
import re
import shutil
import subprocess
import sys

SKIP = 77

# scdoc 1.11 writes ".P" around every heading; mandoc reports each of them.
SCDOC_NOISE = re.compile(r"WARNING: skipping paragraph macro: (PP|P|LP) (empty|after SH|after SS)$")
LEVELS = re.compile(r": (BASE|STYLE|WARNING|ERROR|UNSUPP): ")


class Failures:
    def __init__(self):
        self.n = 0

    def __call__(self, msg):
        self.n += 1
        print("FAIL: " + msg)


def need(tool):
    path = shutil.which(tool)
    if not path:
        print("SKIP: %s not found" % tool)
        sys.exit(SKIP)
    return path


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def scd_sections(text):
    """{heading: [lines]} of the top-level "# HEADING" sections."""
    sections, cur = {}, None
    for line in text.split("\n"):
        if line.startswith("# "):
            cur = line[2:].strip()
            sections[cur] = []
        elif cur is not None:
            sections[cur].append(line)
    return sections


def scd_terms(lines):
    """Definition-list terms ("*term*..." at column 0) with their bodies."""
    terms, cur = {}, None
    for line in lines:
        m = re.match(r"^\*([^*]+)\*", line)
        if m:
            cur = m.group(1)
            terms[cur] = []
        elif cur is not None:
            terms[cur].append(line)
    return terms


# ---- lint ----------------------------------------------------------------

def cmd_lint(pages):
    mandoc = need("mandoc")
    fail = Failures()
    if not pages:
        print("SKIP: no man pages built (scdoc missing?)")
        return SKIP
    for page in pages:
        p = subprocess.run([mandoc, "-Tlint", "-W", "style", page],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        n_style, n_before = 0, fail.n
        for line in p.stdout.splitlines():
            if SCDOC_NOISE.search(line):
                continue
            m = LEVELS.search(line)
            level = m.group(1) if m else "ERROR"
            if level in ("BASE", "STYLE"):
                n_style += 1
                continue
            fail("%s: %s" % (os.path.basename(page), line))
        if p.returncode > 3 or p.returncode < 0:
            fail("%s: mandoc exited with %d" % (page, p.returncode))
        if fail.n == n_before:
            print("ok: %s (%d style notes, not enforced)" % (os.path.basename(page), n_style))
    return 1 if fail.n else 0


# ---- render --------------------------------------------------------------

def cmd_render(pages):
    man = need("man")
    need("groff")
    fail = Failures()
    if not pages:
        print("SKIP: no man pages built (scdoc missing?)")
        return SKIP
    env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat", MAN_DISABLE_SECCOMP="1",
               LC_ALL="C.UTF-8")
    env.pop("MAN_KEEP_FORMATTING", None)
    for page in pages:
        p = subprocess.run([man, "--warnings", "-l", page], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env)
        name = os.path.basename(page)
        if p.returncode != 0:
            fail("%s: man -l exited with %d: %s" % (name, p.returncode, p.stderr.strip()))
            continue
        for line in p.stderr.splitlines():
            fail("%s: %s" % (name, line))
        if not re.search(r"^NAME$", p.stdout, re.M) or len(p.stdout.splitlines()) < 20:
            fail("%s: rendered page has no NAME section or is nearly empty" % name)
        else:
            print("ok: %s (%d lines)" % (name, len(p.stdout.splitlines())))
    return 1 if fail.n else 0


# ---- config keys ---------------------------------------------------------

def cmd_config_keys(helper, scd):
    fail = Failures()
    out = subprocess.run([helper], stdout=subprocess.PIPE, check=True, text=True).stdout
    known = [l.strip() for l in out.splitlines() if l.strip()]
    if not known:
        fail("%s printed no keys" % helper)

    documented = {}
    for heading, lines in scd_sections(read(scd)).items():
        m = re.fullmatch(r"\[(\w+)\] SECTION OPTIONS", heading)
        if not m:
            continue
        for term, body in scd_terms(lines).items():
            km = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)=", term)
            if not km:
                fail("%s: [%s]: entry *%s* is not a *Key=* term" % (scd, m.group(1), term))
                continue
            documented["%s.%s" % (m.group(1), km.group(1))] = "\n".join(body)

    if not documented:
        fail("%s: no \"# [Section] SECTION OPTIONS\" with *Key=* entries found" % scd)

    for key in known:
        body = documented.get(key)
        if body is None:
            fail("%s is accepted by the parser but not documented in %s" % (key, os.path.basename(scd)))
            continue
        name = key.split(".", 1)[1]
        type_line = re.search(r"^\s*Type: (.*)$", body, re.M)
        if not type_line:
            fail("%s: no Type: line" % key)
        if not re.search(r"^\s*Default: ", body, re.M):
            fail("%s: no Default: line" % key)
        if not re.search(r"^\s*Example: .*\*%s=[^*]+\*" % re.escape(name), body, re.M):
            fail("%s: no Example: line with *%s=...*" % (key, name))
        if type_line and not re.search(r"one of|boolean", type_line.group(1)) and \
                not re.search(r"^\s*Range: ", body, re.M):
            fail("%s: no Range: line" % key)
    for key in documented:
        if key not in known:
            fail("%s is documented in %s but the parser does not accept it" % (key, os.path.basename(scd)))

    if not fail.n:
        print("ok: %d keys documented: %s" % (len(known), " ".join(known)))
    return 1 if fail.n else 0


# ---- bwgovctl ------------------------------------------------------------

def help_section(text, header_re):
    """Lines of the --help section whose header line matches header_re: the
    header is a non-indented line ending in ':'; the section runs until the
    next non-indented line that is not another header of the same kind."""
    lines, inside = [], False
    for line in text.splitlines():
        if line and not line[0].isspace():
            is_header = line.rstrip().endswith(":") and re.search(header_re, line, re.I)
            if is_header:
                inside = True
                continue
            if inside:
                break
            continue
        if inside:
            lines.append(line)
    return lines


def help_verbs(text):
    lines = [l for l in help_section(text, r"command|verb") if l.strip()]
    if not lines:
        return []
    indent = min(len(l) - len(l.lstrip()) for l in lines)
    verbs = []
    for l in lines:
        if len(l) - len(l.lstrip()) != indent:
            continue
        tok = l.split()[0]
        if re.fullmatch(r"[a-z][a-z0-9-]*", tok):
            verbs.append(tok)
    return verbs


def help_options(text):
    opts = set()
    for l in help_section(text, r"option"):
        opts.update(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])", l))
    return opts


def varlink_fields(path):
    """Field names of the types and method parameters of a varlink
    interface description (errors left out)."""
    text = re.sub(r"#.*", "", read(path))
    text = re.sub(r"error\s+\w+\s*\([^)]*\)", "", text)
    return set(re.findall(r"(\w+)\s*:", text))


def cmd_bwgovctl(bwgovctl, scd, varlink):
    fail = Failures()
    p = subprocess.run([bwgovctl, "--help"], stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail("bwgovctl --help exited with %d" % p.returncode)
    verbs = help_verbs(p.stdout)
    if not verbs:
        fail("no commands found in bwgovctl --help:\n" + p.stdout)
    text = read(scd)
    sections = scd_sections(text)
    commands = sections.get("COMMANDS")
    if commands is None:
        fail("%s has no COMMANDS section" % scd)
        commands = []
    terms = {t.split()[0] for t in scd_terms(commands)}
    for v in verbs:
        if v not in terms:
            fail("verb %r of bwgovctl --help is not documented in the COMMANDS section of %s"
                 % (v, os.path.basename(scd)))
    opts = help_options(p.stdout)
    # Each command's own options: "bwgovctl VERB --help" lists them in its
    # first column ("  -n --lines=N   ...", "     --json   ...").
    for v in verbs:
        vp = subprocess.run([bwgovctl, v, "--help"], stdout=subprocess.PIPE, text=True)
        if vp.returncode != 0:
            fail("bwgovctl %s --help exited with %d" % (v, vp.returncode))
        for line in vp.stdout.splitlines():
            m = re.match(r"^\s+((?:-\w[ ,]+)?--[a-z][a-z0-9-]*)", line)
            if m:
                opts.update(re.findall(r"--[a-z][a-z0-9-]*|-\w\b", m.group(1)))
    # Documented: a term of the OPTIONS section, or in the COMMANDS section
    # (options of one command, such as check-kernel's).
    where = "\n".join([l for l in sections.get("OPTIONS", []) if l.startswith("*")] + commands)
    for o in sorted(opts):
        if not re.search(r"\*%s[*=]" % re.escape(o), where):
            fail("option %s of bwgovctl --help is not documented in OPTIONS or COMMANDS of %s"
                 % (o, os.path.basename(scd)))
    # --json prints the varlink replies unchanged: every field of the
    # interface must be in the JSON OUTPUT schema.
    fields = varlink_fields(varlink)
    if len(fields) < 20:
        fail("found only %d fields in %s: the pattern is out of date" % (len(fields), varlink))
    schema = "\n".join(sections.get("JSON OUTPUT", []))
    for f in sorted(fields):
        if not re.search(r"(?<!\w)%s(?!\w)" % re.escape(f), schema):
            fail("field %s of %s is not in the JSON OUTPUT section of %s"
                 % (f, os.path.basename(varlink), os.path.basename(scd)))
    if not fail.n:
        print("ok: verbs %s; options %s; %d JSON fields" % (" ".join(verbs), " ".join(sorted(opts)), len(fields)))
    return 1 if fail.n else 0


# ---- bwgovd --------------------------------------------------------------

def cmd_bwgovd(bwgovd, scd, metrics_c, log_c, policy_c, *daemon_c):
    fail = Failures()
    text = read(scd)
    base = os.path.basename(scd)

    p = subprocess.run([bwgovd, "--help"], stdout=subprocess.PIPE, text=True)
    opts = set(re.findall(r"^\s+(?:-\w\s+)?(--[a-z][a-z0-9-]*)", p.stdout, re.M))
    if p.returncode != 0 or not opts:
        fail("bwgovd --help failed or lists no options")
    options = "\n".join(l for l in scd_sections(text).get("OPTIONS", []) if l.startswith("*"))
    for o in sorted(opts):
        if not re.search(r"\*%s[*=]" % re.escape(o), options):
            fail("option %s of bwgovd --help is not in the OPTIONS section of %s" % (o, base))

    metrics = set(re.findall(r"\b(bwgov_[a-z_]+)\b", read(metrics_c)))
    fields = set(re.findall(r"\b(BWGOV_[A-Z_]+)=", read(log_c)))
    rules = set(re.findall(r"\[BW_RULE_\w+\]\s*=\s*\{?\s*\"([a-z-]+)\"", read(policy_c)))
    mgr = "\n".join(read(f) for f in daemon_c)
    reasons = set(re.findall(r"unit_restore_baseline\(\s*[^,()]+,\s*\"([a-z-]+)\"\)", mgr))
    reasons |= set(re.findall(r"log_unit_change\([^;]*?,\s*\"([a-z-]+)\",\s*\n?\s*\"", mgr))
    for what, names, min_n in (("metric", metrics, 10), ("journal field", fields, 6),
                               ("rule", rules, 10), ("change reason", reasons, 3)):
        if len(names) < min_n:
            fail("found only %d %ss in the sources: the pattern is out of date" % (len(names), what))
        for n in sorted(names):
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(n), text):
                fail("%s %s is not documented in %s" % (what, n, base))
    if not fail.n:
        print("ok: %d options, %d metrics, %d journal fields, %d rules, %d reasons"
              % (len(opts), len(metrics), len(fields), len(rules), len(reasons)))
    return 1 if fail.n else 0


# ---- kernel patches ------------------------------------------------------

def cmd_kernel_patches(manifest_path, template, page):
    fail = Failures()
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    items = [it["id"] for it in manifest.get("items", [])]
    if not items:
        fail("%s has no items" % manifest_path)
    roff = read(page)
    subsections = set(re.findall(r"^\.SS \"?([^\"\n]+)\"?$", roff, re.M))
    subsections = {s.replace("\\-", "-").replace("\\&", "") for s in subsections}
    for i in items:
        if i not in subsections:
            fail("manifest item %s is not a subsection of %s" % (i, os.path.basename(page)))

    detection = scd_terms(scd_sections(read(template)).get("DETECTION", []))
    body = "\n".join("\n".join(b) for b in detection.values())
    methods = {d["method"] for it in manifest.get("items", []) for d in it.get("detect", [])}
    probes = {d["probe"] for it in manifest.get("items", []) for d in it.get("detect", [])
              if d.get("method") == "behaviour"}
    for m in sorted(methods):
        if m not in detection:
            fail("detection method %s is used by the manifest but not described in DETECTION" % m)
    for pr in sorted(probes):
        if not re.search(r"\*%s\*" % re.escape(pr), body):
            fail("behaviour probe %s is used by the manifest but not described in DETECTION" % pr)
    if not fail.n:
        print("ok: %d items, methods %s, probes %s" % (len(items), " ".join(sorted(methods)),
                                                        " ".join(sorted(probes))))
    return 1 if fail.n else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    table = {
        "lint": (cmd_lint, None),
        "render": (cmd_render, None),
        "config-keys": (cmd_config_keys, 2),
        "bwgovctl": (cmd_bwgovctl, 3),
        "bwgovd": (cmd_bwgovd, -6),
        "kernel-patches": (cmd_kernel_patches, 3),
    }
    if cmd not in table:
        print("unknown check %r" % cmd)
        return 2
    fn, n = table[cmd]
    if n is None:
        return fn(args)
    # A negative count: at least that many (the last one repeats).
    if (n >= 0 and len(args) != n) or (n < 0 and len(args) < -n):
        print("%s takes %s%d arguments" % (cmd, "at least " if n < 0 else "", abs(n)))
        return 2
    return fn(*args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
