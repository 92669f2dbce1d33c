# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwgov benchmark harness (issue 6): run workloads in real cgroups under
static limits, a Koordinator-style comparator and bwgovd, side by side, and
report medians, ranges and ratios to static. Entry point: tests/bench/run."""
