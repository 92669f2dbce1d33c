# SPDX-License-Identifier: LGPL-2.1-or-later
"""Medians and ranges over repetitions."""

import statistics


def summary(values):
    """{"median", "min", "max", "n"} of the non-None values, or None."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def fmt_num(x, digits=None):
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if digits is None:
        a = abs(x)
        digits = 0 if a >= 100 else 1 if a >= 10 else 2 if a >= 1 else 3 if a > 0 else 0
    return f"{x:.{digits}f}"


def fmt_summary(s, digits=None, range_=True):
    """"median [min–max]" (no range for a single value)."""
    if s is None:
        return "–"
    m = fmt_num(s["median"], digits)
    if not range_ or s["n"] < 2 or s["min"] == s["max"]:
        return m
    return f"{m} [{fmt_num(s['min'], digits)}–{fmt_num(s['max'], digits)}]"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b
